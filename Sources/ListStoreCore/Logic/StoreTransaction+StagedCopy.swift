import Foundation
import ListJSON

// A paged sync's rows (ListStoreCore's article "Lists of Any Size"): each page lands as rows of the
// sync's staging list, hashed and placed as a commit places them, in the page's own transaction;
// the last transaction of a sync into an empty head makes the staging list's rows the list's and
// writes the journal entry from them a run at a time, so nothing holds the list whole and no row is
// written twice.

/// A record of a copied head on its way into rows (`StoreTransaction.insertCopiedRecords`): a
/// section's, or an element of the section whose record came last, at its position.
///
/// Not API: package-visible for the engines.
package struct CopiedRecord: Sendable {
    /// Whether it is a section's record (otherwise an element's).
    package var isSection: Bool
    /// Its row's position (among the list's sections, or its section's elements).
    package var position: Int64
    /// Its id and content.
    package var item: ListItem
    /// The SHA-256 of its content.
    package var hash: ContentHash
}

extension StoreTransaction {
    /// How many records the last transaction of a copy reads, hashes and writes at once.
    static var copyRun: Int { 4096 }

    /// Writes the records of `page`, the next of the paged sync `sync` of `list` (`sync` as it was
    /// before the page), as rows of the sync's staging list, made by the sync's first page: each
    /// content checked to be canonical JSON and hashed (on two threads), sections and elements at
    /// the positions a commit of the same list gives them, each section's element records kept
    /// (when the engine keeps them, and they are not too many) as they stand at the page's end.
    /// Returns the bytes the page's records add to the copy's journal entry (see
    /// `StagedSync.entryBytes`).
    ///
    /// - Throws: `StoreError.invalidSnapshot` for a content that is not canonical JSON;
    ///   `.invalidArgument` when the sync has landed pages but no staging list (a store that was
    ///   changed under it: the sync starts anew); `.invalidArgument` for more records in one place
    ///   than a store keeps.
    /// - Complexity: O(records of the page and their bytes), plus the elements of the section the
    ///   page goes on with (counted).
    func landRows(of page: ListPage, in sync: StagedSync, of list: String) throws -> Int {
        let records = page.records
        let references = _BlobReferences()
        let hashes = try _ContentChecks.checkedHashes(count: records.count, content: { records[$0].item.content }, references: references) { k in
            "page of list '\(page.list)' after '\(page.after?.description ?? "the start")', record \(k) (id \(records[k].item.id.debugDescription))"
        }
        let name = _Names.staging(list)
        let staging: Int64
        // The section the page goes on with (its row, id, and how many elements it holds), if any.
        var section: (row: Int64, id: String, elements: Int)?
        if sync.records == 0 {
            staging = try insertList(name, createdAt: _Time.iso8601(Date()), keepsDeletedSections: false)
        } else if let id = try listID(named: name) {
            staging = id
            section = try lastSection(listID: staging)
        } else {
            throw StoreError(.invalidArgument, "the paged sync of list '\(list)' has landed \(sync.records) records, but they are not in its store: it starts again")
        }
        try takeBlobReferences(references.all, listID: staging, list: list, checking: false)
        var sections = sync.records - sync.elements
        var elements = section?.elements ?? 0
        let keepsRecords = keepsElementRecords
        // The element records of the open section as they stand (nil: none are kept for it), and
        // those of each section before it that the page wrote to, in order.
        var kept: [UInt8]?
        if keepsRecords, let section { kept = try keptElementRecords(section: section.row) ?? (section.elements == 0 ? [] : nil) }
        var touched: [[UInt8]?] = []
        var entry = section.map { _SectionsWriter.copyEntry(after: sections, open: $0.id, elements: $0.elements) } ?? .copyEntry()
        var entryBytes = 0
        var copied: [CopiedRecord] = []
        copied.reserveCapacity(records.count)
        for (k, (record, hash)) in zip(records, hashes).enumerated() {
            let position: Int64
            if record.isSection {
                position = Int64(sections) * _Positions.spacing
                if k > 0 || section != nil { touched.append(kept) }
                kept = keepsRecords ? [] : nil
                (sections, elements) = (sections + 1, 0)
            } else {
                position = Int64(elements) * _Positions.spacing
                elements += 1
                if kept != nil {
                    _ElementRecords.append(id: record.item.id, hash: hash, to: &kept!)
                    if kept!.count > _ElementRecords.maxKeptBytes { kept = nil }
                }
            }
            guard position < _Positions.limit else { throw StoreError(.invalidArgument, "list '\(list)' has more records in one place than a store keeps") }
            copied.append(CopiedRecord(isSection: record.isSection, position: position, item: record.item, hash: hash))
            entry.add(record)
            entryBytes += entry.drain()
        }
        if !records.isEmpty || section != nil { touched.append(kept) }
        let made = try insertCopiedRecords(copied, listID: staging, section: section?.row)
        guard keepsRecords else { return entryBytes }
        // The sections the page wrote to: the one it went on with (if any), then those it made.
        for (row, records) in zip((section.map { [$0.row] } ?? []) + made, touched) {
            if let records { try keepElementRecords(records, section: row) } else { try forgetElementRecords(sections: [row]) }
        }
        return entryBytes
    }

