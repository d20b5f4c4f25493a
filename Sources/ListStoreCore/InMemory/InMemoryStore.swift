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
public actor InMemoryStore: StoreDriver {
    /// `memory:` and the name the store was made with.
    public nonisolated let location: String
    private var tables: InMemoryTables
    private let commits = CommitSignal()
    private let pins = _PinnedVersions<InMemoryTables>()

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

    /// Runs `body` as one transaction on the store's actor: the tables it leaves are kept when it
    /// returns, dropped when it throws. - Complexity: that of `body`, the tables copied on write.
    @_spi(StoreDriver)
    public func transaction<T: Sendable>(
        _ access: StoreAccess, _ body: @escaping @Sendable (DriverTransaction) throws -> T
    ) async throws -> T {
        try Task.checkCancellation()
        let transaction = InMemoryTransaction(tables, location: location)
        let value = try body(DriverTransaction(transaction))
        tables = transaction.tables
        if transaction.changed { commits.notify(path: location) }
        return value
    }

    /// A page of `list` (`ListStoreEngine.page(of:at:after:maxBytes:)`): pages stay at their
    /// version while commits land, read in the tables as the first page found them (kept as
    /// `Store`'s snapshots are).
    /// - Complexity: that of a page; the tables kept are copied on the next write.
    public func page(of list: String, at version: Int?, after cursor: ListPage.Cursor?, maxBytes: Int) async throws -> ListPage {
        // The tables as this call found them: a consistent state (the actor may run other calls
        // while this one waits).
        let current = tables
        return try await page(
            of: list, at: version, after: cursor, maxBytes: maxBytes, pins: pins, pin: { current },
            reading: { [location] tables, body in try body(InMemoryTransaction(tables, location: location)) })
    }

    /// About the bytes the store's contents and journals take. - Complexity: O(rows).
    public func sizeInBytes() async throws -> Int {
        let items = tables.sections.values.reduce(0) { $0 + $1.model.content.count }
            + tables.elements.values.reduce(0) { $0 + $1.values.reduce(0) { $0 + $1.item.content.count + $1.item.id.utf8.count } }
        let journal = tables.journal.values.reduce(0) { $0 + $1.values.reduce(0) { $0 + $1.stagesJSON.count } }
        return items + journal + tables.storedSnapshots.values.reduce(0) { $0 + $1.values.reduce(0) { $0 + $1.count } }
    }

    /// How many commits this store has seen. - Complexity: O(1).
    public nonisolated func commitGeneration() -> UInt64 { commits.generation(of: location) }

    /// Returns when a commit passed `generation`, after `timeout`, or when the task is cancelled.
    public nonisolated func waitForCommit(after generation: UInt64, timeout: Duration) async {
        await commits.wait(path: location, unlessGenerationIsNot: generation, timeout: timeout)
    }

    @_spi(Replication) public nonisolated func localCommitGeneration() -> UInt64 { commitGeneration() }

    @_spi(Replication) public nonisolated func waitForLocalCommit(unlessGenerationIsNot generation: UInt64, timeout: Duration) async {
        await waitForCommit(after: generation, timeout: timeout)
    }
}


