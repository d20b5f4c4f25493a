import Foundation
import ListDiff
import ListStoreCore
import PostgresNIO

extension PostgresStore {
    /// Records `sections` as the new head of `list`, as `Store.commit(_:to:expectedVersion:author:message:)`
    /// does: diffs them against the head and writes the rows that changed and the journal entry (the
    /// staged changeset, with the content of inserted and updated items) in one transaction. A
    /// snapshot equal to the head writes nothing.
    ///
    /// ```swift
    /// let result = try await store.commit(sections, to: "inbox", expectedVersion: 7, author: "ana")
    /// if result.changed { print("version", result.version, "in", result.stageCount, "stages") }
    /// ```
    ///
    /// Writers of one list take turns: the transaction locks the list's row (`SELECT … FOR UPDATE`),
    /// and the first commits of a new list an advisory lock on its name, so two commits with the
    /// same `expectedVersion` never both land. The diff and the hashing run on the stores' own
    /// threads, not on the cooperative pool.
    ///
    /// - Parameters:
    ///   - sections: the whole new snapshot. Contents must be canonical JSON (`ListItem(id:json:)`
    ///     makes it so).
    ///   - list: the list's name (created by its first commit), by `Store`'s rules: 1 to 1,024 bytes
    ///     of UTF-8 without control characters; a new list's name also in NFC and without invisible
    ///     formatting characters.
    ///   - expectedVersion: when given, the commit happens only if the head is this version (0 for a
    ///     list that has none yet).
    ///   - author: optional, recorded in the journal (PostgreSQL text: no U+0000).
    ///   - message: optional, recorded in the journal (PostgreSQL text: no U+0000).
    /// - Returns: the new version, or the unchanged head when nothing changed.
    /// - Throws: `StoreError` `.versionConflict` (with `expectedVersion` and `currentVersion`; also
    ///   when the server reports a serialization failure or a deadlock), `.invalidSnapshot`,
    ///   `.invalidListName`, `.invalidArgument` (an author or message holding U+0000), `.damaged`,
    ///   `.io`; `CancellationError` when the task is cancelled before the transaction starts.
    ///   Nothing is written when it throws.
    /// - Complexity: O(n + k log k) time for n items and k changes; the head's rows are read (O(n))
    ///   and the c changed rows written in a fixed number of round trips (batched statements).
    @discardableResult
    public func commit(
        _ sections: [ListSection], to list: String, expectedVersion: Int? = nil, author: String? = nil,
        message: String? = nil
    ) async throws -> CommitResult {
        try await commit(to: list, expectedVersion: expectedVersion, author: author, message: message) { _ in sections }
    }

    /// Commits the snapshot `makeTarget` makes from the locked head, in one transaction, by the
    /// store's logic (`StoreTransaction.commit`); then, in the same transaction, calls `alsoWrite`
    /// (even when nothing changed) with the list's row id (0 for a list that still has none) and the
    /// result. An error thrown by either rolls everything back.
    ///
    /// With `stages` (a journal entry's JSON, and what to call it in an error), `makeTarget` is not
    /// called: the stages are applied to the head, and the journal keeps the same JSON. With
    /// `queueLocalChange` (the default), a change to a replica list is a local change: its intents
    /// are queued in the list's outbox in the same transaction. `checkFirst` runs in the
    /// transaction once the list's row is locked, before anything is written, and may throw.
    func commit(
        to list: String, expectedVersion: Int?, author: String?, message: String?,
        replaying stages: (json: [UInt8], what: String)? = nil, queueLocalChange: Bool = true,
        checkFirst: (@Sendable (PostgresTransaction, StoredHead) throws -> Void)? = nil,
        makeTarget: @escaping @Sendable ([ListSection]) throws -> [ListSection],
        alsoWrite: (@Sendable (PostgresTransaction, _ listID: Int64, CommitResult) throws -> Void)? = nil
    ) async throws -> CommitResult {
        if let problem = _Names.problem(with: list, "list") { throw StoreError(.invalidListName, problem) }
        for (what, text) in [("author", author), ("message", message)] where text?.utf8.contains(0) == true {
            throw StoreError(.invalidArgument, "a commit's \(what) must not contain U+0000 (PostgreSQL text cannot hold it)")
        }
        return try await writing { transaction in
            try transaction.commit(
                to: list, expectedVersion: expectedVersion, author: author, message: message,
                target: stages.map { .stages(json: $0.json, what: $0.what) } ?? .snapshot(makeTarget),
                queueLocalChange: queueLocalChange,
                checkFirst: checkFirst.map { check in { head in try check(transaction, head) } },
                alsoWrite: alsoWrite.map { also in { listID, result in try also(transaction, listID, result) } })
        }
    }

    /// Runs `body` in one write transaction, on a thread of `PostgresTransaction.threads` (the
    /// store's logic waits there for each round trip); commits what it wrote when it returns and
    /// rolls it back when it throws. Then keeps the heads it wrote and tells of the commit. With
    /// `.readOnly`, `body` reads one consistent state and writes nothing.
    func writing<T: Sendable>(
        _ kind: _TransactionKind = .writing, _ body: @escaping @Sendable (PostgresTransaction) throws -> T
    ) async throws -> T {
        let (value, written) = try await transaction(kind) { connection in
            try await PostgresTransaction.threads.runIfActive { [self] in
                let transaction = PostgresTransaction(self, connection)
                let value = try body(transaction)
                return (value, (heads: transaction.newHeads, changed: !transaction.changedLists.isEmpty))
            }
        }
        // Only a head that is in the database is kept (the transaction committed).
        heads.withLock { heads in
            for (list, head) in written.heads { heads[list] = head }
        }
        if written.changed { commits.notify(path: location) }
        return value
    }

    /// The first key of the advisory locks that first commits of a list take (the second is the
    /// hash of its name); the two-key space does not overlap the migrations' one-key lock.
    static let newListLockClass: Int32 = 0x4C49_5354

    /// The UTF-8 bytes of an identifier, as the BYTEA column holds them.
    static func bytes(_ text: String) -> ByteBuffer { ByteBuffer(bytes: Array(text.utf8)) }
}

extension PostgresStore {
    /// Changes a copy of the head of `list` and commits it, atomically, as `Store.edit` does: `body`
    /// runs inside the transaction that holds the list's row lock, so no other writer commits in
    /// between (keep it short).
    ///
    /// ```swift
    /// try await store.edit("inbox", author: "ana") { draft in
    ///     try draft.moveSection(ExactString("done"), to: 0)
    /// }
    /// ```
    /// - Throws: what `body` throws (nothing is written), and what `commit` throws.
    /// - Complexity: that of `commit`, plus `body`.
    @discardableResult
    public func edit(
        _ list: String, expectedVersion: Int? = nil, author: String? = nil, message: String? = nil,
        _ body: @Sendable (inout ListDraft<ListItem, ListItem>) throws -> Void
    ) async throws -> CommitResult {
        try await withoutActuallyEscaping(body) { body in
            try await commit(to: list, expectedVersion: expectedVersion, author: author, message: message) { sections in
                var draft = ListDraft(sections: sections)
                try _PostgresErrors.callers { try body(&draft) }
                return draft.sections
            }
        }
    }
}
