import Foundation
import ListJSON

// The last transaction of a paged sync into an empty head (ListStoreCore's article "Lists of Any
// Size"): the staged records become the list's rows a run at a time, the digest and the journal
// entry are made as they go, and nothing holds the list whole.

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
    /// How many staged records the copy reads, hashes and writes at once.
    static var copyRun: Int { 4096 }

    /// Makes the complete paged sync `sync` of the replica list `list`, whose head `head` holds
    /// nothing, its head, in this transaction, reading the staged records in runs of `copyRun`:
    /// each run's contents are hashed (on two threads) and its rows written, the digest and the
    /// journal entry (one stage inserting every section, as a commit of the same snapshot records
    /// it) made as the runs go; the entry is written in pieces by `insertJournal(_:listID:digest:
    /// stagesCount:stages:)`, in a second read of the staged records. The result's changeset is
    /// empty: the journal holds it. No stored snapshot is written (one due is written by the next
    /// commit that is due). `check` runs with the result before the head is written.
    ///
    /// - Throws: `StoreError` `.versionConflict` (local changes), `.invalidListName`, `.damaged`
    ///   (staged records that do not make the sync's totals); what `check` throws.
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
        let now = _Time.iso8601(Date())
        var listID = head.listID
        var written = 0
        if listID == 0 {
            if let problem = _Names.problem(withNew: list, "list") { throw StoreError(.invalidListName, problem) }
            listID = try insertList(list, createdAt: now, keepsDeletedSections: false)
            written += 1
        }
        var digest = _DigestBuilder()
        var entry = _SectionsWriter.copyEntry()
        var (stagesCount, seq, sections, elements) = (0, 0, 0, 0)
        var section: Int64?
        // The element records of the section being copied, kept for it once it ends (when the
        // engine keeps them, and they are not too many).
        var records: [UInt8]?
        let keepsRecords = keepsElementRecords
        // Rows written, the digest fed and the entry's length counted, a run at a time.
        while true {
            let run = try stagedRecords(of: list, from: seq, limit: Self.copyRun)
            let hashes = _TwoThreads.array(count: run.count, threshold: _ContentChecks.parallelThreshold) {
                (range, base: UnsafeMutablePointer<ContentHash>) in
                for k in range { (base + k).initialize(to: ContentHash(of: run[k].item.content)) }
            }
            var copied: [CopiedRecord] = []
            copied.reserveCapacity(run.count)
            // The records of the sections that end in this run, in order.
            var ended: [[UInt8]?] = []
            for (record, hash) in zip(run, hashes) {
                let position: Int64
                if record.isSection {
                    position = Int64(sections) * _Positions.spacing
                    if sections > 0 { ended.append(records) }
                    records = keepsRecords ? [] : nil
                    (sections, elements) = (sections + 1, 0)
                } else {
                    guard sections > 0 else { throw StoreError(.damaged, "the staged records of list '\(list)' start with an element") }
                    position = Int64(elements) * _Positions.spacing
                    elements += 1
                }
                guard position < _Positions.limit else { throw StoreError(.invalidArgument, "list '\(list)' has more records in one place than a store keeps") }
                copied.append(CopiedRecord(isSection: record.isSection, position: position, item: record.item, hash: hash))
                digest.add(tag: record.isSection ? 0x53 : 0x45, id: record.item.id, hash: hash)
                if !record.isSection, records != nil {
                    _ElementRecords.append(id: record.item.id, hash: hash, to: &records!)
                    if records!.count > _ElementRecords.maxKeptBytes { records = nil }
                }
                entry.add(record)
                stagesCount += entry.drain()
            }
            let made = try insertCopiedRecords(copied, listID: listID, section: section)
            // The sections that ended: the one open when the run began (if any), then the run's own.
            for (row, kept) in zip((section.map { [$0] } ?? []) + made, ended) {
                if let kept { try keepElementRecords(kept, section: row) }
            }
            section = made.last ?? section
            written += copied.count
            seq += run.count
            try Task.checkCancellation()
            if run.count < Self.copyRun { break }
        }
        if let section, let records { try keepElementRecords(records, section: section) }
        entry.finish()
        stagesCount += entry.drain()
        guard seq == sync.sectionCount + sync.elementCount else {
            throw StoreError(.damaged, "the staged records of list '\(list)' are \(seq), not the \(sync.sectionCount + sync.elementCount) of its sync")
        }
        let version = head.version + 1
        let result = CommitResult(
            list: list, version: version, parentVersion: head.version, changed: true, digest: digest.finish(),
            stageCount: 1, changeCount: sync.sectionCount, changeset: ListChangeset(), rowsWritten: written + 2)
        try check(result)
        _ = try setHead(listID: listID, version: version, digest: result.digest, journalBytes: stagesCount)
        let journal = CommitRows.Journal(
            list: list, version: version, parentVersion: head.version, committedAt: now, author: nil, message: message,
            sectionCount: sync.sectionCount, elementCount: sync.elementCount, stages: _Background(finished: []),
            digesting: _Background(finished: ([], result.digest)))
        try insertJournal(journal, listID: listID, digest: result.digest, stagesCount: stagesCount) { write in
            var (seq, entry) = (0, _SectionsWriter.copyEntry())
            while true {
                let run = try stagedRecords(of: list, from: seq, limit: Self.copyRun)
                for record in run { entry.add(record) }
                if run.count < Self.copyRun { entry.finish() }
                try write(entry.take())
                seq += run.count
                if run.count < Self.copyRun { break }
            }
        }
        try setReplicaSource(source, listID: listID, updatedAt: now)
        try deleteStagedSync(of: list)
        try appendFeed(listID: listID, list: list, version: version, deleted: false)
        // No head is kept: the next commit reads it from the rows.
        try announce(nil, of: list)
        return result
    }
}
