import ListStoreCore
import ListStoreMigrations
import Logging
import PostgresNIO

/// Named, ordered, sectioned lists with their journals in a PostgreSQL database (postgres-nio): the
/// store contract of `Store` on a server that several processes share (ListStoreServer's article
/// "Running a Server", "Several servers on one PostgreSQL database").
///
/// The store uses a `PostgresClient` (a pool of connections): one the caller runs, as a service of
/// its `ServiceGroup` (``init(client:configuration:)``, what `liststore serve` does), or one of its
/// own that it runs until `close()` (``init(url:)``). Opening migrates the database under an advisory lock, so that several servers may
/// start at once; a database migrated by a newer release, or whose recorded migration differs from
/// this release's, is refused and left untouched. Every method is async; the store's logic (written
/// once in ListStoreCore, as for `Store`) runs on a thread of NIO's thread pool and waits there for
/// each round trip (at most 32 such transactions at once per process), so none blocks a thread of
/// the cooperative pool. Method names, arguments, results and errors are those of `Store`'s async
/// API, and two of PostgreSQL's own: each operation ends within `Configuration.operationTimeout`
/// whatever the database does, with `.unavailable` when the database cannot be reached, restarts,
/// ends the session or holds a lock past `Configuration.lockTimeout` (nothing was changed), or
/// `.outcomeUnknown` when the connection was lost after the commit was sent (it may have landed).
///
/// ```swift
/// let store = try await PostgresStore(url: "postgres://postgres@127.0.0.1:5432/liststore")
/// for list in try await store.lists() { print(list.name, list.version, list.digest) }
/// let head = try await store.snapshot(of: "inbox")
/// await store.close()
/// ```
public final class PostgresStore: Sendable {
    /// Where the store is, without a password: `postgres://user@host:port/database`.
    public let location: String
    let client: PostgresClient
    let logger: Logger
    private let running: Task<Void, Never>?
    /// The head of each list this store committed last, with the epoch it was committed in: a
    /// commit that finds the list's row at that version, digest and epoch diffs against it instead
    /// of reading the list's rows again.
    let heads = _Locked([String: (epoch: Int, head: StoredHead)]())
    /// The commits this store learned of: its own, and those `NOTIFY` announced (see
    /// `commitGeneration()`).
    let commits = CommitSignal()
    /// The rows written since the tables were last analyzed, and the `ANALYZE` under way (see
    /// `wrote(rows:)`).
    let statistics = _Locked(Statistics())
    /// The task that listens for other processes' commits, started by the first who asks; `nil`
    /// forever once the store is closed.
    let listener = _Locked<(task: Task<Void, Never>?, closed: Bool)>((nil, false))
    /// Whether the store listens for commits: only with two pooled connections or more, since the
    /// listener holds one.
    let listens: Bool
    /// Whether opening makes a database without tables an empty store.
    let createsStore: Bool
    /// The bound of each operation (`Configuration.operationTimeout`).
    let operationTimeout: Duration

    /// The advisory lock that migrations hold.
    static let migrationLock: Int64 = 0x4C49_5354

    /// The schema version this release writes (the number of `Migrations/postgres` files).
    public static var schemaVersion: Int { SchemaMigration.postgres.count }

    /// Connects to the database at `url` (see `Configuration.init(url:logger:)`) and migrates it.
    ///
    /// ```swift
    /// let store = try await PostgresStore(url: "postgres://postgres@127.0.0.1:5432/liststore")
    /// defer { Task { await store.close() } }
    /// ```
    /// - Throws: `StoreError` `.invalidArgument` (not a PostgreSQL URL), `.notAStore` (the database
    ///   holds other tables and no ListStore migration record), `.unsupportedSchema` (migrated by a
    ///   newer release, or its recorded migration differs), `.io` (the server cannot be reached, or
    ///   refuses the database, role or password: at once, with the server's reason; a server that
    ///   does not answer, after `Configuration.openTimeout`). Nothing is changed by a failed open.
    /// - Complexity: a few round trips when the schema is current; the migrations otherwise.
    public convenience init(url: String) async throws {
        try await self.init(configuration: Configuration(url: url))
    }

