import Foundation
import ListDiff
import ListJSON
import ListMerge

/// A store that keeps its lists in memory: the store contract of `Store` (SQLite) and
/// `PostgresStore`, by the same logic (this module's `StoreTransaction`), without a file or a
/// server. For tests, SwiftUI previews and short-lived tools; what it holds is gone with it.
///
/// Every method runs on the store's actor, one at a time, so each is atomic; a commit that throws
/// changes nothing. Several references to one `InMemoryStore` are several handles on the same
/// store, as two `Store`s on one file are.
///
/// ```swift
/// let store = InMemoryStore()
/// try await store.commit([ListSection(model: ListItem(id: "s", content: Array("{}".utf8)), elements: [])],
///                        to: "inbox", expectedVersion: 0, author: "preview", message: nil)
/// let head = try await store.snapshot(of: "inbox", at: nil)
/// ```
///
/// Methods have the meaning, results and errors of `ListStoreEngine`'s and `ReplicaStore`'s
/// requirements; `.storeNotFound` and `.io` never occur.
public actor InMemoryStore: ReplicaStore {
    /// `memory:` and the name the store was made with.
    public nonisolated let location: String
    private var tables: InMemoryTables
    private let commits = CommitSignal()

    /// An empty store, with a new identity (a random uuid, epoch 1) and client id.
    ///
    /// ```swift
    /// let store = InMemoryStore(name: "preview")
    /// ```
    /// - Parameter name: what `location` calls it (default: a new uuid).
    /// - Complexity: O(1).
    public init(name: String = UUID().uuidString.lowercased()) {
        location = "memory:\(name)"
        tables = InMemoryTables(
            identity: StoreIdentity(uuid: UUID().uuidString.lowercased(), epoch: 1), clientID: UUID().uuidString.lowercased())
    }

    /// Runs `body` as one transaction: the tables it leaves are kept when it returns, dropped when
    /// it throws.
    private func transaction<T>(_ body: (InMemoryTransaction) throws -> T) throws -> T {
        let transaction = InMemoryTransaction(tables, location: location)
        let value = try body(transaction)
        tables = transaction.tables
        if transaction.changed { commits.notify(path: location) }
        return value
    }

    // MARK: Reads

    /// The store's identity. - Complexity: O(1).
    public func identity() async throws -> StoreIdentity { try transaction { try $0.identity() } }

    /// Bumps the epoch and takes a new client id, as `ListStoreEngine.advanceEpoch()`.
    /// - Complexity: O(1).
    @discardableResult
    public func advanceEpoch() async throws -> StoreIdentity { try transaction { try $0.advanceEpoch() } }

    /// Every list, by name in code point order. - Complexity: O(lists + items).
    public func lists() async throws -> [ListSummary] { try transaction { try $0.lists() } }

    /// One list's summary. - Throws: `StoreError` `.listNotFound`. - Complexity: O(items).
    public func summary(of list: String) async throws -> ListSummary { try transaction { try $0.summary(of: list) } }

    /// The snapshot of `list` at `version` (`nil`: the head).
    /// - Throws: `StoreError` `.listNotFound`, `.versionNotFound`, `.damaged`.
    /// - Complexity: O(n), plus the entries replayed from the nearest stored snapshot.
    public func snapshot(of list: String, at version: Int?) async throws -> ListSnapshot {
        try transaction { try $0.snapshot(of: list, at: version) }
    }

    /// A page of the journal of `list`, as `ListStoreEngine.journal(of:after:limit:maxBytes:)`.
    /// - Throws: `StoreError` `.listNotFound`, `.versionNotFound`.
    /// - Complexity: O(journal) to find the page, plus its entries.
    public func journal(of list: String, after version: Int?, limit: Int, maxBytes: Int) async throws -> JournalPage {
        try transaction { try $0.journal(of: list, after: version, limit: limit, maxBytes: maxBytes) }
    }

    /// The snapshots at two versions and one minimal staged changeset between them.
    /// - Throws: as `snapshot(of:at:)`. - Complexity: that of two snapshots and a diff.
    public func changeset(of list: String, from version: Int, to otherVersion: Int?) async throws
        -> (from: ListSnapshot, to: ListSnapshot, changeset: ListChangeset)
    {
        try transaction { try $0.changeset(of: list, from: version, to: otherVersion) }
    }

    /// About the bytes the store's contents and journals take. - Complexity: O(rows).
    public func sizeInBytes() async throws -> Int {
        let items = tables.sections.values.reduce(0) { $0 + $1.model.content.count }
            + tables.elements.values.reduce(0) { $0 + $1.values.reduce(0) { $0 + $1.item.content.count + $1.item.id.utf8.count } }
        let journal = tables.journal.values.reduce(0) { $0 + $1.values.reduce(0) { $0 + $1.stagesJSON.count } }
        return items + journal + tables.storedSnapshots.values.reduce(0) { $0 + $1.values.reduce(0) { $0 + $1.count } }
    }

    // MARK: Writes

    /// Commits `sections` as the new head of `list`, as `ListStoreEngine.commit`.
    /// - Throws: `StoreError` `.versionConflict`, `.invalidSnapshot`, `.invalidListName`.
    /// - Complexity: O(n + k log k) for n items and k changes.
    @discardableResult
    public func commit(
        _ sections: [ListSection], to list: String, expectedVersion: Int?, author: String?, message: String?
    ) async throws -> CommitResult {
        try transaction {
            try $0.commit(
                to: list, expectedVersion: expectedVersion, author: author, message: message, target: .snapshot { _ in sections })
        }
    }

    /// Changes a copy of the head of `list` and commits it, atomically.
    /// - Throws: what `body` throws (nothing is written), and what `commit` throws.
    /// - Complexity: that of `commit`, plus `body`.
    @discardableResult
    public func edit(
        _ list: String, expectedVersion: Int?, author: String?, message: String?,
        _ body: @Sendable (inout ListDraft<ListItem, ListItem>) throws -> Void
    ) async throws -> CommitResult {
        try withoutActuallyEscaping(body) { body in
            try transaction {
                try $0.commit(
                    to: list, expectedVersion: expectedVersion, author: author, message: message,
                    target: .snapshot { sections in
                        var draft = ListDraft(sections: sections)
                        try body(&draft)
                        return draft.sections
                    })
            }
        }
    }

    /// Merges a replica's push exactly once, as `ListStoreEngine.merge(_:into:)`.
    /// - Throws: `StoreError` `.listNotFound`, `.invalidArgument`, `.pushMismatch`, `.pushOutOfOrder`.
    /// - Complexity: that of the rebase, plus that of `commit`.
    public func merge(_ push: Push, into list: String) async throws -> PushAnswer {
        try transaction { try $0.merge(push, into: list) }
    }

    /// The recorded pushes of `client` to `list` with a sequence number in `seqs`, at most 1,000.
    /// - Throws: `StoreError` `.listNotFound`. - Complexity: O(pushes of the client).
    public func pushes(from client: String, to list: String, seqs: ClosedRange<Int>) async throws -> [PushAnswer] {
        try transaction { try $0.pushes(from: client, to: list, seqs: seqs) }
    }

    /// Registers a consumer of `list` at `version` (default: the base).
    /// - Throws: `StoreError` `.listNotFound`, `.versionNotFound`, `.invalidArgument`. - Complexity: O(consumers).
    @discardableResult
    public func registerConsumer(_ name: String, of list: String, at version: Int?) async throws -> ConsumerInfo {
        try transaction { try $0.setConsumer(name, of: list, version: version, registering: true) }
    }

    /// Moves a registered consumer of `list` to `version`.
    /// - Throws: as `registerConsumer`, and `.invalidArgument` for a consumer that is not registered.
    @discardableResult
    public func acknowledge(consumer name: String, of list: String, version: Int) async throws -> ConsumerInfo {
        try transaction { try $0.setConsumer(name, of: list, version: version, registering: false) }
    }

    /// Removes a consumer; whether it was registered. - Throws: `StoreError` `.listNotFound`.
    @discardableResult
    public func unregisterConsumer(_ name: String, of list: String) async throws -> Bool {
        try transaction { try $0.unregisterConsumer(name, of: list) }
    }

    /// The consumers of `list`, by name. - Throws: `StoreError` `.listNotFound`.
    public func consumers(of list: String) async throws -> [ConsumerInfo] {
        try transaction { try $0.consumers(of: list) }
    }

    /// Drops the journal of `list` up to the base `rule` picks, as `ListStoreEngine.prune`.
    /// - Throws: `StoreError` `.listNotFound`, `.invalidArgument`. - Complexity: O(n + entries removed).
    @discardableResult
    public func prune(_ list: String, _ rule: PruneRule, force: Bool) async throws -> PruneResult {
        try transaction { try $0.prune(list, rule, force: force) }
    }

    /// Replays every list's journal (or `list`'s) against its digests, head rows and stored snapshots.
    /// - Throws: `StoreError` `.listNotFound` for a `list` that does not exist.
    /// - Complexity: O(journals + items).
    public func verify(list: String?, progress: (@Sendable (VerificationProgress) -> Void)?) async throws -> VerificationReport {
        try transaction { try $0.verify(list: list, progress: progress) }
    }

    /// How many commits this store has seen. - Complexity: O(1).
    public nonisolated func commitGeneration() -> UInt64 { commits.generation(of: location) }

    /// Returns when a commit passed `generation`, after `timeout`, or when the task is cancelled.
    public nonisolated func waitForCommit(after generation: UInt64, timeout: Duration) async {
        await commits.wait(path: location, unlessGenerationIsNot: generation, timeout: timeout)
    }

    // MARK: Replica lists

    /// The source and source version of the replica list `list`; `nil` when it is not one.
    public func replicaSource(of list: String) async throws -> ReplicaSource? {
        try transaction { try $0.replicaSource(of: list) }
    }

    /// The id this store pushes its local changes under. - Complexity: O(1).
    public func clientID() async throws -> String { try transaction { try $0.clientID() } }

    /// The local changes of the replica list `list` not yet confirmed, oldest first.
    /// - Throws: `StoreError` `.listNotFound`.
    public func outbox(of list: String) async throws -> [OutboxEntry] {
        try transaction { try $0.outbox(of: list) }
    }

    /// Where the replica list `list` stands; `nil` when it is not one.
    /// - Throws: `StoreError` `.listNotFound`.
    public func replicaStatus(of list: String) async throws -> ReplicaStatus? {
        try transaction { try $0.replicaStatus(of: list) }
    }

    @_spi(Replication) public func replicaHead(of list: String) async throws -> ReplicaHead? {
        try transaction { try $0.replicaHead(of: list) }
    }

    @_spi(Replication) public func pendingState(of list: String) async throws -> PendingState? {
        try transaction { try $0.pendingState(of: list) }
    }

    @_spi(Replication) public func commitReplica(
        _ sections: [ListSection], to list: String, source: ReplicaSource, author: String?, message: String?,
        check: @escaping @Sendable (CommitResult) throws -> Void
    ) async throws -> CommitResult {
        try transaction {
            try $0.commitReplica(
                to: list, source: source, author: author, message: message, entry: nil, target: .snapshot { _ in sections },
                check: check)
        }
    }

    @_spi(Replication) public func commitReplica(
        _ entry: JournalEntry, to list: String, source: ReplicaSource, check: @escaping @Sendable (CommitResult) throws -> Void
    ) async throws -> CommitResult {
        try transaction {
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
        try transaction {
            try $0.commitPull(
                merged, to: list, expectedVersion: expectedVersion, position: position, previous: previous, confirmed: confirmed,
                confirmedSeqs: confirmedSeqs, remaining: remaining, conflicts: conflicts, message: message, check: check)
        }
    }

    @_spi(Replication) public func recordPushed(_ answer: PushAnswer, client: String, of list: String) async throws {
        try transaction { try $0.recordPushed(answer, client: client, of: list) }
    }

    @_spi(Replication) public func takeNewClientID(for list: String, replacing id: PushID) async throws -> String {
        try transaction { try $0.takeNewClientID(for: list, replacing: id) }
    }

    @_spi(Replication) public nonisolated func localCommitGeneration() -> UInt64 { commitGeneration() }

    @_spi(Replication) public nonisolated func waitForLocalCommit(unlessGenerationIsNot generation: UInt64, timeout: Duration) async {
        await waitForCommit(after: generation, timeout: timeout)
    }
}

extension InMemoryStore: _TimeTravelReads {
    package func _snapshotCountingReads(of list: String, at version: Int?) async throws -> (snapshot: ListSnapshot, entriesRead: Int) {
        try transaction { try $0.snapshot(of: try $0.listRow(list, locking: false), at: version) }
    }
}
