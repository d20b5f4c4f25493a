/// A store engine that runs the store's logic, written once in this module, in transactions of
/// its own: SQLite's `Store`, `PostgresStore` and `InMemoryStore` are drivers. A driver opens,
/// runs a transaction, locks a list's head, reads and writes rows, and tells of commits; every
/// method of `ListStoreEngine` and `ReplicaStore` that reads or writes the store is a default
/// implementation in this protocol's extensions, the same for every driver.
///
/// ```swift
/// func heads(of store: some StoreDriver) async throws -> [Int] {
///     try await store.lists().map(\.version)   // the same code on SQLite, PostgreSQL and memory
/// }
/// ```
///
/// A driver implements `location`, `commitGeneration()`, `waitForCommit(after:timeout:)`,
/// `sizeInBytes()`, the replica store's local-commit waits, and `transaction(_:_:)`: the row steps
/// the logic is made of are package API (`StoreTransaction`), so the drivers are this package's own.
public protocol StoreDriver: ReplicaStore {
    /// Runs `body` as one transaction of the driver and returns what it returns: committed when it
    /// returns, rolled back when it throws, off Swift's cooperative thread pool; then tells of the
    /// commit when the transaction changed a list.
    ///
    /// - Parameters:
    ///   - access: `.read` sees one consistent state and writes nothing; `.write` locks what it
    ///     writes; `.writeUnflushed` is `.write` made durable by the next; `.create` is `.write` that
    ///     first makes the store when there is none; `.readBytes` and `.writeBytes` are `.read` and
    ///     `.writeUnflushed` of a blob's bytes, which the engine need not cache.
    ///   - body: the store's logic, run with the transaction's row steps.
    /// - Throws: what `body` throws; the driver's failures as `StoreError` (`.storeNotFound`,
    ///   `.io`, `.damaged`, `.versionConflict` for a writer that lost a race); `CancellationError`.
    /// - Complexity: that of `body`, plus one transaction of the engine.
    @_spi(StoreDriver)
    func transaction<T: Sendable>(_ access: StoreAccess, _ body: @escaping @Sendable (DriverTransaction) throws -> T) async throws -> T
}

/// What a driver's transaction may do: read, write, or write and make the store first.
@_spi(StoreDriver)
public enum StoreAccess: Sendable {
    /// Reads one consistent state; writes nothing.
    case read
    /// `read` of bytes read once (a blob's parts), which an engine need not keep in its caches:
    /// SQLite lets the reader's page cache go once it holds more than 4 MiB, so that a blob
    /// streamed through a server does not fill its connections' caches.
    case readBytes
    /// Reads and writes an existing store.
    case write
    /// `write` whose commit the engine may hand to the operating system without waiting for it to
    /// reach stable storage (SQLite's `synchronous = NORMAL`, PostgreSQL's `synchronous_commit =
    /// off`): the next `write` makes it durable with its own, and a power cut before then loses it
    /// whole, never in part. For what a later write acknowledges: the parts of a blob's upload,
    /// whose last write (the blob whole) is flushed.
    case writeUnflushed
    /// `writeUnflushed` of bytes written once (a blob's part, read back once if ever), which an
    /// engine need not keep in its caches, as `readBytes`.
    case writeBytes
    /// Writes, making the store first when there is none.
    case create
}

/// A transaction of a driver, as the store's logic sees it: its row steps.
@_spi(StoreDriver)
public struct DriverTransaction {
    package let steps: any StoreTransaction

    /// The row steps of a driver's transaction. - Complexity: O(1).
    package init(_ steps: any StoreTransaction) { self.steps = steps }
}

/// An error thrown by a closure of the caller's (an edit's body, a replica commit's check) inside
/// a transaction: a driver that maps the errors of its engine passes it through as it is, and the
/// store's methods throw `error`.
package struct CallerError: Error {
    package let error: any Error

    /// Runs `body`, the caller's own code: its errors become `CallerError`s, except cancellation.
    package static func passing<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as CancellationError {
            throw error
        } catch {
            throw CallerError(error: error)
        }
    }
}

extension StoreDriver {
    /// Runs `body` in a transaction of `access`, with the caller's own errors thrown as they were.
    @_spi(StoreDriver)
    public func run<T: Sendable>(_ access: StoreAccess, _ body: @escaping @Sendable (DriverTransaction) throws -> T) async throws -> T {
        do {
            return try await transaction(access, body)
        } catch let error as CallerError {
            throw error.error
        }
    }

    /// `snapshot(of:at:)`, and how many journal entries it read (for tests: the cost of a time
    /// travel is the distance to the nearest stored point, never the history).
    package func snapshotCountingReads(of list: String, at version: Int?) async throws -> (snapshot: ListSnapshot, entriesRead: Int) {
        try await run(.read) { try $0.steps.snapshot(of: try $0.steps.listRow(list, locking: false), at: version) }
    }
}
