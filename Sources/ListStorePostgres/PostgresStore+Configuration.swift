import Foundation
import ListStoreCore
import Logging
import PostgresNIO

extension PostgresStore {
    /// How a `PostgresStore` reaches its database: the postgres-nio client configuration, made from a
    /// URL, and the logger of the client's background work.
    ///
    /// ```swift
    /// var configuration = try PostgresStore.Configuration(url: "postgres://ana:secret@db.local:5432/lists")
    /// configuration.postgres.options.maximumConnections = 40
    /// let store = try await PostgresStore(configuration: configuration)
    /// ```
    public struct Configuration: Sendable {
        /// The postgres-nio client's configuration (endpoint, credentials, TLS, pool size).
        public var postgres: PostgresClient.Configuration
        /// Where the client logs its background work (connections, keep-alives). The default logs
        /// errors only: a server that cannot be reached is reported by the calls that need it.
        public var logger: Logger
        /// How long opening the store may take (connecting, then migrating under the advisory lock)
        /// before it fails with `.io`: postgres-nio's pool retries a refused connection instead of
        /// failing the call. Default: 30 seconds.
        public var openTimeout: Duration = .seconds(30)
        /// The bound of each operation of the open store, from the request for a pooled connection
        /// to the commit's answer. Past it, a request still waiting for a connection is withdrawn
        /// and a connection in use is closed: the call fails with `.unavailable` (nothing changed)
        /// or `.outcomeUnknown` (the commit was sent, its answer lost). PostgreSQL stops the
        /// statement itself at the same bound (`statement_timeout`), and ends a transaction left
        /// idle as long (`idle_in_transaction_session_timeout`). Default: 15 seconds.
        public var operationTimeout: Duration = .seconds(15)
        /// How long a statement waits for a row lock another transaction holds (PostgreSQL's
        /// `lock_timeout`) before the operation fails with `.unavailable`, having changed nothing.
        /// Default: 5 seconds.
        public var lockTimeout: Duration = .seconds(5)
        /// Whether opening a database without tables makes it an empty store (the default), or
        /// fails with `.storeNotFound` and leaves it untouched (for tools that only read).
        public var createsStore = true

