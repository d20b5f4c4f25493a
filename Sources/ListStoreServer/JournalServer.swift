import Foundation
import Hummingbird
import HummingbirdCore
import ListStoreCore
import Logging
import NIOSSL
import ServiceLifecycle
import UnixSignals

/// Serves a store's lists and journals over HTTP (Hummingbird 2): the documents of the command
/// line's `--json` under `/v1`, long polls and Server-Sent Events for live commits, commits with
/// optimistic concurrency. `HTTPSource` (ListSync) is its client. The endpoints, an example and
/// the options: <doc:RunningAServer>.
public struct JournalServer: Sendable {
    /// Where and how the server listens, and its limits: the options of `liststore serve` (see
    /// <doc:RunningAServer>).
    public struct Configuration: Sendable {
        /// The address to bind (default 127.0.0.1: this machine only).
        public var host: String
        /// The port (0: any free port, see `run(onRunning:)`).
        public var port: Int
        /// The service token: when set, every request needs `Authorization: Bearer <token>` with
        /// it, or (with `access`) with a user's token. The service token has full access.
        public var token: String?
        /// Users' tokens and what they may do (see `AccessConfiguration`); `nil`: the service token
        /// alone. Replace it while the server runs with `JournalServer.replaceAccess(_:)`.
        public var access: AccessConfiguration?
        /// The largest request body accepted (413 beyond).
        public var maxBodyBytes: Int
        /// The most journal entries one request returns.
        public var maxLimit: Int
        /// The most bytes of stages one journal page or one read of an event stream holds (at least
        /// one entry is always sent, however large); `hasMore` tells the client to ask again.
        public var maxPageBytes: Int
        /// The longest `wait` of a long poll.
        public var maxWait: Duration
        /// How often the store feed is read for commits the store was not told of (other processes'
        /// whose signal was lost) while clients wait.
        public var pollInterval: Duration
        /// How long an event stream stays silent before it sends a keep-alive comment.
        public var keepAliveInterval: Duration
        /// How many connections may wait to be accepted (the kernel caps it at `somaxconn`): many
        /// followers reconnecting at once after a restart should not see their connections dropped.
        public var backlog: Int
        /// The most connections open at once (at the cap, a new one takes the place of the one idle
        /// longest). `nil`: the descriptor limit less 64 and 3 per event loop, read when the server
        /// is created (see `JournalServer.raiseDescriptorLimit()`).
        public var maxConnections: Int?
        /// The most long polls and event streams at once (503 beyond), so that waiting clients never
        /// lock out the others. `nil`: `maxConnections` less a tenth of it (at least 16).
        public var maxStreams: Int?
        /// How many pages of lists' heads (`GET /v1/lists/{list}/pages`) are read and encoded at
        /// once, the others waiting their turn (default: the machine's cores).
        public var maxPageReads: Int?
        /// How long a connection may stay idle before it is closed; a request the server is still
        /// answering (a long poll, an event stream, a slow store operation) is not idle (see
        /// <doc:RunningAServer>).
        public var idleTimeout: Duration
        /// Other `Host` values this server answers to, as `name` (any port) or `name:port`, such as
        /// a reverse proxy's; which it always answers to: <doc:RunningAServer>.
        public var allowedHosts: [String]
        /// The `Origin`s (`scheme://host[:port]`) whose requests are served; requests carrying any
        /// other `Origin` are refused (403).
        public var allowedOrigins: [String]
        /// When set, connections are TLS with HTTP/2 or HTTP/1.1 as ALPN asks (see
        /// `JournalServer.tlsConfiguration(certificateChainFile:privateKeyFile:)`); otherwise HTTP/1.1.
        public var tls: TLSConfiguration?
        /// How many event loops (threads) serve the connections, 1 to 1,024. `nil`: twice the cores
        /// (see `effectiveEventLoops`). Servers of one process with the same count share their
        /// loops; why twice the cores: <doc:RunningAServer>.
        public var eventLoops: Int?
        /// How long a shutdown waits for the requests under way before it cancels them (default 10
        /// seconds). Long polls and event streams end at once; store operations are bounded
        /// themselves (PostgreSQL: `PostgresStore.Configuration.operationTimeout`).
        public var shutdownGracePeriod: Duration = .seconds(10)
        /// The largest blob an upload (`PUT /v1/lists/{list}/blobs/{blob}`) may send (default
        /// 4 GiB; 413 beyond). Its bytes stream to the store a part at a time, whatever its size.
        public var maxBlobBytes: Int = 4 << 30

