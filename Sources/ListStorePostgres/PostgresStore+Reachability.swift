import ListStoreCore
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO

extension PostgresStore {
    /// Fails at once when the server cannot be reached or refuses the session: its name does not
    /// resolve, nothing listens on its port, or the server refuses the database, the role or the
    /// password (with its own words). postgres-nio's pool retries a refused connection until the
    /// open timeout, so without this a mistyped port or database would take that long to report,
    /// as "no answer". One session is opened (with the TLS the URL asked for) and closed; one that
    /// neither succeeds nor fails within `timeout` (a firewall that drops packets) leaves the
    /// verdict to the open itself.
    ///
    /// - Throws: `StoreError` `.io`, with the reason.
    static func checkSession(_ configuration: Configuration, location: String, timeout: Duration) async throws {
        let postgres = configuration.postgres
        var session: PostgresConnection.Configuration
        if let socket = postgres.unixSocketPath {
            session = .init(unixSocketPath: socket, username: postgres.username, password: postgres.password, database: postgres.database)
        } else if let host = postgres.host, let port = postgres.port {
            let tls: PostgresConnection.Configuration.TLS
            switch configuration.sslMode {
            case .disable: tls = .disable
            case .prefer: tls = .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
            case .require: tls = .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
            }
            session = .init(host: host, port: port, username: postgres.username, password: postgres.password, database: postgres.database, tls: tls)
        } else {
            return
        }
        session.options.connectTimeout = TimeAmount.nanoseconds(Int64(clamping: timeout.components.seconds) * 1_000_000_000)
        var quiet = Logger(label: "ListStorePostgres.open")
        quiet.logLevel = .critical
        let connection: PostgresConnection
        do {
            connection = try await PostgresConnection.connect(configuration: session, id: 0, logger: quiet)
        } catch let error as PSQLError where Self.timedOut(error) {
            return  // no verdict within `timeout`: the open decides
        } catch {
            throw StoreError(.io, "cannot open the store at \(location): \(Self.reason(error))")
        }
        try? await connection.close()
    }

    /// Whether the session's connection neither succeeded nor failed in time.
    private static func timedOut(_ error: PSQLError) -> Bool {
        if case .connectTimeout? = error.underlying as? ChannelError { return true }
        return false
    }

    /// What a failed session says, in a few words: the server's own message when it refused.
    private static func reason(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if error.code == .sslUnsupported {
                return "the server does not offer TLS, which the URL requires (sslmode=require); use sslmode=prefer or disable, or enable ssl on the server"
            }
            if let message = error.serverInfo?[.message] {
                return "the server refused: \(message)" + (error.serverInfo?[.sqlState].map { " (SQLSTATE \($0))" } ?? "")
            }
            if let underlying = error.underlying { return Self.reason(underlying) }
            return "\(error.code)"
        }
        if let error = error as? NIOConnectionError {
            if error.dnsAError != nil || error.dnsAAAAError != nil, error.connectionErrors.isEmpty {
                return "the name \(error.host) does not resolve"
            }
            if let first = error.connectionErrors.first { return Self.reason(first.error) }
        }
        if let error = error as? IOError, error.errnoCode == ECONNREFUSED { return "connection refused" }
        return "\(error)"
    }
}
