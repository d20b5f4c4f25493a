@_spi(Replication) import ListStoreCore
import ListMerge

// A SQLite store holds replica lists: their position, outbox and status, and the writes of ListSync's
// replicas, each the store's logic (ListStoreCore) in one transaction of its own.

extension Store: ReplicaStore {
    /// Which source `list` replicates, and up to which version; `nil` for a list that is not a
    /// replica (or does not exist).
    ///
    /// ```swift
    /// let position = try store.replicaSource(of: "inbox")   // e.g. source version 41
    /// ```
    /// - Throws: `StoreError` `.storeNotFound`, `.damaged`, `.io`.
    /// - Complexity: O(1).
    public func replicaSource(of list: String) throws -> ReplicaSource? {
        try reading { try $0.replicaSource(of: list) }
    }

    /// The id this store pushes its local changes under (a lowercase UUID made with the store, made
    /// anew by `advanceEpoch()` and for a copied or restored file).
    ///
    /// ```swift
    /// let client = try store.clientID()
    /// ```
    /// - Throws: `StoreError` `.storeNotFound`, `.damaged`, `.io`.
    /// - Complexity: O(1).
    public func clientID() throws -> String {
        try reading { try $0.clientID() }
    }

    /// The local changes of the replica list `list` that its confirmed state does not hold yet,
    /// oldest first (empty for a list that is not a replica).
    ///
    /// ```swift
    /// try replicaStore.commit(sections, to: "inbox").pendingSeq   // 1: queued
    /// try replicaStore.outbox(of: "inbox").map(\.seq)              // [1]
    /// ```
    /// - Throws: `StoreError` `.storeNotFound`, `.listNotFound`, `.damaged`, `.io`.
    /// - Complexity: O(size of the outbox).
    public func outbox(of list: String) throws -> [OutboxEntry] {
        try reading { try $0.outbox(of: list) }
    }

    /// Where the replica list `list` stands: source, confirmed version, pending and pushed local
    /// changes, the last push's conflicts; `nil` for a list that is not a replica.
    ///
    /// ```swift
    /// if let status = try store.replicaStatus(of: "inbox") { print(status.pending) }
    /// ```
    /// - Throws: `StoreError` `.storeNotFound`, `.listNotFound`, `.damaged`, `.io`.
    /// - Complexity: O(1) plus the size of the last conflict report.
    public func replicaStatus(of list: String) throws -> ReplicaStatus? {
        try reading { try $0.replicaStatus(of: list) }
    }

    /// `replicaSource(of:)`, read off the cooperative thread pool (GRDB's async access).
    public func replicaSource(of list: String) async throws -> ReplicaSource? {
        try await reading { try $0.replicaSource(of: list) }
    }

    /// `clientID()`, read off the cooperative thread pool.
    public func clientID() async throws -> String {
        try await reading { try $0.clientID() }
    }

    /// `outbox(of:)`, read off the cooperative thread pool.
    public func outbox(of list: String) async throws -> [OutboxEntry] {
        try await reading { try $0.outbox(of: list) }
    }

    /// `replicaStatus(of:)`, read off the cooperative thread pool.
    public func replicaStatus(of list: String) async throws -> ReplicaStatus? {
        try await reading { try $0.replicaStatus(of: list) }
    }

    @_spi(Replication) public func replicaHead(of list: String) async throws -> ReplicaHead? {
        guard exists else { return nil }
        return try await reading { try $0.replicaHead(of: list) }
    }

    @_spi(Replication) public func pendingState(of list: String) async throws -> PendingState? {
        guard exists else { return nil }
        return try await reading { try $0.pendingState(of: list) }
    }

    @_spi(Replication) public func commitReplica(
        _ sections: [ListSection], to list: String, source: ReplicaSource, author: String?, message: String?,
        check: @escaping @Sendable (CommitResult) throws -> Void
    ) async throws -> CommitResult {
        try Store.validateListName(list)
        return try await writing(creating: true) {
            try $0.commitReplica(
                to: list, source: source, author: author, message: message, entry: nil, target: .snapshot { _ in sections },
                check: check)
        }
    }

    @_spi(Replication) public func commitReplica(
        _ entry: JournalEntry, to list: String, source: ReplicaSource, check: @escaping @Sendable (CommitResult) throws -> Void
    ) async throws -> CommitResult {
        try Store.validateListName(list)
        return try await writing(creating: true) {
            try $0.commitReplica(
                to: list, source: source, author: entry.author, message: entry.message, entry: entry,
                target: .stages(json: entry.stagesJSON, what: "the stages of source version \(entry.version) of list '\(entry.list)'"),
                check: check)
        }
    }

    @_spi(Replication) public func commitPull(
        _ merged: [ListSection], to list: String, expectedVersion: Int, position: ReplicaSource, previous: ReplicaSource,
        confirmed: [ListSection], confirmedSeqs: [Int], remaining: [(seq: Int, pushedVersion: Int?)],
        conflicts: [Conflict], message: String, check: @escaping @Sendable (CommitResult) throws -> Void
    ) async throws -> CommitResult {
        try Store.validateListName(list)
        return try await writing(creating: true) {
            try $0.commitPull(
                merged, to: list, expectedVersion: expectedVersion, position: position, previous: previous, confirmed: confirmed,
                confirmedSeqs: confirmedSeqs, remaining: remaining, conflicts: conflicts,
                message: message, check: check)
        }
    }

    @_spi(Replication) public func recordPushed(_ answer: PushAnswer, client: String, of list: String) async throws {
        try await writing { try $0.recordPushed(answer, client: client, of: list) }
    }

    @_spi(Replication) public func takeNewClientID(for list: String, replacing id: PushID) async throws -> String {
        try await writing { try $0.takeNewClientID(for: list, replacing: id) }
    }

    @_spi(Replication) public func localCommitGeneration() -> UInt64 {
        commitGeneration()
    }

    @_spi(Replication) public func waitForLocalCommit(unlessGenerationIsNot generation: UInt64, timeout: Duration) async {
        await waitForCommit(after: generation, timeout: timeout)
    }
}