    /// Connects with `configuration` and migrates the database, as `init(url:)`.
    ///
    /// ```swift
    /// var configuration = try PostgresStore.Configuration(url: url)
    /// configuration.postgres.options.maximumConnections = 4
    /// let store = try await PostgresStore(configuration: configuration)
    /// ```
    /// - Throws: as `init(url:)`.
    public convenience init(configuration: Configuration) async throws {
        let client = configuration.makeClient()
        let running = Task { await client.run() }
        do {
            try await self.init(client: client, running: running, configuration: configuration)
        } catch {
            // The client stops once its connection attempts end; a failed open does not wait for it.
            running.cancel()
            throw error
        }
    }

    /// Opens the store on `client`, which the caller runs (as a service of its `ServiceGroup`, as
    /// postgres-nio recommends) for as long as it uses the store, and migrates the database, as
    /// `init(url:)`. The store does not stop the client: `close()` ends its own work only.
    ///
    /// ```swift
    /// let configuration = try PostgresStore.Configuration(url: url)
    /// let client = configuration.makeClient()
    /// // `client` is one of the services of a running ServiceGroup.
    /// let store = try await PostgresStore(client: client, configuration: configuration)
    /// ```
    /// - Parameters:
    ///   - client: a client made with `configuration.postgres`, running or about to run.
    ///   - configuration: the store's configuration (its `postgres` made `client`).
    /// - Throws: as `init(url:)`.
    /// - Complexity: as `init(url:)`.
    public convenience init(client: PostgresClient, configuration: Configuration) async throws {
        try await self.init(client: client, running: nil, configuration: configuration)
    }

    private init(client: PostgresClient, running: Task<Void, Never>?, configuration: Configuration) async throws {
        self.client = client
        self.logger = configuration.logger
        self.location = configuration.location
        self.listens = configuration.postgres.options.maximumConnections >= 2
        self.createsStore = configuration.createsStore
        self.operationTimeout = configuration.operationTimeout
        self.running = running
        try await Self.checkSession(configuration, location: location, timeout: min(configuration.openTimeout, .seconds(10)))
        try await within(configuration.openTimeout) { store in
            // Servers starting at once migrate one by one, under an advisory lock ("LIST").
            try await store.writing(within: configuration.openTimeout) { transaction in
                // Migrations are bounded by the open's timeout, not by those of operations.
                try transaction.query("SET LOCAL lock_timeout = 0")
                try transaction.query("SET LOCAL statement_timeout = 0")
                try transaction.query("SELECT pg_advisory_xact_lock(\(Self.migrationLock))")
                try transaction.migrate(creating: store.createsStore)
            }
        }
    }

    deinit {
        listener.withLock { $0.task?.cancel() }
        running?.cancel()
    }

    /// Closes the store: stops its listener and, when it runs a client of its own (`init(url:)`), that
    /// client, waiting for it to stop; calls after it then fail with `.io`. A client the caller runs
    /// is left running, and so the store's methods go on working on it.
    ///
    /// ```swift
    /// await store.close()
    /// ```
    /// - Complexity: the time the open connections take to close.
    public func close() async {
        let listening = listener.withLock { listener in
            listener.closed = true
            return listener.task
        }
        listening?.cancel()
        await listening?.value
        let analyzing = statistics.withLock { $0.running }
        analyzing?.cancel()
        await analyzing?.value
        running?.cancel()
        await running?.value
    }

    // MARK: Connections

    /// Runs `body` on this store, giving up after `limit` with `.io` ("no answer") or when the task
    /// is cancelled (`CancellationError`), without waiting for `body` to end: a connection attempt
    /// that postgres-nio retries does not end when it is cancelled.
    private func within(_ limit: Duration, _ body: @escaping @Sendable (PostgresStore) async throws -> Void) async throws {
        guard try await Bounded.run(within: limit, { [self] in try await body(self) }) != nil else {
            throw StoreError(.io, "cannot reach the store at \(location) (no answer within \(limit))")
        }
    }

