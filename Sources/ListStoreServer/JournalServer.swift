import Hummingbird
import ListStore
import Logging
import ServiceLifecycle
import UnixSignals

/// Serves a store's lists and journals over HTTP (Hummingbird 2): the documents of DESIGN §3 under
/// `/v1`, long polls and Server-Sent Events for live commits, commits with optimistic concurrency.
/// `HTTPSource` (ListSync) is its client.
///
/// ```swift
/// let server = JournalServer(store: try Store(path: "mail.liststore"),
///                            configuration: .init(port: 8080, token: "s3cret"))
/// try await server.run()      // until SIGINT or SIGTERM, then shuts down gracefully
/// ```
///
/// Endpoints (`:list` percent-encoded):
///
/// | method and path | answer |
/// |---|---|
/// | `GET /v1/store` | `{"epoch","schemaVersion","uuid"}` |
/// | `GET /v1/lists` | the `lists --json` document |
/// | `GET /v1/lists/:list` | one list's summary |
/// | `GET /v1/lists/:list/snapshot[?at=V]` | the `show --json` document |
/// | `GET /v1/lists/:list/journal[?since=V][&limit=N][&wait=S]` | the `log --json` document; with `wait`, held until a commit lands |
/// | `GET /v1/lists/:list/diff?from=V[&to=W]` | one minimal changeset between two retained versions |
/// | `POST /v1/lists/:list/commits` | commits a snapshot document (`expectedVersion`, `author`, `message` optional); 409 on conflict |
/// | `GET /v1/lists/:list/events[?since=V]` | Server-Sent Events, one `commit` event per journal entry |
/// | `PUT /v1/lists/:list/consumers/:name` | registers or acknowledges a consumer: `{"version":V}` |
public struct JournalServer: Sendable {
    /// Where and how the server listens, and its limits.
    public struct Configuration: Sendable {
        /// The address to bind (default 127.0.0.1: this machine only).
        public var host: String
        /// The port (0: any free port, see `run(onRunning:)`).
        public var port: Int
        /// When set, every request needs `Authorization: Bearer <token>`.
        public var token: String?
        /// The largest request body accepted (413 beyond).
        public var maxBodyBytes: Int
        /// The most journal entries one request returns.
        public var maxLimit: Int
        /// The longest `wait` of a long poll.
        public var maxWait: Duration
        /// How often the heads are read for commits of other processes while clients wait.
        public var pollInterval: Duration
        /// How long an event stream stays silent before it sends a keep-alive comment.
        public var keepAliveInterval: Duration
        /// How many connections may wait to be accepted (the kernel caps it at `somaxconn`): many
        /// followers reconnecting at once after a restart should not see their connections dropped.
        public var backlog: Int

        /// A configuration; the defaults suit a server on this machine.
        public init(
            host: String = "127.0.0.1", port: Int = 8080, token: String? = nil, maxBodyBytes: Int = 32 << 20,
            maxLimit: Int = 1000, maxWait: Duration = .seconds(60), pollInterval: Duration = .milliseconds(20),
            keepAliveInterval: Duration = .seconds(15), backlog: Int = 4096
        ) {
            self.host = host
            self.port = port
            self.token = token
            self.maxBodyBytes = maxBodyBytes
            self.maxLimit = maxLimit
            self.maxWait = maxWait
            self.pollInterval = pollInterval
            self.keepAliveInterval = keepAliveInterval
            self.backlog = backlog
        }
    }

    /// The store served.
    public let store: Store
    /// How it is served.
    public var configuration: Configuration
    /// Where requests and errors are logged.
    public var logger: Logger

    /// A server of `store`.
    public init(store: Store, configuration: Configuration = Configuration(), logger: Logger = Logger(label: "liststore.server")) {
        self.store = store
        self.configuration = configuration
        self.logger = logger
    }

    /// Serves until the task is cancelled or, with `handlingSignals`, until SIGINT or SIGTERM: then
    /// it stops accepting connections, ends long polls and event streams, and returns once the
    /// requests under way are answered.
    ///
    /// - Parameter onRunning: called with the bound port once the server accepts connections.
    /// - Throws: when the address cannot be bound.
    public func run(handlingSignals: Bool = true, onRunning: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        let watcher = HeadWatcher(store: store, pollInterval: configuration.pollInterval)
        let router = Router()
        router.add(middleware: LogRequestsMiddleware(.info))
        router.add(middleware: JSONErrorMiddleware())
        if let token = configuration.token { router.add(middleware: BearerTokenMiddleware(token: token)) }
        JournalRoutes(store: store, watcher: watcher, configuration: configuration).add(to: router)
        let port = configuration.port
        let app = Application(
            router: router,
            configuration: .init(
                address: .hostname(configuration.host, port: port), serverName: "liststore", backlog: configuration.backlog),
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? port) },
            logger: logger)
        // Services shut down in reverse order: the watcher first, which ends the waits of long polls
        // and event streams, then the HTTP server, which waits for the requests under way.
        let group = ServiceGroup(
            configuration: .init(
                services: [app, WatcherService(watcher: watcher)],
                gracefulShutdownSignals: handlingSignals ? [.sigterm, .sigint] : [], logger: logger))
        try await group.run()
    }
}

/// Runs the head watcher as long as the server, and closes it first on shutdown.
private struct WatcherService: Service {
    let watcher: HeadWatcher

    func run() async throws {
        await withGracefulShutdownHandler {
            await watcher.run()
        } onGracefulShutdown: {
            watcher.close()
        }
    }
}
