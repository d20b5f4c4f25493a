@_spi(Replication) import ListStoreCore
import ListMerge

// A SQLite store holds replica lists: the async variants of the replica reads, off the cooperative
// thread pool as in Store+Async.swift, and the writes of ListSync's replicas.

extension Store: ReplicaStore {
    /// Which source `list` replicates, read off the cooperative thread pool; `nil` for a list that
    /// is not a replica (or does not exist).
    ///
    /// ```swift
    /// let position = try await store.replicaSource(of: "inbox")   // e.g. source version 41
    /// ```
    /// - Throws: `StoreError` `.storeNotFound`, `.io`; `CancellationError` when the task is cancelled
    ///   before the read starts.
    /// - Complexity: O(1).
    public func replicaSource(of list: String) async throws -> ReplicaSource? {
        try await _offPool(reading: { try self.replicaSource(of: list) })
    }

    /// The id this store pushes its local changes under, read off the cooperative thread pool.
    ///
    /// ```swift
    /// let client = try await store.clientID()
    /// ```
    /// - Throws: `StoreError` `.storeNotFound`, `.damaged`, `.io`; `CancellationError`.
    /// - Complexity: O(1).
    public func clientID() async throws -> String {
        try await _offPool(reading: { try self.clientID() })
    }

    /// The local changes of the replica list `list` not yet confirmed, oldest first, read off the
    /// cooperative thread pool.
    ///
    /// ```swift
    /// let seqs = try await store.outbox(of: "inbox").map(\.seq)
    /// ```
    /// - Throws: `StoreError` `.storeNotFound`, `.listNotFound`, `.damaged`, `.io`; `CancellationError`.
    /// - Complexity: O(size of the outbox).
    public func outbox(of list: String) async throws -> [OutboxEntry] {
        try await _offPool(reading: { try self.outbox(of: list) })
    }

    /// Where the replica list `list` stands, read off the cooperative thread pool; `nil` for a list
    /// that is not a replica.
    ///
    /// ```swift
    /// if let status = try await store.replicaStatus(of: "inbox") { print(status.pending) }
    /// ```
    /// - Throws: `StoreError` `.storeNotFound`, `.listNotFound`, `.damaged`, `.io`; `CancellationError`.
    /// - Complexity: O(1) plus the size of the last conflict report.
    public func replicaStatus(of list: String) async throws -> ReplicaStatus? {
        try await _offPool(reading: { try self.replicaStatus(of: list) })
    }

    @_spi(Replication) public func replicaHead(of list: String) async throws -> ReplicaHead? {
        try await _offPool(reading: { try self.replicaHead(of: list) })
    }

    @_spi(Replication) public func pendingState(of list: String) async throws -> PendingState? {
        try await _offPool(reading: { try self.pendingState(of: list) })
    }

    @_spi(Replication) public func commitReplica(
        _ sections: [ListSection], to list: String, source: ReplicaSource, author: String?, message: String?,
        check: @escaping @Sendable (CommitResult) throws -> Void
    ) async throws -> CommitResult {
        try await _offPool(writing: {
            try self.commitReplica(sections, to: list, source: source, author: author, message: message, check: check)
        })
    }

    @_spi(Replication) public func commitReplica(
        _ entry: JournalEntry, to list: String, source: ReplicaSource, check: @escaping @Sendable (CommitResult) throws -> Void
    ) async throws -> CommitResult {
        try await _offPool(writing: { try self.commitReplica(entry, to: list, source: source, check: check) })
    }

    @_spi(Replication) public func commitPull(
        _ merged: [ListSection], to list: String, expectedVersion: Int, position: ReplicaSource, previous: ReplicaSource,
        confirmed: [ListSection], confirmedSeqs: [Int], remaining: [(seq: Int, pushedVersion: Int?)],
        conflicts: [Conflict], message: String, check: @escaping @Sendable (CommitResult) throws -> Void
    ) async throws -> CommitResult {
        try await _offPool(writing: {
            try self.commitPull(
                merged, to: list, expectedVersion: expectedVersion, position: position, previous: previous, confirmed: confirmed,
                confirmedSeqs: confirmedSeqs, remaining: remaining, conflicts: conflicts,
                message: message, check: check)
        })
    }

    @_spi(Replication) public func recordPushed(_ answer: PushAnswer, client: String, of list: String) async throws {
        try await _offPool(writing: { try self.recordPushed(answer, client: client, of: list) })
    }

    @_spi(Replication) public func takeNewClientID(for list: String, replacing id: PushID) async throws -> String {
        try await _offPool(writing: { try self.takeNewClientID(for: list, replacing: id) })
    }

    @_spi(Replication) public func localCommitGeneration() -> UInt64 {
        _StoreFileWatcher.shared?.watch(path)
        return CommitSignal.shared.generation(of: path)
    }

    @_spi(Replication) public func waitForLocalCommit(unlessGenerationIsNot generation: UInt64, timeout: Duration) async {
        _StoreFileWatcher.shared?.watch(path)
        await CommitSignal.shared.wait(path: path, unlessGenerationIsNot: generation, timeout: timeout)
    }
}
