import Foundation

// Lists of any size (ListStoreCore's article "Lists of Any Size"): a list's head read in pages of
// bounded bytes, each with bounded queries, and a replica's paged sync landing page by page as rows
// of a staging list until the last page makes them the replica's, in one transaction.
extension StoreTransaction {
    /// Records of a list's head with the positions of the cursor just after each (`headRecords`).
    package typealias HeadRun = [(after: (section: Int64, element: Int64?), record: ListPage.Record)]

    /// Calls `body` with the records of the head of list `listID` after `start` (`nil`: from the
    /// first), in list order, a run of at most `runs` at a time and at most `total` in all, until
    /// `body` returns `false`; `body` learns whether a run is the last (the records, or `total`,
    /// end with it: a run shorter than asked is the last, and so may be an empty one after a full
    /// run that ended the records).
    /// - Complexity: O(records read), holding one run at a time.
    func forEachHeadRun(
        listID: Int64, after start: (section: Int64, element: Int64?)? = nil, runs: Int, total: Int = .max,
        _ body: (_ run: HeadRun, _ last: Bool) throws -> Bool
    ) throws {
        var (read, after) = (0, start)
        while true {
            let want = min(runs, total - read)
            let run = try headRecords(listID: listID, after: after, limit: want)
            read += run.count
            let last = run.count < want || read == total
            guard try body(run, last), !last else { return }
            after = run.last?.after
        }
    }

    /// The page of `list`'s head after `cursor` (`nil`: the first), at about `maxBytes` of records
    /// (always at least one while records remain). Pages are read at the head: `version`, the
    /// version of the pages before, must still be the head's (without it, the page is the head's
    /// after `cursor`).
    ///
    /// - Throws: `StoreError` `.listNotFound`; `.versionNotFound` when the head is no longer at
    ///   `version`, or for a cursor at no record of it (a paged read starts again at the head);
    ///   `.invalidArgument` for a text that is not a cursor, or a `maxBytes` below 1.
    /// - Complexity: O(records returned), in queries of at most 1,024 records.
    package func page(of list: String, at version: Int?, after cursor: ListPage.Cursor?, maxBytes: Int) throws -> ListPage {
        let info = try listRow(list, locking: false)
        guard maxBytes > 0 else { throw StoreError(.invalidArgument, "a page holds at least 1 byte of records") }
        if let version, version != info.headVersion {
            throw StoreError(
                .versionNotFound,
                "list '\(list)' is at version \(info.headVersion), no longer at \(version): its pages are read at its head, so a paged read starts again there")
        }
        var position = try cursor.map { cursor in
            guard let positions = cursor.positions else { throw StoreError(.invalidArgument, "'\(cursor)' is not the cursor of a page") }
            return positions
        }
        guard let summary = try summaries(of: list).first else { throw StoreError.listNotFound(list, in: location) }
        var page = ListPage(
            list: list, version: info.headVersion, digest: info.headDigest, listID: info.uid, store: try identity(),
            sectionCount: summary.sectionCount, elementCount: summary.elementCount, after: cursor, records: [], next: nil)
        var bytes = 0
        try forEachHeadRun(listID: info.id, after: position, runs: 1024) { run, _ in
            for (after, record) in run {
                if !page.records.isEmpty, bytes + record.size > maxBytes {
                    page.next = position.map { ListPage.Cursor(section: $0.section, element: $0.element) }
                    return false
                }
                page.records.append(record)
                bytes += record.size
                position = after
            }
            return true
        }
        return page
    }

