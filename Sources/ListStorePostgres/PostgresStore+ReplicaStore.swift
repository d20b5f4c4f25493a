import Foundation
import ListJSON
import ListMerge
@_spi(Replication) import ListStoreCore
import PostgresNIO

// A PostgreSQL store holds replica lists as a SQLite store does: the position in
// `replica_source`, the local changes in `outbox`, each written in the transaction of the commit it
// belongs to.

extension PostgresStore: ReplicaStore {
    /// Which source `list` replicates, and up to which version; `nil` for a list that is not a
    /// replica (or does not exist).
    ///
    /// ```swift
    /// let position = try await store.replicaSource(of: "inbox")   // e.g. source version 41
    /// ```
    /// - Throws: `StoreError` `.io`; `CancellationError` when the task is cancelled before the read starts.
    /// - Complexity: O(1), one read-only transaction.
    public func replicaSource(of list: String) async throws -> ReplicaSource? {
        try await writing(.readOnly) { try $0.replicaSource(of: list) }
    }

    /// The id this store pushes its local changes under (a lowercase UUID made with the store, made
    /// anew by `advanceEpoch()`).
    ///
    /// ```swift
    /// let client = try await store.clientID()
    /// ```
    /// - Throws: `StoreError` `.damaged`, `.io`; `CancellationError`.
    /// - Complexity: O(1), one read-only transaction.
    public func clientID() async throws -> String {
        try await writing(.readOnly) { try $0.clientID() }
    }

    /// The local changes of the replica list `list` that its confirmed state does not hold yet,
    /// oldest first (empty for a list that is not a replica).
    ///
    /// ```swift
    /// try await replicaStore.commit(sections, to: "inbox").pendingSeq   // 1: queued
    /// try await replicaStore.outbox(of: "inbox").map(\.seq)              // [1]
    /// ```
    /// - Throws: `StoreError` `.listNotFound`, `.damaged`, `.io`; `CancellationError`.
    /// - Complexity: O(size of the outbox).
    public func outbox(of list: String) async throws -> [OutboxEntry] {
        try await writing(.readOnly) { try $0.outbox(of: list) }
    }

    /// Where the replica list `list` stands: source, confirmed version, pending and pushed local
    /// changes, the last push's conflicts; `nil` for a list that is not a replica.
    ///
    /// ```swift
    /// if let status = try await store.replicaStatus(of: "inbox") { print(status.pending) }
    /// ```
    /// - Throws: `StoreError` `.listNotFound`, `.damaged`, `.io`; `CancellationError`.
    /// - Complexity: O(1) plus the size of the last conflict report.
    public func replicaStatus(of list: String) async throws -> ReplicaStatus? {
        try await writing(.readOnly) { try $0.replicaStatus(of: list) }
    }

    @_spi(Replication) public func replicaHead(of list: String) async throws -> ReplicaHead? {
        try await writing(.readOnly) { try $0.replicaHead(of: list) }
    }

    @_spi(Replication) public func pendingState(of list: String) async throws -> PendingState? {
        try await writing(.readOnly) { try $0.pendingState(of: list) }
    }

    @_spi(Replication) public func commitReplica(
        _ sections: [ListSection], to list: String, source: ReplicaSource, author: String?, message: String?,
        check: @escaping @Sendable (CommitResult) throws -> Void
    ) async throws -> CommitResult {
        try await commitReplica(to: list, source: source, author: author, message: message, entry: nil, check: check) { sections }
    }

    @_spi(Replication) public func commitReplica(
        _ entry: JournalEntry, to list: String, source: ReplicaSource, check: @escaping @Sendable (CommitResult) throws -> Void
    ) async throws -> CommitResult {
        try await commitReplica(to: list, source: source, author: entry.author, message: entry.message, entry: entry, check: check) { [] }
    }

    @_spi(Replication) public func commitPull(
        _ merged: [ListSection], to list: String, expectedVersion: Int, position: ReplicaSource, previous: ReplicaSource,
        confirmed: [ListSection], confirmedSeqs: [Int], remaining: [(seq: Int, pushedVersion: Int?)],
        conflicts: [Conflict], message: String, check: @escaping @Sendable (CommitResult) throws -> Void
    ) async throws -> CommitResult {
        try await writing { transaction in
            try transaction.commitPull(
                merged, to: list, expectedVersion: expectedVersion, position: position, previous: previous, confirmed: confirmed,
                confirmedSeqs: confirmedSeqs, remaining: remaining, conflicts: conflicts, message: message,
                check: { result in try _PostgresErrors.callers { try check(result) } })
        }
    }

    @_spi(Replication) public func recordPushed(_ answer: PushAnswer, client: String, of list: String) async throws {
        try await writing { try $0.recordPushed(answer, client: client, of: list) }
    }

    @_spi(Replication) public func takeNewClientID(for list: String, replacing id: PushID) async throws -> String {
        try await writing { try $0.takeNewClientID(for: list, replacing: id) }
    }

    @_spi(Replication) public func localCommitGeneration() -> UInt64 {
        commits.generation(of: location)
    }

    @_spi(Replication) public func waitForLocalCommit(unlessGenerationIsNot generation: UInt64, timeout: Duration) async {
        await commits.wait(path: location, unlessGenerationIsNot: generation, timeout: timeout)
    }

    // MARK: - Internals

    /// Commits a replica list's new head (`entry`'s stages, or `makeTarget`'s sections) with
    /// `source` as its position (`StoreTransaction.commitReplica`).
    private func commitReplica(
        to list: String, source: ReplicaSource, author: String?, message: String?, entry: JournalEntry?,
        check: @escaping @Sendable (CommitResult) throws -> Void, makeTarget: @escaping @Sendable () -> [ListSection]
    ) async throws -> CommitResult {
        if let problem = _Names.problem(with: list, "list") { throw StoreError(.invalidListName, problem) }
        return try await writing { transaction in
            try transaction.commitReplica(
                to: list, source: source, author: author, message: message, entry: entry,
                target: entry.map { .stages(json: $0.stagesJSON, what: "the stages of source version \($0.version) of list '\($0.list)'") }
                    ?? .snapshot { _ in makeTarget() },
                check: { result in try _PostgresErrors.callers { try check(result) } })
        }
    }

    static func replicaSource(_ row: (String, Int, String, Int, String)) -> ReplicaSource {
        ReplicaSource(store: StoreIdentity(uuid: row.0, epoch: row.1), list: row.2, version: row.3, digest: ListDigest(hex: row.4))
    }
}