    /// Makes the complete paged sync `sync` of the replica list `list`, whose head `head` holds
    /// nothing, its head, in this transaction: the staging list's rows become the list's (the
    /// staging list becomes the list, or, when the list has a row, gives it its sections); the
    /// journal entry (one stage inserting every section, as a commit of the same snapshot records
    /// it; its length counted as the pages landed, `StagedSync.entryBytes`) is written in pieces
    /// by `insertJournal(_:listID:digest:stagesCount:stages:)` in one read of the rows, a run of
    /// `copyRun` at a time, their contents hashed (on two threads) into the digest as they go;
    /// then `check` runs with the result. The result's changeset is empty: the journal holds it.
    /// No stored snapshot is written (one due is written by the next commit that is due).
    ///
    /// - Throws: `StoreError` `.versionConflict` (local changes), `.invalidListName`, `.damaged`
    ///   (landed rows that do not make the sync's totals or its entry's length);
    ///   `.invalidSnapshot` when they do not make the version's digest (after `check`, which sees
    ///   the digest they make); what `check` throws.
    /// - Complexity: O(records + their bytes), holding one run of records at a time.
    func commitStagedCopy(
        of list: String, sync: StagedSync, head: StoredHead, source: ReplicaSource, message: String,
        check: (CommitResult) throws -> Void
    ) throws -> CommitResult {
        precondition(head.sections.isEmpty, "a staged copy goes into an empty head")
        if head.listID != 0, try replicaState(listID: head.listID).hasLocalChanges {
            throw StoreError(
                .versionConflict, "list '\(list)' has local changes: a pull rebases them onto the source's head",
                expectedVersion: head.version, currentVersion: head.version)
        }
        if head.listID == 0, let problem = _Names.problem(withNew: list, "list") { throw StoreError(.invalidListName, problem) }
        guard let staging = try listID(named: _Names.staging(list)), let last = try lastSection(listID: staging) else {
            throw StoreError(.damaged, "the landed pages of list '\(list)' are not in its store")
        }
        var listID = head.listID
        var written = 2
        if listID == 0 {
            try renameList(staging, to: list)
            (listID, written) = (staging, written + 1)
        } else {
            try moveSections(of: staging, to: listID)
            try insertListBlobs(listID: listID, hashes: Set(try listBlobs(listID: staging).map(\.hash)), uploaded: false)
            written += sync.sectionCount
        }
        // The entry's end: the last section's, then the stage's.
        var end = _SectionsWriter.copyEntry(after: sync.sectionCount, open: last.id, elements: last.elements)
        end.finish()
        let stagesCount = sync.entryBytes + end.drain()
        let version = head.version + 1
        let now = _Time.iso8601(Date())
        let journal = CommitRows.Journal(
            list: list, version: version, parentVersion: head.version, committedAt: now, author: nil, message: message,
            sectionCount: sync.sectionCount, elementCount: sync.elementCount, stages: _Background(finished: []),
            digesting: _Background(finished: ([], sync.digest)))
        var digest = _DigestBuilder()
        var count = 0
        try insertJournal(journal, listID: listID, digest: sync.digest, stagesCount: stagesCount) { write in
            var entry = _SectionsWriter.copyEntry()
            try forEachHeadRun(listID: listID, runs: Self.copyRun) { run, last in
                let hashes = _TwoThreads.array(count: run.count, threshold: _ContentChecks.parallelThreshold) {
                    (range, base: UnsafeMutablePointer<ContentHash>) in
                    for k in range { (base + k).initialize(to: ContentHash(of: run[k].record.item.content)) }
                }
                for ((_, record), hash) in zip(run, hashes) {
                    digest.add(tag: record.isSection ? 0x53 : 0x45, id: record.item.id, hash: hash)
                    entry.add(record)
                }
                count += run.count
                if last { entry.finish() }
                try write(entry.take())
                try Task.checkCancellation()
                return true
            }
        }
        guard count == sync.sectionCount + sync.elementCount else {
            throw StoreError(.damaged, "the landed pages of list '\(list)' hold \(count) records, not the \(sync.sectionCount + sync.elementCount) of its sync")
        }
        let result = CommitResult(
            list: list, version: version, parentVersion: head.version, changed: true, digest: digest.finish(),
            stageCount: 1, changeCount: sync.sectionCount, changeset: ListChangeset(), rowsWritten: written)
        try check(result)
        guard result.digest == sync.digest else {
            throw StoreError(
                .invalidSnapshot,
                "the landed pages of list '\(list)' make the digest \(result.digest.hex), not the \(sync.digest.hex) of version \(sync.version) of '\(sync.sourceList)'")
        }
        _ = try setHead(listID: listID, version: version, digest: result.digest, journalBytes: stagesCount)
        try setReplicaSource(source, listID: listID, updatedAt: now)
        // The staging list is gone (it is the list now, or has given it its sections, and goes).
        try discardStagedSync(of: list)
        try appendFeed(listID: listID, list: list, version: version, deleted: false)
        // No head is kept: the next commit reads it from the rows.
        try announce(nil, of: list)
        return result
    }
}