    /// Lands `page` in the paged sync of the replica list `list`, in this transaction: its records
    /// become rows of the sync's staging list (`_Names.staging(_:)`, `landRows`). A first page
    /// (`after` is `nil`) starts the sync anew, discarding any other; any other page must be of the
    /// sync's store, list, version and totals and start where the last landed page ended. `reason`
    /// is recorded with a new sync.
    ///
    /// - Throws: `StoreError.invalidArgument`, with nothing written, for a page that does not follow
    ///   (of another store, list or version, out of order, without a sync under way), or that the
    ///   list's totals say is cut short or too long; `.invalidSnapshot` for a content that is not
    ///   canonical JSON.
    /// - Complexity: O(records of the page and their bytes), plus the elements of the section the
    ///   page goes on with (counted).
    package func stage(_ page: ListPage, of list: String, reason: String) throws -> StagedSync {
        var sync: StagedSync
        if page.after == nil {
            try discardStagedSync(of: list)
            sync = StagedSync(starting: page, reason: reason, startedAt: _Time.iso8601(Date()))
        } else {
            guard let current = try stagedSync(of: list, locking: true) else {
                throw StoreError(.invalidArgument, "list '\(list)' has no paged sync under way: a page after '\(page.after!)' follows nothing")
            }
            guard current.store == page.store, current.sourceList == page.list, current.version == page.version,
                current.digest == page.digest, current.listID == page.listID, current.sectionCount == page.sectionCount,
                current.elementCount == page.elementCount
            else {
                throw StoreError(
                    .invalidArgument,
                    "a page of version \(page.version) of list '\(page.list)' of store \(page.store.uuid) is not of the paged sync of list '\(list)' (version \(current.version) of '\(current.sourceList)' of store \(current.store.uuid))")
            }
            guard current.next == page.after else {
                throw StoreError(
                    .invalidArgument,
                    "a page starting at '\(page.after!)' does not follow the last page landed for list '\(list)' (which ended at '\(current.next?.description ?? "the end")')")
            }
            sync = current
        }
        let total = sync.sectionCount + sync.elementCount
        let elements = page.records.reduce(0) { $0 + ($1.isSection ? 0 : 1) }
        if sync.records == 0, let first = page.records.first, !first.isSection {
            throw StoreError(.invalidArgument, "the first page of list '\(page.list)' starts with an element, not a section")
        }
        guard page.next == nil || !page.records.isEmpty else {
            throw StoreError(.invalidArgument, "a page of list '\(page.list)' holds no record but is not the last")
        }
        guard sync.records + page.records.count <= total, sync.elements + elements <= sync.elementCount,
            sync.records + page.records.count - sync.elements - elements <= sync.sectionCount
        else {
            throw StoreError(.invalidArgument, "the pages of list '\(page.list)' hold more records than its \(sync.sectionCount) sections and \(sync.elementCount) elements")
        }
        guard page.next != nil || sync.records + page.records.count == total else {
            throw StoreError(
                .invalidArgument,
                "the last page of list '\(page.list)' leaves it cut short: \(sync.records + page.records.count) records of \(total)")
        }
        sync.entryBytes += try landRows(of: page, in: sync, of: list)
        sync.records += page.records.count
        sync.elements += elements
        sync.bytes += page.size
        sync.next = page.next
        try writeStagedSync(sync, of: list)
        return sync
    }

    /// The sections the landed pages of `list`'s paged sync make (the first `limit` records of
    /// them), read from its staging list in runs of 4,096; none when no sync is under way.
    /// - Complexity: O(records read).
    package func stagedSections(of list: String, limit: Int = .max) throws -> [ListSection] {
        guard let staging = try listID(named: _Names.staging(list)) else { return [] }
        var sections: [ListSection] = []
        guard limit > 0 else { return sections }
        try forEachHeadRun(listID: staging, runs: 4096, total: limit) { run, _ in
            for (_, record) in run {
                if record.isSection {
                    sections.append(ListSection(model: record.item, elements: []))
                } else {
                    sections[sections.count - 1].elements.append(record.item)
                }
            }
            return true
        }
        return sections
    }

    /// Deletes the paged sync of `list`: its record and its staging list's rows.
    package func discardStagedSync(of list: String) throws {
        if let staging = try listID(named: _Names.staging(list)) {
            try releaseBlobs(listID: staging)
            try deleteRows(of: ListRow(id: staging, name: _Names.staging(list), uid: "", headVersion: 0, headDigest: ListDigest(hex: ""), baseVersion: 0, baseSnapshot: nil))
        }
        try deleteStagedSync(of: list)
    }

    /// Makes the complete paged sync of the replica list `list` its head, with the sync's store,
    /// list and version as its position, and ends the sync, in this transaction. Into an empty head
    /// (a first sync), the staging list's rows become the list's (`commitStagedCopy`: the result's
    /// changeset is then empty, the journal holds it); otherwise this is `commitReplica` with the
    /// staged sections, read whole. `check` runs with the result first and may throw to
    /// write nothing.
    ///
    /// - Throws: `StoreError.invalidArgument` when no complete sync is staged; what
    ///   `commitReplica` throws.
    /// - Complexity: O(records) read into an empty head, holding a run of them at a time; otherwise
    ///   that of `commitReplica` of the staged list.
    package func commitStagedSync(of list: String, message: String, check: (CommitResult) throws -> Void) throws -> CommitResult {
        guard let sync = try stagedSync(of: list, locking: true), sync.isComplete else {
            throw StoreError(.invalidArgument, "list '\(list)' has no complete paged sync to commit")
        }
        let source = ReplicaSource(store: sync.store, list: sync.sourceList, version: sync.version, digest: sync.digest, listID: sync.listID)
        try _Names.checkList(list)
        let head = try lockedHead(of: list)
        if head.sections.isEmpty, sync.sectionCount > 0 {
            // A first sync (or a resync of an empty list): the rows are written as they are read.
            return try commitStagedCopy(of: list, sync: sync, head: head, source: source, message: message, check: check)
        }
        let sections = try stagedSections(of: list)
        return try commitReplica(
            to: list, source: source, author: nil, message: message, entry: nil, target: .snapshot(sections), check: check,
            then: { try discardStagedSync(of: list) })
    }
}
