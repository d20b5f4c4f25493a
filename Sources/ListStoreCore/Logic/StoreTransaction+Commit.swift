import Foundation
import ListDiff
import ListMerge

/// What a commit makes its new head from.
///
/// Not API: package-visible for the engines.
package enum CommitTarget {
    /// A snapshot, committed whole.
    case snapshot([ListSection])
    /// The snapshot a closure makes from the head's sections (read from the rows, contents and all).
    case edit(([ListSection]) throws -> [ListSection])
    /// The stages of a journal entry (its JSON, and what to call it in an error), applied to the
    /// head; the journal keeps the same JSON.
    case stages(json: [UInt8], what: String)
    /// A push rebased onto the head, given the head and a read of its sections: with the contents
    /// of the items a `TouchedItems` names and the others as the head keeps them, or (`nil`) with
    /// every content; `nil` leaves the head as it is. The result carries the rebase's conflicts. It
    /// may be called twice.
    case rebase((StoredHead, _ sections: (TouchedItems?) throws -> [_MergeSection]) throws -> Rebase<_MergeItem>?)
}

extension StoreTransaction {
    /// Commits to `list` in this transaction: locks its head, makes the target, and when it differs
    /// writes the rows that changed, the list's new head, a stored snapshot when one is due
    /// (`_StoredSnapshotPolicy`) and the journal entry; with `queueLocalChange`, a change to a
    /// replica list is also queued in its outbox. Then calls `alsoWrite` (even when nothing changed)
    /// with the list's row id (0 for a list that still has none) and the result, and announces the
    /// new head. `checkFirst` runs once the head is locked, before anything is written. An error
    /// thrown anywhere leaves the transaction to be rolled back.
    ///
    /// `recordedDigest`, when given (a source's journal entry replayed on a replica), is the digest
    /// the new version must have: when it is a well-formed digest it is written with the head and
    /// the journal entry while the target's own digest is still being made. The result carries the
    /// digest made, which `alsoWrite` compares; a commit (or an entry that changes nothing) whose
    /// digest differs throws `.damaged` if `alsoWrite` did not.
    ///
    /// `replayNext`, when given (the stages of a replica's next entry), starts their replay on the
    /// new head on another thread before the transaction commits, for the next commit that replays
    /// them on that head (`_PreparedReplay`): it overlaps this transaction's flush (on engines
    /// whose commit `waitsToCommit`). `replica`: the commit makes a replica list when the list is
    /// new (its deleted sections are not all known: `insertList`). `checksBlobs`: every blob the
    /// contents it brings refer to must be the list's (`takeBlobReferences`); without it (the
    /// source's state a replica takes), the list has them from then on.
    ///
    /// - Throws: `StoreError` `.invalidListName`, `.versionConflict`, `.invalidSnapshot`,
    ///   `.invalidEdit` (stages that do not apply), `.missingBlob`, `.damaged`; what the closures throw.
    /// - Complexity: O(n + k log k) for n items and k changes, plus the rows of the c changed items.
    package func commit(
        to list: String, expectedVersion: Int?, author: String?, message: String?, target making: CommitTarget,
        queueLocalChange: Bool = true, recordedDigest: ListDigest? = nil, checksBlobs: Bool = true,
        checkFirst: ((StoredHead) throws -> Void)? = nil, alsoWrite: ((_ listID: Int64, CommitResult) throws -> Void)? = nil,
        replayNext: [UInt8]? = nil, replica: Bool = false
    ) throws -> CommitResult {
        try _Names.checkList(list)
        // A replayed entry with the digest it must make, on an engine that keeps element records
        // (`_ElementRecords`) and no head in memory: when it moves no section, only the elements of
        // the sections it touches are read. Its stages are decoded once.
        var head: StoredHead
        var decodedStages: ListChangeset?
        if case .stages(let json, _) = making, keepsElementRecords, recordedDigest != nil {
            head = try lockedHead(of: list) {
                decodedStages = try? CommitPlan.stages(of: json)
                return decodedStages.flatMap(_ElementRecords.sections(touchedBy:))
            }
        } else {
            head = try lockedHead(of: list)
        }
        try checkFirst?(head)
        if let expectedVersion, expectedVersion != head.version {
            throw StoreError(
                .versionConflict,
                "version conflict on list '\(list)': expected version \(expectedVersion), the head is \(head.version)",
                expectedVersion: expectedVersion, currentVersion: head.version)
        }
        // The head's contents, read from its rows only when an edit, a merge or a replica's
        // outbox needs them (before anything is written).
        var base: [ListSection]?
        func readBase() throws -> [ListSection] {
            if let base { return base }
            let read = head.listID == 0 ? [] : try headSections(listID: head.listID)
            base = read
            return read
        }
        func unchanged(_ changeset: ListChangeset, conflicts: [Conflict]?) throws -> CommitResult {
            // Nothing is recorded, but a name no list may take is refused all the same.
            if head.version == 0, let problem = _Names.problem(withNew: list, "list") {
                throw StoreError(.invalidListName, problem)
            }
            let unchanged = CommitResult(
                list: list, version: head.version, parentVersion: head.version, changed: false, digest: head.digest,
                stageCount: 0, changeCount: 0, changeset: changeset, rowsWritten: 0, mergeConflicts: conflicts)
            try alsoWrite?(head.listID, unchanged)
            try Self.refuse(recordedDigest, unless: head.digest, version: head.version, of: list)
            return unchanged
        }
        let plan: CommitPlan
        let whole: CommitRows.WholeSections
        let reserved: (reservedRows: [Int64], written: Int)
        var target: [ListSection]?
        var mergeConflicts: [Conflict]?
        // A local change to a replica list (asked once: its outbox is written below).
        var localChange = false
        if case .stages(let json, let what) = making {
            if !head.unloadedSections.isEmpty {
                if let replayed = try CommitPlan.replaying(json, decoded: decodedStages, on: head, describedAs: { what }, reading: nil) {
                    plan = replayed
                } else {
                    // Stages that need a content the head's rows keep elsewhere: the head is read whole.
                    head = try lockedHead(of: list)
                    plan = try CommitPlan.replaying(json, decoded: decodedStages, on: head, describedAs: { what }, reading: readBase)!
                }
            } else {
                plan =
                    try _PreparedReplay.shared.take(json, on: head, at: location)
                    ?? CommitPlan.replaying(json, decoded: decodedStages, on: head, describedAs: { what }, reading: readBase)!
            }
            // A task cancelled before the first write writes nothing (the async SQLite store runs
            // its transactions in the caller's task; elsewhere there is no task to cancel).
            try Task.checkCancellation()
            whole = CommitRows.WholeSections(
                head: head, target: plan.target, contents: plan.contents,
                sectionPairing: (plan.pairing.sectionTargetOf, plan.pairing.sectionSourceOf))
            reserved = try write(whole)
        } else {
            // A local change to a replica list: its outbox intents are made from the contents.
            localChange = try queueLocalChange && head.listID != 0 && replicaSource(listID: head.listID) != nil
            let sections: [ListSection]
            var merged: CommitPlan?
            switch making {
            case .snapshot(let snapshot): sections = snapshot
            case .edit(let edit): sections = try edit(try readBase())
            case .rebase(let rebasing):
                // A merge reads the contents its intents touch, and keeps the others as the head
                // does (`_MergeItem`), unless the list is a replica. When its rebase asks for a
                // content it did not read, or its changeset needs one (repeated ids paired
                // otherwise), it merges again with every content.
                let merge = _MergeContext(head: head.sections)
                var readsEveryContent = localChange
                func rebased() throws -> Rebase<_MergeItem>? {
                    try rebasing(head) { touched in
                        guard let touched, !readsEveryContent, head.listID != 0 else { return [_MergeSection](try readBase()) }
                        return try self.mergeSections(of: head, readingContentsOf: touched, in: merge)
                    }
                }
                guard var rebase = try rebased() else { return try unchanged(ListChangeset(), conflicts: nil) }
                if !readsEveryContent {
                    if !merge.missed { merged = CommitPlan.diffing(head, to: rebase.snapshot.commitTarget, snapshot: nil) }
                    if merged == nil {
                        readsEveryContent = true
                        guard let again = try rebased() else { return try unchanged(ListChangeset(), conflicts: nil) }
                        rebase = again
                    }
                }
                mergeConflicts = rebase.conflicts
                sections = merged == nil ? rebase.snapshot.listSections! : []
            case .stages: preconditionFailure("handled above")
            }
            if localChange { _ = try readBase() }
            try Task.checkCancellation()
            if let merged {
                plan = merged
                whole = CommitRows.WholeSections(
                    head: head, target: plan.target, contents: plan.contents,
                    sectionPairing: (plan.pairing.sectionTargetOf, plan.pairing.sectionSourceOf))
                reserved = try write(whole)
            } else {
                let sections = sections
                target = sections
                // The head holds hashes, not contents: every content is fingerprinted, or hashed
                // when the head's items have no fingerprints (read from rows); then the elements are
                // diffed on another thread while sections that come or go whole are written.
                let hashed = CommitContents.of(sections, hashing: !head.fingerprinted)
                let diffing = _Background { [head] in CommitPlan.diffing(head, to: hashed, snapshot: sections)! }
                whole = CommitRows.WholeSections(head: head, target: hashed.sections, contents: hashed.contents, sectionPairing: nil)
                let wroteWhole = Result { try write(whole) }
                plan = diffing.wait()
                reserved = try wroteWhole.get()
            }
        }
        let changeset = plan.changeset
        guard !changeset.isEmpty else { return try unchanged(changeset, conflicts: mergeConflicts) }
        let rows = try CommitRows(
            plan, whole: whole, reservedRows: reserved.reservedRows, head: head, list: list,
            committedAt: _Time.iso8601(Date()), author: author, message: message)
        if head.version == 0, let problem = _Names.problem(withNew: list, "list") {
            throw StoreError(.invalidListName, problem)
        }
        var written = reserved.written
        var listID = head.listID
        if listID == 0 {
            listID = try insertList(list, createdAt: rows.journal.committedAt, keepsDeletedSections: !replica)
            written += 1
        }
        written += try write(rows, listID: listID)
        try takeBlobReferences(whole.references.all, listID: listID, list: list, checking: checksBlobs)
        if keepsElementRecords { try forgetElementRecords(sections: Array(rows.sectionsWithChangedElements)) }
        // The sections it deletes are kept by id: a merge tells them from sections the list never had.
        let deletedSections = head.sections.indices.filter { whole.sectionPairing.targetOf[$0] < 0 }.map { head.sections[$0].model.id }
        if !deletedSections.isEmpty { try insertDeletedSections(listID: listID, ids: deletedSections) }
        var journal = rows.journal
        if !head.unloadedSections.isEmpty {
            // The target holds the elements of the sections read: its digest and element count take
            // the other sections' kept records.
            let made = rows.head(listID: listID)
            var (digest, elementCount) = try digestKeepingRecords(
                of: made.sections, sectionRows: made.sectionRows, unloaded: head.unloadedSections)
            if let recordedDigest, digest != recordedDigest {
                // Kept records are a cache of the rows: before the entry is refused, its digest is
                // made from the rows (and the records kept again from them).
                (digest, elementCount) = try digestKeepingRecords(
                    of: made.sections, sectionRows: made.sectionRows, unloaded: head.unloadedSections, trustingKept: false)
            }
            journal.elementCount = elementCount
            journal.digesting = _Background(finished: (made.sections, digest))
        }
        let stagesJSON = journal.stagesJSON
        // A replayed entry's digest is known: the rows take it while the target's is made (one that
        // is not a digest at all waits for the target's, and is then refused as not the same).
        let recorded = recordedDigest.flatMap { $0.isWellFormed ? $0 : nil } ?? journal.digest
        let point = try setHead(listID: listID, version: journal.version, digest: recorded, journalBytes: stagesJSON.count)
        written += 1
        if _StoredSnapshotPolicy.isDue(
            version: journal.version, pointVersion: point.snapshotVersion, bytesSince: point.bytesSinceSnapshot,
            elementCount: journal.elementCount)
        {
            if plan.snapshot == nil, writesInPieces {
                // The target's contents are not at hand (a replayed entry, a merged push): they are
                // read back from the rows just written, a run at a time, and written in pieces.
                try insertStoredSnapshotReadingRows(of: list, listID: listID, version: journal.version, digest: recorded)
            } else {
                // An engine that gathers the document reads the rows in one go (fewer round trips).
                let sections = try plan.snapshot ?? headSections(listID: listID)
                let snapshot = ListSnapshot(list: list, version: journal.version, digest: recorded, sections: sections)
                try insertStoredSnapshot(document: snapshot.documentJSON, version: journal.version, listID: listID)
            }
            written += 2
        }
        try insertJournal(journal, listID: listID, stagesJSON: stagesJSON, digest: recorded)
        written += 1
        let digest = journal.digest
        var result = CommitResult(
            list: list, version: journal.version, parentVersion: head.version, changed: true, digest: digest,
            stageCount: changeset.count, changeCount: changeset.counts.total, changeset: changeset, rowsWritten: written,
            mergeConflicts: mergeConflicts)
        if localChange, let target {
            result.pendingSeq = try queueIfReplica(
                listID: listID, base: base, target: target, version: result.version, author: author, message: message)
        }
        try alsoWrite?(listID, result)
        try Self.refuse(recordedDigest, unless: digest, version: journal.version, of: list)
        try appendFeed(listID: listID, list: list, version: journal.version, deleted: false)
        // A head read in part is not kept: the next commit reads it again.
        let newHead = head.unloadedSections.isEmpty ? rows.head(listID: listID) : nil
        if let replayNext, let newHead, waitsToCommit { _PreparedReplay.shared.prepare(replayNext, on: newHead, at: location) }
        try announce(newHead, of: list)
        return result
    }

