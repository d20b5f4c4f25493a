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
/// API.
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
    /// The task that listens for other processes' commits, started by the first who asks; `nil`
    /// forever once the store is closed.
    let listener = _Locked<(task: Task<Void, Never>?, closed: Bool)>((nil, false))
    /// Whether the store listens for commits: only with two pooled connections or more, since the
    /// listener holds one.
    let listens: Bool
    /// Whether opening makes a database without tables an empty store.
    let createsStore: Bool

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
        self.running = running
        try await Self.checkSession(configuration, location: location, timeout: min(configuration.openTimeout, .seconds(10)))
        try await within(configuration.openTimeout) { store in
            // Servers starting at once migrate one by one, under an advisory lock ("LIST").
            try await store.writing { transaction in
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
        running?.cancel()
        await running?.value
    }

    // MARK: Connections

    /// Runs `body` on this store, giving up after `limit` with `.io` ("no answer") or when the task
    /// is cancelled (`CancellationError`); the work is cancelled then, and the timer ends with the
    /// call.
    ///
    /// Not a task group: a group waits for all its children, and a connection attempt that
    /// postgres-nio retries does not end when it is cancelled. The first of the work, the timer and
    /// a cancellation resumes the caller.
    private func within(_ limit: Duration, _ body: @escaping @Sendable (PostgresStore) async throws -> Void) async throws {
        let pending = _Locked<CheckedContinuation<Void, any Error>?>(nil)
        let tasks = _Locked<[Task<Void, Never>]>([])
        let location = self.location
        // Resumes the caller (once) and cancels the work and the timer.
        let finish: @Sendable (Result<Void, any Error>) -> Void = { result in
            pending.withLock { $0.take() }?.resume(with: result)
            for task in tasks.withLock({ $0 }) { task.cancel() }
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                pending.withLock { $0 = continuation }
                let work = Task { [self] in
                    do {
                        try await body(self)
                        finish(.success(()))
                    } catch {
                        finish(.failure(error))
                    }
                }
                let timer = Task {
                    guard (try? await Task.sleep(for: limit)) != nil else { return }
                    finish(.failure(StoreError(.io, "cannot reach the store at \(location) (no answer within \(limit))")))
                }
                tasks.withLock { $0 = [work, timer] }
                // What finished before the tasks were kept found nothing to cancel.
                if Task.isCancelled { finish(.failure(CancellationError())) }
                if pending.withLock({ $0 == nil }) { finish(.success(())) }
            }
        } onCancel: {
            finish(.failure(CancellationError()))
        }
    }

    /// Runs `body` on a pooled connection; maps every error that is not a `StoreError` or a
    /// cancellation to one.
    func withConnection<T: Sendable>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
        try Task.checkCancellation()
        return try await _PostgresErrors.mapping(location) {
            try await client.withConnection { connection in try await body(connection) }
        }
    }

    /// Runs `body` in one transaction: `.readOnly` reads one consistent state of the database
    /// (repeatable read); `.writing` commits what `body` wrote when it returns, and rolls it back
    /// when it throws.
    func transaction<T: Sendable>(
        _ kind: _TransactionKind, _ body: (PostgresConnection) async throws -> T
    ) async throws -> T {
        try await withConnection { connection in
            try await connection.query(PostgresQuery(unsafeSQL: kind.begin), logger: logger)
            let value: T
            do {
                value = try await body(connection)
            } catch {
                _ = try? await connection.query("ROLLBACK", logger: logger)
                throw error
            }
            try await connection.query("COMMIT", logger: logger)
            return value
        }
    }

    /// How a transaction begins.
    enum _TransactionKind {
        case readOnly
        case writing

        var begin: String {
            switch self {
            case .readOnly: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
            case .writing: "BEGIN ISOLATION LEVEL READ COMMITTED"
            }
        }
    }
}