    /// Runs `body` on a pooled connection within `limit` (default: `operationTimeout`), from the
    /// request for a connection to `body`'s end; maps every error that is not a `StoreError` or a
    /// cancellation to one.
    ///
    /// Past `limit`, the call ends with `.unavailable` (or `.outcomeUnknown` when the commit was
    /// sent), whatever the database and the pool do: a request still waiting for a connection is
    /// withdrawn, and a connection in use is closed, which fails the statement under way, so that
    /// no commit is sent after the call has ended; the pool opens a new connection in its place.
    /// A cancelled caller ends at once too, and its operation as if its time had run out.
    func withConnection<T: Sendable>(
        within limit: Duration? = nil, _ body: @escaping @Sendable (PostgresConnection, PostgresOperation) async throws -> T
    ) async throws -> T {
        try Task.checkCancellation()
        let (client, limit, location) = (client, limit ?? operationTimeout, location)
        let operation = PostgresOperation(limit: limit)
        do {
            return try await _PostgresErrors.mapping(location) {
                // Not a task group: the pool does not always end a cancelled wait for a connection,
                // and a group would wait for it.
                let result = try await Bounded.run(within: limit) {
                    try await client.withConnection { connection in
                        guard operation.start(on: connection) else { throw CancellationError() }
                        defer { operation.end() }
                        return try await body(connection, operation)
                    }
                }
                guard let result else {
                    // The work goes on without a caller: its connection closed, it fails at once.
                    operation.expire()
                    throw CancellationError()
                }
                return result
            }
        } catch let error where operation.expired {
            throw Self.expiry(of: operation, after: limit, at: location, error: error)
        } catch let error as CancellationError {
            // A cancelled caller: its work sends no commit from now on.
            operation.expire()
            throw error
        } catch let error as StoreError where operation.committing && error.code == .unavailable {
            throw StoreError(.outcomeUnknown, "the store at \(location) was lost while the change committed: it may have landed (\(error.message))")
        }
    }

    /// The error of an operation that did not end within `limit`.
    private static func expiry(of operation: PostgresOperation, after limit: Duration, at location: String, error: any Error) -> StoreError {
        if operation.committing {
            return StoreError(.outcomeUnknown, "the store at \(location) did not confirm the commit within \(limit): the change may have landed")
        }
        if !operation.hadConnection {
            return StoreError(.unavailable, "no connection to the store at \(location) within \(limit) (every pooled connection is busy, or the database does not answer); nothing was changed")
        }
        return StoreError(.unavailable, "the store at \(location) did not answer within \(limit); nothing was changed")
    }

    /// Runs `body` in one transaction: `.readOnly` reads one consistent state of the database
    /// (repeatable read); `.writing` commits what `body` wrote when it returns, and rolls it back
    /// when it throws. Within `limit` (default: `operationTimeout`), as `withConnection`.
    func transaction<T: Sendable>(
        _ kind: _TransactionKind, within limit: Duration? = nil, _ body: @escaping @Sendable (PostgresConnection, PostgresOperation) async throws -> T
    ) async throws -> T {
        let (logger, location) = (self.logger, self.location)
        return try await withConnection(within: limit) { connection, operation in
            for statement in kind.begin {
                _ = try await operation.run(PostgresQuery(unsafeSQL: statement), on: connection, logger: logger, location: location).get()
            }
            let value: T
            do {
                value = try await body(connection, operation)
            } catch {
                _ = try? await operation.run("ROLLBACK", on: connection, logger: logger, location: location).get()
                throw error
            }
            // Not once the call has ended (its time ran out, or its caller was cancelled).
            guard operation.commit() else { throw CancellationError() }
            do {
                _ = try await operation.run("COMMIT", on: connection, logger: logger, location: location).get()
            } catch let error as PSQLError where error.code == .server {
                operation.commitRefused()  // the database answered: it did not commit
                throw error
            }
            return value
        }
    }

    /// How a transaction begins.
    enum _TransactionKind {
        case readOnly
        case writing
        /// `writing` whose commit does not wait for its WAL to be flushed (`StoreAccess.writeUnflushed`).
        case writingUnflushed

        /// The statements that begin it.
        var begin: [String] {
            switch self {
            case .readOnly: ["BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"]
            case .writing: ["BEGIN ISOLATION LEVEL READ COMMITTED"]
            case .writingUnflushed: ["BEGIN ISOLATION LEVEL READ COMMITTED", "SET LOCAL synchronous_commit TO OFF"]
            }
        }
    }
}
