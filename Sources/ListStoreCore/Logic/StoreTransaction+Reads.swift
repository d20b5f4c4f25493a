import ListJSON
import ListMerge

extension StoreTransaction {
    /// Journal entries of `list` after `version` (default: from the oldest retained one), oldest
    /// first, at most `limit` of them and, with `maxBytes`, only as many as fit in that many bytes of
    /// stages JSON, but always at least one, so that a reader paging with `hasMore` makes progress
    /// even past an entry larger than the budget. With a budget, the entries are read only once
    /// their sizes tell that they fit.
    ///
    /// - Throws: `StoreError` `.listNotFound`, `.versionNotFound` (older than the retained
    ///   history, or after the head), `.damaged`.
    /// - Complexity: O(size of the entries returned), plus, with a budget, the sizes of at most
    ///   `limit + 1` entries.
    ///
    /// With `maxEntryBytes`, an entry larger than that is never read: the page ends before it, and
    /// when it would be the page's first, the page holds no entry and names it (`tooLarge`), so that
    /// a reader with that bound resyncs in pages instead.
    package func journal(of list: String, after version: Int?, limit: Int, maxBytes: Int, maxEntryBytes: Int = .max) throws -> JournalPage {
        let info = try listRow(list, locking: false)
        let version = version ?? info.baseVersion
        try info.checkRetained(version)
        let limit = max(0, limit)
        let head = JournalPage.Head(version: info.headVersion, digest: info.headDigest, baseVersion: info.baseVersion)
        let store = try identity()
        let maxBytes = min(maxBytes, maxEntryBytes)
        if maxBytes < .max, limit > 0 {
            // Count the entries that fit by their sizes alone (one past `limit` tells whether more
            // follow), then read only those.
            let sizes = try journalSizes(listID: info.id, after: version, through: info.headVersion, limit: min(limit, Int(Int64.max) - 1) + 1)
            if let first = sizes.first, first > maxEntryBytes {
                var page = JournalPage(entries: [], hasMore: true, listID: info.uid, head: head, store: store)
                page.tooLarge = JournalPage.TooLarge(version: version + 1, bytes: first)
                return page
            }
            var (fitting, bytes, hasMore) = (0, 0, false)
            for size in sizes {
                bytes += size
                if fitting == limit || (fitting > 0 && bytes > maxBytes) {
                    hasMore = true
                    break
                }
                fitting += 1
            }
            return JournalPage(
                entries: try entries(of: info, after: version, through: info.headVersion, limit: fitting), hasMore: hasMore, listID: info.uid,
                head: head, store: store)
        }
        var entries = try entries(of: info, after: version, through: info.headVersion, limit: min(limit, Int(Int64.max) - 1) + 1)
        let hasMore = entries.count > limit
        if hasMore { entries.removeLast() }
        return JournalPage(entries: entries, hasMore: hasMore, listID: info.uid, head: head, store: store)
    }

    /// The pending state of the list `info` names (its position, confirmed state, outbox and the
    /// store's client id, read at one instant), or `nil` when it is not a replica. The confirmed
    /// state is the head while no local change waits.
    /// - Throws: `StoreError` `.damaged` when the confirmed state does not decode.
    package func pendingState(of info: ListRow) throws -> PendingState? {
        guard let position = try replicaSource(listID: info.id) else { return nil }
        let confirmed: [ListSection]
        if let document = try confirmedState(listID: info.id) {
            do {
                confirmed = try SnapshotDocument.sections(decoding: try JSONParser().parse(document))
            } catch {
                throw StoreError(.damaged, "the confirmed state of list '\(info.name)' does not decode: \(error)")
            }
        } else {
            confirmed = try headSections(listID: info.id)
        }
        return PendingState(
            position: position, headVersion: info.headVersion, confirmed: confirmed, outbox: try outbox(of: info),
            clientID: try clientID())
    }

    /// Verifies the list `name`: its journal replays from the base to every stored digest, the head
    /// rows are the head version (and the element records kept beside them are theirs), a replica list's head is its outbox rebased onto its confirmed
    /// state, and every stored snapshot is the version it names (`_JournalReplayCheck`). A list
    /// whose row cannot be read is a failed verification.
    ///
    /// - Throws: only what reading the list's row throws other than a decoding failure.
    /// - Complexity: O(journal + n) for the list's journal and its n items.
    package func verifyList(_ name: String, progress: ((VerificationProgress) -> Void)?) throws -> ListVerification {
        let info: ListRow
        do {
            info = try listRow(name, locking: false)
        } catch {
            return try .unreadable(name, error)
        }
        var check = _JournalReplayCheck(name: name, info: info)
        do {
            let versions = try storedSnapshotVersions(listID: info.id)
            check = _JournalReplayCheck(name: name, info: info, storedSnapshots: versions)
            while check.needsEntries {
                try Task.checkCancellation()
                check.replay(try entries(of: info, after: check.version, through: info.headVersion, limit: 256), progress: progress)
            }
            guard check.checkHeadDigest() else { return check.result }
            let head = try head(of: info)
            let sections = try headSections(listID: info.id)
            check.check(head: head, sections: sections)
            guard check.result.isValid else { return check.result }
            // Kept element records must be the elements' own.
            for (s, section) in head.sections.enumerated() where keepsElementRecords {
                guard let kept = try keptElementRecords(section: head.sectionRows[s]), kept != _ElementRecords.of(section.elements) else { continue }
                check.diverge(at: info.headVersion, "the element records kept for section '\(section.model.id)' are not its elements'")
                return check.result
            }
            if let pending = try pendingState(of: info) { check.check(replica: pending, head: sections) }
            // Each stored snapshot must be the version it names (one read at a time).
            for version in versions where check.result.isValid {
                guard let stored = try storedSnapshot(listID: info.id, after: version - 1, through: version) else { continue }
                check.check(storedSnapshot: stored.version, document: stored.document)
            }
            if check.result.isValid, let problem = try blobProblem(listID: info.id, head: sections, replica: try replicaSource(listID: info.id) != nil) {
                check.diverge(at: info.headVersion, problem)
            }
        } catch let error as CancellationError {
            throw error
        } catch {
            check.diverge(at: check.version + 1, "\(error)")
        }
        return check.result
    }
}