    /// Throws `.damaged` when a replayed entry was to make version `version` with digest `recorded`
    /// and its target has `made`.
    private static func refuse(_ recorded: ListDigest?, unless made: ListDigest, version: Int, of list: String) throws {
        guard let recorded, recorded != made else { return }
        throw StoreError(.damaged, "version \(version) of list '\(list)' has digest \(made), not the \(recorded) it was to have")
    }

    /// Queues a change of the list `listID` in its outbox when it is a replica list, and returns its
    /// sequence number; keeps the confirmed state (the head before the change, `base`, read before
    /// the change was written) when no local change waited until now.
    /// - Throws: `.damaged` for a replica list without `base`.
    /// - Complexity: O(n + k) for the n items of `base` and `target` and the k intents.
    package func queueIfReplica(
        listID: Int64, base: [ListSection]?, target: [ListSection], version: Int, author: String?, message: String?
    ) throws -> Int? {
        guard let slot = try takeOutboxSeq(listID: listID) else { return nil }
        guard let base else { throw StoreError(.damaged, "a local change to a replica list was written without its base") }
        if !slot.confirmedKept {
            // The head equalled the confirmed state until now.
            let confirmed = ListSnapshot(list: "", version: slot.version, digest: slot.digest, sections: base)
            try keepConfirmed(confirmed.documentJSON, listID: listID)
        }
        let intents = Array(Intent.jsonValue(Intent.changes(from: base, to: target)).serialized().utf8)
        try insertOutbox(
            listID: listID, seq: slot.seq, intentsJSON: intents, author: author, message: message,
            createdAt: _Time.iso8601(Date()), localVersion: version)
        return slot.seq
    }
}