        /// A configuration; the defaults suit a server on this machine.
        public init(
            host: String = "127.0.0.1", port: Int = 8080, token: String? = nil, maxBodyBytes: Int = 32 << 20,
            maxLimit: Int = 1000, maxPageBytes: Int = 8 << 20, maxWait: Duration = .seconds(60),
            pollInterval: Duration = .milliseconds(20), keepAliveInterval: Duration = .seconds(15), backlog: Int = 4096,
            maxConnections: Int? = nil, maxStreams: Int? = nil, idleTimeout: Duration = .seconds(60),
            allowedHosts: [String] = [], allowedOrigins: [String] = [],
            tls: TLSConfiguration? = nil, access: AccessConfiguration? = nil, eventLoops: Int? = nil
        ) {
            self.host = host
            self.port = port
            self.token = token
            self.access = access
            self.maxBodyBytes = maxBodyBytes
            self.maxLimit = maxLimit
            self.maxPageBytes = maxPageBytes
            self.maxWait = maxWait
            self.pollInterval = pollInterval
            self.keepAliveInterval = keepAliveInterval
            self.backlog = backlog
            self.maxConnections = maxConnections
            self.maxStreams = maxStreams
            self.idleTimeout = idleTimeout
            self.allowedHosts = allowedHosts
            self.allowedOrigins = allowedOrigins
            self.tls = tls
            self.eventLoops = eventLoops
        }

        /// Whether `host` is a loopback name or address (`localhost`, `127.0.0.0/8`, `::1`): only
        /// this machine can connect.
        public var bindsToLoopback: Bool {
            OriginPolicyMiddleware<ServerRequestContext>.isLoopbackAddress(
                host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host)
        }

        /// `maxConnections`, or the default derived from the descriptor limit.
        public var effectiveMaxConnections: Int {
            maxConnections
                ?? max(16, min(DescriptorLimit.current, 1 << 24) - DescriptorLimit.reserve - DescriptorLimit.perEventLoop * effectiveEventLoops)
        }

        /// `eventLoops` (brought within 1 to 1,024), or twice the cores NIO counts
        /// (`System.coreCount`, which heeds a container's CPU quota on Linux, up to 1,024).
        /// - Complexity: O(1) with `eventLoops`; otherwise a read of the CPU quota's files on Linux.
        public var effectiveEventLoops: Int {
            min(ServerEventLoops.maximum, max(1, eventLoops ?? ServerEventLoops.defaultCount))
        }

        /// `maxStreams`, or the default derived from `effectiveMaxConnections`.
        public var effectiveMaxStreams: Int {
            let connections = effectiveMaxConnections
            return maxStreams ?? max(1, connections - max(16, connections / 10))
        }
    }

    /// Raises the process's soft limit of open files to its hard limit, so that the default
    /// `maxConnections` is as large as the system allows; returns the limit now in force.
    @discardableResult
    public static func raiseDescriptorLimit() -> Int {
        DescriptorLimit.raiseToHardLimit()
    }

