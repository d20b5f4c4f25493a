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

    /// `commit(_:to:expectedVersion:author:message:)` off the cooperative thread pool (GRDB's async
    /// access): the diff and the writes run on the store's writer, and commits through one `Store`
    /// land one after another, in the order they were called.
    @discardableResult
    public func commit(
        _ sections: [ListSection], to list: String, expectedVersion: Int? = nil, author: String? = nil,
        message: String? = nil
    ) async throws -> CommitResult {
        try Store.validateListName(list)
        return try await writing(creating: true) {
            try $0.commit(
                to: list, expectedVersion: expectedVersion, author: author, message: message, target: .snapshot { _ in sections })
        }
    }

    /// Commits the snapshot `makeTarget` makes from the head, inside the write transaction, by the
    /// store's logic (`StoreTransaction.commit`); then, in the same transaction, calls `alsoWrite`
    /// (even when nothing changed) with the list's row id and the result. An error thrown by
    /// `alsoWrite` rolls everything back.
    ///
    /// With `stages` (a journal entry's JSON, and what to call it in an error), `makeTarget` is not
    /// called: the stages are applied to the head, and the journal keeps the same JSON.
    ///
    /// With `queueLocalChange` (the default), a change to a replica list is a local change: its
    /// intents are queued in the list's outbox in the same transaction. `checkFirst` runs
    /// in the transaction once the head is locked, before anything is written, and may throw to
    /// write nothing.
    func commit(
        to list: String, expectedVersion: Int?, author: String?, message: String?,
        makeTarget: ([ListSection]) throws -> [ListSection], replaying stages: (json: [UInt8], what: String)? = nil,
        queueLocalChange: Bool = true,
        alsoWrite: ((Database, _ listID: Int64, CommitResult) throws -> Void)? = nil,
        checkFirst: ((Database, StoredHead) throws -> Void)? = nil
    ) throws -> CommitResult {
        try Store.validateListName(list)
        return try writing(creating: true) { transaction in
            try withoutActuallyEscaping(makeTarget) { makeTarget in
                try transaction.commit(
                    to: list, expectedVersion: expectedVersion, author: author, message: message,
                    target: stages.map { .stages(json: $0.json, what: $0.what) } ?? .snapshot(makeTarget),
                    queueLocalChange: queueLocalChange,
                    checkFirst: checkFirst.map { check in { head in try check(transaction.db, head) } },
                    alsoWrite: alsoWrite.map { also in { listID, result in try also(transaction.db, listID, result) } })
            }
        }
    }

    /// Throws unless `name` can name a list: 1 to 1,024 bytes of UTF-8, no control characters.
    static func validateListName(_ name: String) throws {
        if let problem = _Names.problem(with: name, "list") { throw StoreError(.invalidListName, problem) }
    }

    /// Once the write-ahead log has grown past 4 MiB, copies it back into the database file on a
    /// background thread through a connection of its own: a passive checkpoint takes no write lock,
    /// so neither this commit nor the next one waits for it. SQLite's own automatic checkpoint stays
    /// as a backstop at 10,000 pages. The copy runs on a serial dispatch queue of its own (one per
    /// process), never on Swift's cooperative thread pool.
    func checkpointIfLarge() {
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
        Store.checkpoints.async {
            defer { state.withLock { $0.checkpointing = false } }
            var configuration = GRDB.Configuration()
            configuration.journalMode = .default
            guard let queue = try? DatabaseQueue(path: path, configuration: configuration) else { return }
            _ = try? queue.writeWithoutTransaction { db in try db.checkpoint(.passive) }
            try? queue.close()
        }
    }

    /// Where background checkpoints run, one after another.
    private static let checkpoints = DispatchQueue(label: "ListStore.checkpoint", qos: .utility)
}
