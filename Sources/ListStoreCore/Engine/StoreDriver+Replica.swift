import ListDiff
import ListMerge

// The replica lists of a store (`ReplicaStore`) for every driver: their position, outbox and
// status, and the writes of ListSync's replicas, each in one transaction of the driver's.

extension StoreDriver {
    /// Which source `list` replicates, and up to which version; `nil` for a list that is not a
    /// replica (or does not exist).
    ///
    /// ```swift
    /// let position = try await store.replicaSource(of: "inbox")   // e.g. source version 41
    /// ```
    /// - Throws: `StoreError` `.storeNotFound`, `.damaged`, `.io`. - Complexity: O(1).
    public func replicaSource(of list: String) async throws -> ReplicaSource? {
        try await run(.read) { try $0.steps.replicaSource(of: list) }
    }

    /// The id this store pushes its local changes under (a lowercase UUID made with the store, made
    /// anew by `advanceEpoch()` and for a copied or restored SQLite file).
    ///
    /// ```swift
    /// let client = try await store.clientID()
    /// ```
    /// - Throws: `StoreError` `.storeNotFound`, `.damaged`, `.io`. - Complexity: O(1).
    public func clientID() async throws -> String {
        try await run(.read) { try $0.steps.clientID() }
    }

    /// The local changes of the replica list `list` that its confirmed state does not hold yet,
    /// oldest first (empty for a list that is not a replica).
    ///
    /// ```swift
    /// try await replicaStore.outbox(of: "inbox").map(\.seq)   // e.g. [1, 2]
    /// ```
    /// - Throws: `StoreError` `.storeNotFound`, `.listNotFound`, `.damaged`, `.io`.
    /// - Complexity: O(size of the outbox).
    public func outbox(of list: String) async throws -> [OutboxEntry] {
        try await run(.read) { try $0.steps.outbox(of: list) }
    }

    /// Where the replica list `list` stands: source, confirmed version, pending and pushed local
    /// changes, the last push's conflicts; `nil` for a list that is not a replica.
    ///
    /// ```swift
    /// if let status = try await store.replicaStatus(of: "inbox") { print(status.pending) }
    /// ```
    /// - Throws: `StoreError` `.storeNotFound`, `.listNotFound`, `.damaged`, `.io`.
    /// - Complexity: O(1) plus the size of the last conflict report.
    public func replicaStatus(of list: String) async throws -> ReplicaStatus? {
        try await run(.read) { try $0.steps.replicaStatus(of: list) }
    }

    @_spi(Replication) public func replicaHead(of list: String) async throws -> ReplicaHead? {
        do {
            return try await run(.read) { try $0.steps.replicaHead(of: list) }
        } catch let error as StoreError where error.code == .storeNotFound {
            return nil
        }
    }

    @_spi(Replication) public func pendingState(of list: String) async throws -> PendingState? {
        do {
            return try await run(.read) { try $0.steps.pendingState(of: list) }
        } catch let error as StoreError where error.code == .storeNotFound {
            return nil
        }
    }

    @_spi(Replication) public func commitReplica(
        _ sections: [ListSection], to list: String, source: ReplicaSource, author: String?, message: String?,
        check: @escaping @Sendable (CommitResult) throws -> Void
    ) async throws -> CommitResult {
        try _Names.checkList(list)
        return try await run(.create) {
            try $0.steps.commitReplica(
                to: list, source: source, author: author, message: message, entry: nil, target: .snapshot(sections),
                check: { result in try CallerError.passing { try check(result) } })
        }
    }

    @_spi(Replication) public func commitReplica(
        _ entry: JournalEntry, to list: String, source: ReplicaSource, next: JournalEntry?,
        check: @escaping @Sendable (CommitResult) throws -> Void
    ) async throws -> CommitResult {
        try _Names.checkList(list)
        return try await run(.create) {
            try $0.steps.commitReplica(
                to: list, source: source, author: entry.author, message: entry.message, entry: entry,
                target: .stages(json: entry.stagesJSON, what: "the stages of source version \(entry.version) of list '\(entry.list)'"),
                check: { result in try CallerError.passing { try check(result) } }, replayNext: next?.stagesJSON)
        }
    }

    @_spi(Replication) public func reportChangesToDeletedSource(of list: String) async throws -> [Conflict] {
        try await run(.write) { try $0.steps.reportChangesToDeletedSource(of: list) }
    }

    @_spi(Replication) public func setSourceListID(_ id: String, of list: String) async throws {
        try await run(.write) { try $0.steps.setSourceListID(id, of: list) }
    }

    @_spi(Replication) public func replaceReplicaList(
        _ list: String, following previous: String, with sections: [ListSection], source: ReplicaSource, message: String,
        check: @escaping @Sendable (CommitResult) throws -> Void
    ) async throws -> [Conflict]? {
        try _Names.checkList(list)
        return try await run(.create) {
            try $0.steps.replaceReplicaList(
                list, following: previous, with: sections, source: source, message: message,
                check: { result in try CallerError.passing { try check(result) } })
        }
    }

    @_spi(Replication) public func commitPull(
        _ merged: [ListSection], to list: String, expectedVersion: Int, position: ReplicaSource, previous: ReplicaSource,
        confirmed: [ListSection], confirmedSeqs: [Int], remaining: [(seq: Int, pushedVersion: Int?)],
        conflicts: [Conflict], message: String, check: @escaping @Sendable (CommitResult) throws -> Void
    ) async throws -> CommitResult {
        try _Names.checkList(list)
        return try await run(.create) {
            try $0.steps.commitPull(
                merged, to: list, expectedVersion: expectedVersion, position: position, previous: previous, confirmed: confirmed,
                confirmedSeqs: confirmedSeqs, remaining: remaining, conflicts: conflicts,
                message: message, check: { result in try CallerError.passing { try check(result) } })
        }
    }

    @_spi(Replication) public func stagedSync(of list: String) async throws -> StagedSync? {
        do {
            return try await run(.read) { try $0.steps.stagedSync(of: list) }
        } catch let error as StoreError where error.code == .storeNotFound {
            return nil
        }
    }

    @_spi(Replication) public func stage(_ page: ListPage, of list: String, reason: String) async throws -> StagedSync {
        try _Names.checkList(list)
        return try await run(.create) { try $0.steps.stage(page, of: list, reason: reason) }
    }

    @_spi(Replication) public func commitStagedSync(
        of list: String, message: String, check: @escaping @Sendable (CommitResult) throws -> Void
    ) async throws -> CommitResult {
        try _Names.checkList(list)
        return try await run(.create) {
            try $0.steps.commitStagedSync(of: list, message: message, check: { result in try CallerError.passing { try check(result) } })
        }
    }

    @_spi(Replication) public func stagedSections(of list: String, limit: Int) async throws -> [ListSection] {
        do {
            return try await run(.read) { try $0.steps.stagedSections(of: list, limit: limit) }
        } catch let error as StoreError where error.code == .storeNotFound {
            return []
        }
    }

    @_spi(Replication) public func dropStagedSync(of list: String) async throws {
        try await run(.write) { try $0.steps.discardStagedSync(of: list) }
    }

    @_spi(Replication) public func recordPushed(_ answer: PushAnswer, client: String, of list: String) async throws {
        try await run(.write) { try $0.steps.recordPushed(answer, client: client, of: list) }
    }

    @_spi(Replication) public func takeNewClientID(for list: String, replacing id: PushID) async throws -> String {
        try await run(.write) { try $0.steps.takeNewClientID(for: list, replacing: id) }
    }
}
