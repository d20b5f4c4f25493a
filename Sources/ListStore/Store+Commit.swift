import Foundation
import GRDB
import ListDiff
import ListMerge

extension Store {
    /// Records `sections` as the new head of `list`: diffs them against the head and writes the rows
    /// that changed and the journal entry (the staged changeset, with the content of inserted and
    /// updated items) in one transaction. A snapshot equal to the head writes nothing.
    ///
    /// ```swift
    /// let result = try store.commit(sections, to: "inbox", expectedVersion: 7, author: "ana")
    /// if result.changed { print("version", result.version, "in", result.stageCount, "stages") }
    /// ```
    ///
    /// - Parameters:
    ///   - sections: the whole new snapshot. Contents must be canonical JSON (`ListItem(id:json:)`
    ///     makes it so).
    ///   - list: the list's name (created by its first commit): 1 to 1,024 bytes of UTF-8 without
    ///     control characters; a new list's name must also be in NFC and hold no invisible
    ///     formatting characters (bidirectional controls, zero-width spaces), so no two lists print alike.
    ///   - expectedVersion: when given, the commit happens only if the head is this version (0 for a
    ///     list that has none yet).
    ///   - author: optional, recorded in the journal.
    ///   - message: optional, recorded in the journal.
    /// - Returns: the new version, or the unchanged head when nothing changed.
    /// - Throws: `StoreError` `.versionConflict` (with `expectedVersion` and `currentVersion`),
    ///   `.invalidSnapshot`, `.invalidListName`, `.notAStore`, `.unsupportedSchema`, `.damaged`, `.io`.
    ///   Nothing is written when it throws.
    /// - Complexity: O(n + k log k) time for n items and k changes, plus O(c) row writes for c
    ///   changed items (and, rarely, a few neighbours spread again); the head stays in memory between
    ///   commits, so the tables are read only when another connection has committed meanwhile.
    @discardableResult
    public func commit(
        _ sections: [ListSection], to list: String, expectedVersion: Int? = nil, author: String? = nil,
        message: String? = nil
    ) throws -> CommitResult {
        try commit(to: list, expectedVersion: expectedVersion, author: author, message: message) { _ in sections }
    }