        /// Parses `postgres://user[:password]@host[:port]/database[?sslmode=disable|prefer|require]`
        /// (also `postgresql://`), with libpq's `connect_timeout` (seconds; default 10) and
        /// `application_name` (default `liststore`). User, password and database may be percent-encoded; the port
        /// defaults to 5432, the user to `postgres`, the database to the user's name; TLS is off
        /// unless `sslmode` asks for it. `?host=/directory` connects through the Unix-domain socket
        /// `/directory/.s.PGSQL.PORT` instead of TCP.
        ///
        /// - Complexity: O(length of `url`).
        /// - Throws: `StoreError(.invalidArgument)` for a URL of another scheme, without a host, or
        ///   with an unknown `sslmode`.
        public init(url: String, logger: Logger = Configuration.defaultLogger) throws {
            guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
                scheme == "postgres" || scheme == "postgresql"
            else {
                throw StoreError(.invalidArgument, "not a PostgreSQL URL (postgres://user@host:port/database): \(Self.redacted(url))")
            }
            let query = Dictionary(
                (components.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { _, last in last })
            let username = components.user.flatMap { $0.isEmpty ? nil : $0 } ?? "postgres"
            let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
            let database = path.isEmpty ? username : path
            let port = components.port ?? 5432
            let tls: PostgresClient.Configuration.TLS
            switch query["sslmode"] ?? "disable" {
            case "disable": (tls, sslMode) = (.disable, .disable)
            case "prefer", "allow": (tls, sslMode) = (.prefer(.makeClientConfiguration()), .prefer)
            case "require", "verify-ca", "verify-full": (tls, sslMode) = (.require(.makeClientConfiguration()), .require)
            case let mode:
                throw StoreError(.invalidArgument, "unknown sslmode '\(mode)' in \(Self.redacted(url)) (disable, prefer or require)")
            }
            var connectTimeout: Duration?
            if let text = query["connect_timeout"] {
                // libpq's parameter: whole seconds, at least 2 (0 would mean "wait forever").
                guard let seconds = Int(text), (0...3600).contains(seconds) else {
                    throw StoreError(.invalidArgument, "connect_timeout must be a number of seconds up to 3600 in \(Self.redacted(url))")
                }
                connectTimeout = .seconds(seconds == 0 ? 3600 : max(seconds, 2))
            }
            if let socketDirectory = query["host"], socketDirectory.hasPrefix("/") {
                postgres = PostgresClient.Configuration(
                    unixSocketPath: socketDirectory + "/.s.PGSQL.\(port)", username: username, password: components.password,
                    database: database)
            } else {
                guard let host = components.host, !host.isEmpty else {
                    throw StoreError(.invalidArgument, "the PostgreSQL URL names no host: \(Self.redacted(url))")
                }
                postgres = PostgresClient.Configuration(
                    host: host, port: port, username: username, password: components.password, database: database, tls: tls)
            }
            postgres.options.maximumConnections = Self.defaultConnections
            if let connectTimeout { postgres.options.connectTimeout = connectTimeout }
            if let name = query["application_name"] { applicationName = name }
            self.logger = logger
        }

        /// A postgres-nio client made with this configuration, for
        /// `PostgresStore.init(client:configuration:)`: the caller runs it as a service of its
        /// `ServiceGroup`.
        ///
        /// ```swift
        /// let client = configuration.makeClient()   // one of the group's services
        /// let store = try await PostgresStore(client: client, configuration: configuration)
        /// ```
        /// - Complexity: O(1); the client connects once it runs.
        public func makeClient() -> PostgresClient {
            PostgresClient(configuration: sessionConfiguration, backgroundLogger: logger)
        }

        /// The pooled connections of a store: 10, unless the caller sets
        /// `postgres.options.maximumConnections` (`liststore serve --db-connections`). Every
        /// process that opens the store holds up to this many, one of them listening for other
        /// processes' commits: keep processes × connections below the server's `max_connections`
        /// (100 by default), with room for its superuser connections and for tools.
        public static let defaultConnections = 10

        /// The name every session of the store gives PostgreSQL (`application_name`, shown in
        /// `pg_stat_activity`): `liststore`, or the URL's `application_name`.
        public var applicationName = "liststore"

        /// `postgres` with the sessions' settings: the application's name, and the bounds of
        /// statements, lock waits and transactions left idle (`operationTimeout`, `lockTimeout`).
        var sessionConfiguration: PostgresClient.Configuration {
            var configuration = postgres
            let milliseconds = { (duration: Duration) in
                String(max(1, duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000))
            }
            configuration.options.additionalStartupParameters += [
                ("application_name", applicationName),
                ("statement_timeout", milliseconds(operationTimeout)),
                ("lock_timeout", milliseconds(lockTimeout)),
                ("idle_in_transaction_session_timeout", milliseconds(operationTimeout)),
            ]
            return configuration
        }

        /// Whether `text` names a PostgreSQL database (`postgres://` or `postgresql://`, any case)
        /// rather than a store file, as the command line's `--db` tells them apart.
        ///
        /// ```swift
        /// PostgresStore.Configuration.isURL("postgres://app@db/lists")   // true
        /// PostgresStore.Configuration.isURL("lists.liststore")          // false
        /// ```
        /// - Complexity: O(1).
        public static func isURL(_ text: String) -> Bool {
            let lowered = text.prefix(13).lowercased()
            return lowered.hasPrefix("postgres://") || lowered.hasPrefix("postgresql://")
        }

        /// The default logger: label `ListStorePostgres`, errors only.
        public static var defaultLogger: Logger {
            var logger = Logger(label: "ListStorePostgres")
            logger.logLevel = .error
            return logger
        }

        /// The URL without its password, for messages.
        ///
        /// ```swift
        /// PostgresStore.Configuration.redacted("postgres://app:pw@db/lists")   // postgres://app:***@db/lists
        /// ```
        /// - Complexity: O(length of `url`).
        public static func redacted(_ url: String) -> String {
            guard var components = URLComponents(string: url), components.password != nil else { return url }
            components.password = "***"
            return components.string ?? url
        }

        /// How the URL asked for TLS: the open's first session (`PostgresStore.checkSession`) asks
        /// the same.
        enum SSLMode { case disable, prefer, require }
        var sslMode = SSLMode.disable

        /// Where the store is, for messages: `postgres://user@host:port/database`, no password.
        var location: String {
            let database = postgres.database ?? postgres.username
            if let socket = postgres.unixSocketPath {
                return "postgres://\(postgres.username)@/\(database)?socket=\(socket)"
            }
            return "postgres://\(postgres.username)@\(postgres.host ?? "localhost"):\(postgres.port ?? 5432)/\(database)"
        }
    }
}