    /// A TLS server configuration from PEM files: the server's certificate chain (its own
    /// certificate first, then the intermediates) and its private key.
    ///
    /// ```swift
    /// let tls = try JournalServer.tlsConfiguration(certificateChainFile: "server.pem", privateKeyFile: "server.key")
    /// let server = JournalServer(store: store, configuration: .init(host: "0.0.0.0", port: 8443, token: token, tls: tls))
    /// ```
    /// - Throws: `JournalServer.TLSFileError` naming the file that cannot be read or holds no
    ///   certificate or key, or the key file when its key is not the certificate's.
    /// - Complexity: reading the files, and one check of the pair.
    public static func tlsConfiguration(certificateChainFile: String, privateKeyFile: String) throws -> TLSConfiguration {
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificateChainFile)
        } catch {
            throw TLSFileError(file: certificateChainFile, reason: "is not a readable PEM certificate chain (\(error))")
        }
        guard !chain.isEmpty else { throw TLSFileError(file: certificateChainFile, reason: "holds no PEM certificate") }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(file: privateKeyFile, format: .pem)
        } catch {
            throw TLSFileError(file: privateKeyFile, reason: "is not a readable PEM private key (\(error))")
        }
        let configuration = TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        // The pair is checked now, as a context is made of it (BoringSSL compares the key with the
        // certificate's), rather than when the server starts.
        do {
            _ = try NIOSSLContext(configuration: configuration)
        } catch {
            throw TLSFileError(file: privateKeyFile, reason: "does not match the certificate in \(certificateChainFile) (\(error))")
        }
        return configuration
    }

    /// Why clients would refuse the server's own certificate at `date` (expired, or not valid yet);
    /// `nil` when it is valid.
    static func certificateWarning(_ tls: TLSConfiguration, at date: Date) -> String? {
        guard case .certificate(let certificate)? = tls.certificateChain.first else { return nil }
        let now = time_t(date.timeIntervalSince1970)
        let format = { (time: time_t) in ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: TimeInterval(time))) }
        if certificate.notValidAfter < now {
            return "the server's TLS certificate expired on \(format(certificate.notValidAfter)): clients will refuse it"
        }
        if certificate.notValidBefore > now {
            return "the server's TLS certificate is not valid before \(format(certificate.notValidBefore)): clients will refuse it"
        }
        return nil
    }

    /// A certificate or key file for TLS that cannot be used.
    public struct TLSFileError: Error, CustomStringConvertible {
        /// The file's path.
        public var file: String
        /// What is wrong with it.
        public var reason: String
        public var description: String { "\(file) \(reason)" }
    }

    /// Puts `access` in force for the requests that start from now on: what `liststore serve`
    /// does on SIGHUP. The long polls and event streams of users' tokens that it no longer allows
    /// end at once, before anything committed from now on reaches them (see
    /// <doc:RunningAServer#Rotating-keys>).
    ///
    /// ```swift
    /// server.replaceAccess(try await AccessConfiguration(contentsOfFile: path))
    /// ```
    /// - Complexity: O(long polls and event streams open), a check of each user's against the rules.
    public func replaceAccess(_ access: AccessConfiguration) {
        state.replaceAccess(access)
        running.withLock { $0 }?.accessChanged()
    }

    /// The store served: a SQLite `Store`, or a `PostgresStore` that other servers share.
    public let store: any ListStoreEngine
    /// How it is served.
    public var configuration: Configuration
    /// Where requests and errors are logged.
    public var logger: Logger

    /// The `Server` header of its answers.
    static let serverName = "liststore"

    /// What the server holds while it runs: connections, waiting requests, bytes being streamed.
    let state: ServerState
    /// What `GET /metrics` shows.
    let metrics: ServerMetrics
    /// The services of the run under way, which a graceful shutdown stops (`shutDownGracefully()`).
    private let services = _Locked<ServiceGroup?>(nil)
    /// The head watcher of the run under way, whose waits `replaceAccess(_:)` checks.
    private let running = _Locked<HeadWatcher?>(nil)

    /// The table of waiting requests of the run under way.
    var watcher: HeadWatcher? { running.withLock { $0 } }

    /// How many requests wait at the heads now (long polls and event streams; for tests).
    var waitingCount: Int { watcher?.waitingCount ?? 0 }

    /// A server of `store`.
    public init(store: any ListStoreEngine, configuration: Configuration = Configuration(), logger: Logger = Logger(label: "liststore.server")) {
        self.store = store
        self.configuration = configuration
        self.logger = logger
        state = ServerState(configuration)
        metrics = ServerMetrics()
    }

    /// Serves until the task is cancelled or, with `handlingSignals`, until SIGINT or SIGTERM, then
    /// shuts down gracefully, cancelling what is still under way after
    /// `Configuration.shutdownGracePeriod` (see <doc:RunningAServer>).
    ///
    /// - Parameters:
    ///   - handlingSignals: whether SIGINT and SIGTERM shut the server down gracefully.
    ///   - onRunning: called with the bound port once the server accepts connections.
    /// - Throws: when the address cannot be bound.
    public func run(handlingSignals: Bool = true, onRunning: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        let state = state
        let watcher = HeadWatcher(store: store, pollInterval: configuration.pollInterval, serverState: state)
        running.withLock { $0 = watcher }
        defer { running.withLock { $0 = nil } }
        // A port left from an earlier run of this server is not this run's (port 0 binds anew).
        state.port = configuration.port != 0 ? configuration.port : nil
        let router = router(watcher: watcher)
        let port = configuration.port
        let (idleTimeout, tls) = (configuration.idleTimeout, configuration.tls)
        if let tls, let warning = Self.certificateWarning(tls, at: Date()) { logger.warning("\(warning)") }
        let app = Application(
            responder: HeadResponder(responder: router.buildResponder()),
            server: HTTPServerBuilder { responder in
                try GuardedHTTPChannel(
                    responder: responder, tls: tls, idleTimeout: idleTimeout, connections: state.connections,
                    idleConnections: state.idleConnections)
            },
            configuration: .init(
                address: .hostname(configuration.host, port: port), serverName: Self.serverName, backlog: configuration.backlog),
            onServerRunning: { channel in
                let bound = channel.localAddress?.port ?? port
                state.port = bound
                await onRunning(bound)
            },
            eventLoopGroupProvider: .shared(ServerEventLoops.group(count: configuration.effectiveEventLoops)),
            logger: logger.deferringMetadata)
        // Services shut down in reverse order: the watcher first, which ends the waits of long polls
        // and event streams, then the HTTP server, which waits for the requests under way.
        var services = ServiceGroupConfiguration(
            services: [app, WatcherService(watcher: watcher)], gracefulShutdownSignals: handlingSignals ? [.sigterm, .sigint] : [],
            logger: logger)
        // A shutdown that outlasts its grace period cancels what is left.
        services.maximumGracefulShutdownDuration = configuration.shutdownGracePeriod
        let group = ServiceGroup(configuration: services)
        // Cancelled, it refuses new connections at once and shuts down gracefully. The group runs
        // in a task of its own: cancelling Hummingbird's server while it accepts a connection would
        // drop that channel unserved, which NIO stops the process for.
        state.connections.open()
        self.services.withLock { $0 = group }
        defer { self.services.withLock { $0 = nil } }
        let running = Task { try await group.run() }
        try await withTaskCancellationHandler {
            try await running.value
        } onCancel: {
            state.connections.close()
            Task { await group.triggerGracefulShutdown() }
        }
    }

    /// The server's router: its middlewares, then every route (`JournalRoutes`).
    func router(watcher: HeadWatcher) -> Router<ServerRequestContext> {
        let state = state
        let router = Router(context: ServerRequestContext.self)
        // Headers are not logged, and the token would be redacted if they were.
        router.add(middleware: LogRequestsMiddleware(.info, includeHeaders: .none, redactHeaders: [.authorization]))
        router.add(middleware: RequestMetricsMiddleware(metrics: metrics))
        router.add(middleware: CORSMiddleware(configuration: configuration))
        router.add(middleware: JSONErrorMiddleware(storeLocation: store.location))
        let origins = OriginPolicyMiddleware<ServerRequestContext>(configuration: configuration) { state.port }
        router.add(middleware: origins)
        let access = AccessMiddleware(token: configuration.token, state: state, storeLocation: store.location)
        let routes = JournalRoutes(
            store: store, watcher: watcher, access: access, metrics: metrics, pages: JournalPages(store: store),
            eventPages: EventPages(store: store), feedPages: FeedPages(store: store), configuration: configuration, state: state)
        router.add(middleware: access)
        router.add(middleware: JSONContentTypeMiddleware())
        routes.add(to: router)
        return router
    }

    /// Shuts the run under way down as SIGTERM does (see `run(handlingSignals:onRunning:)`).
    func shutDownGracefully() async {
        await services.withLock { $0 }?.triggerGracefulShutdown()
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