    /// Commits the snapshot `makeTarget` makes from the head, inside the write transaction; then, in
    /// the same transaction, calls `alsoWrite` (even when nothing changed) with the list's row id and
    /// the result. An error thrown by `alsoWrite` rolls everything back.
    ///
    /// With `stages` (a journal entry's JSON, and what to call it in an error), `makeTarget` is not
    /// called: the stages are applied to the head, and the journal keeps the same JSON.
    ///
    /// With `merge`, `makeTarget` is not called either: `merge` rebases a push onto the head (or
    /// returns `nil` to leave the head as it is), and the result carries its conflicts.
    ///
    /// With `queueLocalChange` (the default), a change to a replica list is a local change: its
    /// intents are queued in the list's outbox in the same transaction. `checkFirst` runs
    /// in the transaction before anything is read or written, and may throw to write nothing.
    func commit(
        to list: String, expectedVersion: Int?, author: String?, message: String?,
        makeTarget: ([ListSection]) throws -> [ListSection], replaying stages: (json: [UInt8], what: String)? = nil,
        mergingFrom merge: ((Database, StoredHead) throws -> Rebase<ListItem>?)? = nil,
        queueLocalChange: Bool = true,
        alsoWrite: ((Database, _ listID: Int64, CommitResult) throws -> Void)? = nil,
        checkFirst: ((Database, StoredHead) throws -> Void)? = nil
    ) throws -> CommitResult {
        try Store.validateListName(list)
        guard let pool = try pool(creating: true) else {
            throw StoreError(.io, "cannot create a store at \(path)")
        }
        var committed: StoredHead?
        let result = try Store.mapErrors(path: path) {
            try pool.writeWithoutTransaction { db -> CommitResult in
                var result: CommitResult?
                try db.inTransaction(.immediate) {
                    let head = try currentHead(db, list: list)
                    try checkFirst?(db, head)
                    if let expectedVersion, expectedVersion != head.version {
                        throw StoreError(
                            .versionConflict,
                            "version conflict on list '\(list)': expected version \(expectedVersion), the head is \(head.version)",
                            expectedVersion: expectedVersion, currentVersion: head.version)
                    }
                    let changesBefore = db.totalChangesCount
                    let plan: CommitPlan
                    let whole: CommitRows.WholeSections
                    let reservedRows: [Int64]
                    var target: [ListSection]?
                    var mergeConflicts: [Conflict]?
                    if let stages {
                        plan = try CommitPlan.replaying(stages.json, on: head) { stages.what }
                        whole = CommitRows.WholeSections(
                            head: head, target: plan.target,
                            sectionPairing: (plan.pairing.sectionTargetOf, plan.pairing.sectionSourceOf))
                        reservedRows = try _SQLiteCommitWriter.write(whole, db, path: path)
                    } else {
                        // The elements are diffed on another thread while sections that come or go
                        // whole are written here.
                        let sections: [ListSection]
                        if let merge {
                            let rebase = try merge(db, head)
                            sections = rebase?.snapshot ?? head.sections
                            mergeConflicts = rebase?.conflicts
                        } else {
                            sections = try makeTarget(head.sections)
                        }
                        target = sections
                        let diffing = _Background { CommitPlan.diffing(head, to: sections) }
                        whole = CommitRows.WholeSections(head: head, target: sections, sectionPairing: nil)
                        let wroteSections = Result { try _SQLiteCommitWriter.write(whole, db, path: path) }
                        plan = diffing.wait()
                        reservedRows = try wroteSections.get()
                    }
                    let changeset = plan.changeset
                    guard !changeset.isEmpty else {
                        // Nothing is recorded, but a name no list may take is refused all the same.
                        if head.version == 0 { try Store.validateNewListName(list) }
                        result = CommitResult(
                            list: list, version: head.version, parentVersion: head.version, changed: false,
                            digest: head.digest, stageCount: 0, changeCount: 0, changeset: changeset, rowsWritten: 0,
                            mergeConflicts: mergeConflicts)
                        try alsoWrite?(db, head.listID, result!)
                        return .commit
                    }
                    let rows = try CommitRows(
                        plan, whole: whole, reservedRows: reservedRows, head: head, list: list,
                        committedAt: _Time.iso8601(Date()), author: author, message: message)
                    let newHead = try _SQLiteCommitWriter.write(rows, db, head: head, path: path)
                    result = CommitResult(
                        list: list, version: newHead.version, parentVersion: head.version, changed: true, digest: newHead.digest,
                        stageCount: changeset.count, changeCount: changeset.counts.total, changeset: changeset,
                        rowsWritten: db.totalChangesCount - changesBefore, mergeConflicts: mergeConflicts)
                    if queueLocalChange, let target {
                        result!.pendingSeq = try queueIfReplica(
                            db, listID: newHead.listID, base: head, target: target, version: newHead.version,
                            author: author, message: message)
                    }
                    try alsoWrite?(db, newHead.listID, result!)
                    committed = newHead
                    return .commit
                }
                return result!
            }
        }
        if let committed {
            state.withLock { $0.heads[list] = committed }
            CommitSignal.shared.notify(path: path)
            checkpointIfLarge()
        }
        return result
    }

    /// Throws unless `name` can name a list: 1 to 1,024 bytes of UTF-8, no control characters.
    static func validateListName(_ name: String) throws {
        if let problem = _Names.problem(with: name, "list") { throw StoreError(.invalidListName, problem) }
    }

    /// Throws unless `name` can name a new list: also in NFC, without invisible formatting characters.
    static func validateNewListName(_ name: String) throws {
        if let problem = _Names.problem(withNew: name, "list") { throw StoreError(.invalidListName, problem) }
    }

    /// Once the write-ahead log has grown past 4 MiB, copies it back into the database file on a
    /// background thread through a connection of its own: a passive checkpoint takes no write lock,
    /// so neither this commit nor the next one waits for it. SQLite's own automatic checkpoint stays
    /// as a backstop at 10,000 pages.
    private func checkpointIfLarge() {
        var info = stat()
        guard stat(path + "-wal", &info) == 0, info.st_size > 4 << 20 else { return }
        let start = state.withLock { state -> Bool in
            if state.checkpointing { return false }
            state.checkpointing = true
            return true
        }
        guard start else { return }
        let path = self.path
        let state = self.state
        _BlockingThreads.shared.submit {
            defer { state.withLock { $0.checkpointing = false } }
            var configuration = GRDB.Configuration()
            configuration.journalMode = .default
            guard let queue = try? DatabaseQueue(path: path, configuration: configuration) else { return }
            _ = try? queue.writeWithoutTransaction { db in try db.checkpoint(.passive) }
            try? queue.close()
        }
    }
}
