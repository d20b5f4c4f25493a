import ArgumentParser
import Foundation
import ListStore
import ListStorePostgres
import ListStoreServer
import Logging
import NIOSSL
import ServiceLifecycle
import UnixSignals

/// `liststore-server --db D [--host H] [--port P] [--token T] [--tls-cert C --tls-key K]`, which `liststore serve` runs: the
/// journal over HTTP until SIGINT or SIGTERM.
@main
struct ServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "liststore serve",
        abstract: "Serve a store's lists and journals over HTTP.",
        discussion: """
            Serves the documents of 'liststore … --json' under /v1 (lists, snapshots, the journal with \
            long polls, diffs, commits with --expect-version semantics, Server-Sent Events), for \
            'liststore pull --from URL' and HTTPSource. Binds to 127.0.0.1 unless --host says \
            otherwise. With --token (or the LISTSTORE_TOKEN environment variable, which other users \
            cannot read in the process list) every request needs 'Authorization: Bearer <token>'. \
            With --auth FILE (or LISTSTORE_AUTH) the server also serves users: their JWTs are verified \
            against the file's keys and its rules grant each token read, write or admin on the lists \
            their patterns match (see "Running a server" in ListStoreServer's documentation); the \
            --token stays the service token, with full access. SIGHUP reads the file again, and ends \
            at once the long polls and event streams whose grant or key it took away: a file \
            that does not parse keeps the configuration in force, and the server logs why. \
            The address is printed on stdout once it accepts connections; requests are logged on stderr. SIGINT or SIGTERM stops accepting connections, ends long \
            polls and event streams, and exits with 0 once the requests under way are answered and their \
            answers written (as long as a client keeps reading; up to twice --idle-timeout for one that stops), \
            and within --shutdown-grace seconds (default 10) whatever the store does: then what is \
            still under way is cancelled, and the process ends at most 5 seconds later.

            Only requests whose Host is this server's are answered (403 otherwise): on a loopback \
            address, localhost, 127.0.0.0/8 and [::1] on its port; on any other address, localhost \
            and IP addresses on its port; always, the --allow-host names (such as a reverse proxy's). \
            Requests carrying an Origin other than the server's own or an --allow-origin are refused \
            (403); pages of an --allow-origin origin get CORS answers (preflights, and their origin in \
            Access-Control-Allow-Origin), and POST and PUT need 'Content-Type: application/json' (415). A --host other than \
            a loopback address needs --token (or --allow-unauthenticated, which lets anyone who \
            reaches the port read and write).

            Limits: at most --max-connections open connections (default: the open-files limit, raised \
            to its hard limit, less 64 and 3 for each event loop) and --max-streams long polls and event streams among them \
            (default: nine tenths of the connections); at the first, a new connection takes the place of the \
            one idle longest, or is closed; beyond the second, 503 with Retry-After. A connection idle for \
            --idle-timeout seconds (no request, a request head or body that stops coming, an answer its client \
            stops reading) is closed. --event-loops threads serve the connections \
            (default: twice the cores; NIO_SINGLETON_GROUP_LOOP_COUNT does not set it); a connection \
            stays on the loop that accepted it.

            --db postgres://user[:password]@host[:port]/database (or postgresql://, with \
            ?sslmode=disable|prefer|require) serves a store in PostgreSQL; a database without tables \
            becomes an empty store. Several servers may serve one database: each wakes its long polls \
            and event streams on the others' commits through LISTEN/NOTIFY, and polls every 20 ms \
            for what it missed. Each server holds up to --db-connections connections (default 10, or \
            LISTSTORE_DB_CONNECTIONS): keep servers × connections below the database's \
            max_connections. Each store operation is bounded by --db-timeout seconds (default 15), \
            from the wait for a connection to the commit's answer; row locks are waited for 5 \
            seconds at most. A request whose operation cannot reach the database, or does not end \
            in time, is answered 503 with Retry-After and the code 'unavailable' (nothing changed) \
            or 'outcomeUnknown' (the commit was sent and its answer lost: it may have landed). \
            The URL may also give libpq's connect_timeout (seconds) and application_name. Without \
            --db, LISTSTORE_DB names the store.

            With --tls-cert and --tls-key (PEM files: the certificate chain, the server's own \
            certificate first, and its private key) the server speaks HTTPS only, HTTP/2 or HTTP/1.1 \
            as the client asks (ALPN); clients of a certificate no system authority signed give its \
            authority to 'liststore pull --ca-cert FILE' or HTTPSource. GET /metrics answers the \
            server's figures in Prometheus's text format (with the token, when there is one); GET \
            /health answers 200 while the store answers within a second (503 otherwise), without a token; GET /v1/openapi.json answers \
            the API's OpenAPI 3.1 document.

            With LISTSTORE_PARENT_PID=<pid> in its environment (set by the process that starts \
            it, to its own pid) the server ends with that process: it exits at once (1) if that \
            process is no longer its parent, and shuts down as on SIGTERM when it ends, however it \
            ends.

            Exit codes: 0 ok; 1 failure (such as a port in use); 64 usage, or an --auth file that \
            cannot be used (the line names the key or rule); 66 no store at --db, a --tls-cert or \
            --tls-key that cannot be read, or a key that is not the certificate's; 74 I/O error or damaged store.
            """
    )

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The store: a SQLite file (it must exist) or a postgres:// URL (default: $LISTSTORE_DB).", valueName: "path-or-url"))
    var db: String?

    @Option(name: .long, help: ArgumentHelp("The address to bind.", valueName: "host"))
    var host = "127.0.0.1"

    @Option(name: .long, help: ArgumentHelp("The port (0: any free port, printed at start).", valueName: "port"))
    var port = 8080

    @Option(name: .long, help: ArgumentHelp("Require 'Authorization: Bearer <token>'.", valueName: "token"))
    var token: String?

    @Option(name: .long, help: ArgumentHelp("Serve users: verify their JWTs and grant lists by this access file's rules (default: $LISTSTORE_AUTH).", valueName: "file"))
    var auth: String?

    @Option(name: .customLong("max-body-mib"), help: ArgumentHelp("The largest request body accepted, in MiB.", valueName: "MiB"))
    var maxBodyMiB = 32

    @Option(name: .customLong("max-page-mib"), help: ArgumentHelp("The most stages one journal page or event-stream read holds, in MiB.", valueName: "MiB"))
    var maxPageMiB = 8

    @Option(name: .long, help: ArgumentHelp("The most open connections (default: the open-files limit less 64 and 3 per event loop).", valueName: "n"))
    var maxConnections: Int?

    @Option(name: .long, help: ArgumentHelp("The most long polls and event streams (default: 9/10 of --max-connections).", valueName: "n"))
    var maxStreams: Int?

    @Option(name: .long, help: ArgumentHelp("How many event loops (threads) serve the connections (default: twice the cores).", valueName: "n"))
    var eventLoops: Int?

    @Option(name: .long, help: ArgumentHelp("Close a connection idle this long.", valueName: "seconds"))
    var idleTimeout = 60

    @Option(name: .long, help: ArgumentHelp("Also answer requests for this Host ('name' or 'name:port'); repeatable.", valueName: "host"))
    var allowHost: [String] = []

    @Option(name: .long, help: ArgumentHelp("Also serve requests from this Origin ('https://app.example'); repeatable.", valueName: "origin"))
    var allowOrigin: [String] = []

    @Option(name: .long, help: ArgumentHelp("Serve HTTPS with this PEM certificate chain (with --tls-key).", valueName: "file"))
    var tlsCert: String?

    @Option(name: .long, help: ArgumentHelp("The PEM private key of --tls-cert.", valueName: "file"))
    var tlsKey: String?

    @Option(name: .long, help: ArgumentHelp("PostgreSQL: the most connections this server holds (default: $LISTSTORE_DB_CONNECTIONS, or 10).", valueName: "n"))
    var dbConnections: Int?

    @Option(name: .long, help: ArgumentHelp("PostgreSQL: the bound of each store operation, from the wait for a connection to the commit.", valueName: "seconds"))
    var dbTimeout = 15

    @Option(name: .long, help: ArgumentHelp("How long a shutdown waits for the requests under way before it cancels them.", valueName: "seconds"))
    var shutdownGrace = 10

    @Flag(name: .long, help: "Serve a non-loopback --host without --token: anyone who reaches the port can read and write.")
    var allowUnauthenticated = false

    /// Runs the command; a usage error is one line on stderr (64), and help goes to stdout.
    static func main() async {
        let command: ServerCommand
        do {
            guard let parsed = try parseAsRoot() as? ServerCommand else { throw CleanExit.helpRequest() }
            command = parsed
        } catch {
            let code = exitCode(for: error)
            if code == .success {
                FileHandle.standardOutput.write(Data((fullMessage(for: error) + "\n").utf8))
            } else {
                let line = message(for: error).split(separator: "\n").joined(separator: "; ")
                FileHandle.standardError.write(Data("error: \(line) (see 'liststore serve --help')\n".utf8))
            }
            Foundation.exit(code.rawValue)
        }
        do {
            try await command.run()
        } catch let status as ExitCode {
            Foundation.exit(status.rawValue)  // already reported
        } catch {
            // `run` reports its own failures and exits; anything else it throws is one line too.
            let line = "\(error)".split(separator: "\n").joined(separator: "; ")
            FileHandle.standardError.write(Data("error: \(line)\n".utf8))
            Foundation.exit(1)
        }
    }

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535") }
        guard (1...1_048_576).contains(maxBodyMiB) else { throw ValidationError("--max-body-mib must be between 1 and 1048576") }
        guard (1...1_048_576).contains(maxPageMiB) else { throw ValidationError("--max-page-mib must be between 1 and 1048576") }
        if let maxConnections, maxConnections < 1 { throw ValidationError("--max-connections must be 1 or more") }
        if let maxStreams, maxStreams < 0 { throw ValidationError("--max-streams must be 0 or more") }
        if let eventLoops, !(1...1024).contains(eventLoops) { throw ValidationError("--event-loops must be between 1 and 1024") }
        guard (1...86_400).contains(idleTimeout) else { throw ValidationError("--idle-timeout must be between 1 and 86400") }
        if let dbConnections, !(1...10_000).contains(dbConnections) { throw ValidationError("--db-connections must be between 1 and 10000") }
        guard (1...3600).contains(dbTimeout) else { throw ValidationError("--db-timeout must be between 1 and 3600") }
        guard (0...3600).contains(shutdownGrace) else { throw ValidationError("--shutdown-grace must be between 0 and 3600") }
        if let token, token.isEmpty { throw ValidationError("--token must not be empty") }
        guard (tlsCert == nil) == (tlsKey == nil) else { throw ValidationError("--tls-cert and --tls-key go together") }
    }

    func run() async throws {
        do {
            try ParentWatch.start()
        } catch {
            fail(error.message, error.status)
        }
        guard let db = db ?? ProcessInfo.processInfo.environment["LISTSTORE_DB"].flatMap({ $0.isEmpty ? nil : $0 }) else {
            fail("give the store to serve: --db PATH or --db postgres://…, or set LISTSTORE_DB", 64)
        }
        if PostgresStore.Configuration.isURL(db) {
            // PostgreSQL's client runs as a service of its own, beside the server (which it
            // outlives: a group shuts its services down in reverse order).
            var postgres: PostgresStore.Configuration
            do {
                postgres = try PostgresStore.Configuration(url: db)
            } catch {
                failOpening(error)
            }
            postgres.postgres.options.maximumConnections = databaseConnections()
            postgres.operationTimeout = .seconds(dbTimeout)
            let configured = postgres
            let client = postgres.makeClient()
            let serving = Serving { () async -> (any ListStoreEngine)? in
                do {
                    return try await PostgresStore(client: client, configuration: configured)
                } catch {
                    // A signal while the store opens ends the open: the process stops quietly.
                    if Task.isCancelled { return nil }
                    failOpening(error)
                }
            } serve: { store in
                try await serve(store, handlingSignals: false)
            }
            var services = ServiceGroupConfiguration(
                services: [.init(service: client), .init(service: serving, successTerminationBehavior: .gracefullyShutdownGroup)],
                gracefulShutdownSignals: [.sigterm, .sigint], logger: postgres.logger)
            // The server's own grace period, then the client's close; past that, cancellation, and
            // past its bound the process ends (ServiceLifecycle stops it).
            services.maximumGracefulShutdownDuration = .seconds(shutdownGrace + 5)
            services.maximumCancellationDuration = .seconds(5)
            try await ServiceGroup(configuration: services).run()
        } else {
            let store: Store
            do {
                store = try Store(path: db)
                guard store.exists else { fail("no store at '\(db)'", 66) }
                _ = try await store.identity()
            } catch {
                failOpening(error)
            }
            try await serve(store, handlingSignals: true)
        }
    }

    /// Serves `store` until the server stops (on SIGINT or SIGTERM: with `handlingSignals` its own
    /// handling, otherwise the service group's that runs this).
    private func serve(_ store: any ListStoreEngine, handlingSignals: Bool) async throws {
        var tls: TLSConfiguration?
        if let tlsCert, let tlsKey {
            do {
                tls = try JournalServer.tlsConfiguration(certificateChainFile: tlsCert, privateKeyFile: tlsKey)
            } catch {
                fail("\(error)", 66)
            }
        }
        let token = token ?? ProcessInfo.processInfo.environment["LISTSTORE_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
        let authFile = auth ?? ProcessInfo.processInfo.environment["LISTSTORE_AUTH"].flatMap { $0.isEmpty ? nil : $0 }
        var access: AccessConfiguration?
        if let authFile {
            do {
                access = try await AccessConfiguration(contentsOfFile: authFile)
            } catch {
                fail("\(authFile): \(error)", 64)
            }
        }
        JournalServer.raiseDescriptorLimit()
        var configuration = JournalServer.Configuration(
            host: host, port: port, token: token, maxBodyBytes: maxBodyMiB << 20, maxPageBytes: maxPageMiB << 20,
            maxConnections: maxConnections, maxStreams: maxStreams, idleTimeout: .seconds(idleTimeout),
            allowedHosts: allowHost, allowedOrigins: allowOrigin, tls: tls, access: access,
            eventLoops: eventLoops)
        configuration.shutdownGracePeriod = .seconds(shutdownGrace)
        if token == nil, access == nil, !configuration.bindsToLoopback {
            guard allowUnauthenticated else {
                fail("--host \(host) is reachable from other machines: give --token (or LISTSTORE_TOKEN) or --auth, or --allow-unauthenticated", 64)
            }
            FileHandle.standardError.write(Data(
                "warning: serving \(host) WITHOUT A TOKEN (--allow-unauthenticated): anyone who reaches this port can read and write every list\n".utf8))
        }
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .info
            return handler
        }
        let server = JournalServer(store: store, configuration: configuration)
        let (location, host, scheme) = (store.location, host, tls == nil ? "http" : "https")
        let required = access != nil ? " (users' tokens or the service token required)" : token == nil ? "" : " (token required)"
        // With an access file, SIGHUP reads it again (one that cannot be used leaves the last in force).
        let hangups = authFile == nil ? nil : await UnixSignalsSequence(trapping: .sighup)
        do {
            // Whether the child that ended is the server (the group ends with it).
            try await withThrowingTaskGroup(of: Bool.self) { group in
                group.addTask {
                    try await server.run(handlingSignals: handlingSignals) { port in
                        FileHandle.standardOutput.write(Data("liststore: serving \(location) on \(scheme)://\(host):\(port)\(required)\n".utf8))
                    }
                    return true
                }
                if let authFile, let hangups {
                    group.addTask {
                        let logger = Logger(label: "liststore.server")
                        for await _ in hangups {
                            do {
                                server.replaceAccess(try await AccessConfiguration(contentsOfFile: authFile))
                                logger.info("read the access file \(authFile) again")
                            } catch {
                                logger.error("the access file \(authFile) was not read again, the last one stays in force: \(error)")
                            }
                        }
                        return false
                    }
                }
                while let serverEnded = try await group.next() {
                    if serverEnded { group.cancelAll() }
                }
            }
        } catch {
            fail("cannot serve on \(host):\(port): \(error)", 1)
        }
        if let postgres = store as? PostgresStore { await postgres.close() }
    }

    /// The PostgreSQL connections of this server: `--db-connections`, `LISTSTORE_DB_CONNECTIONS`, or
    /// the default.
    private func databaseConnections() -> Int {
        if let dbConnections { return dbConnections }
        guard let text = ProcessInfo.processInfo.environment["LISTSTORE_DB_CONNECTIONS"], !text.isEmpty else {
            return PostgresStore.Configuration.defaultConnections
        }
        guard let count = Int(text), (1...10_000).contains(count) else {
            fail("LISTSTORE_DB_CONNECTIONS must be a number between 1 and 10000, not '\(text)'", 64)
        }
        return count
    }

    /// Exits with the status for a store that cannot be opened.
    private func failOpening(_ error: any Error) -> Never {
        guard let error = error as? StoreError else { fail("\(error)", 1) }
        switch error.code {
        case .invalidArgument: fail(error.message, 64)
        case .notAStore, .unsupportedSchema, .damaged, .io, .unavailable: fail(error.message, 74)
        default: fail(error.message, 1)
        }
    }

    private func fail(_ message: String, _ code: Int32) -> Never {
        FileHandle.standardError.write(Data("error: \(message)\n".utf8))
        Foundation.exit(code)
    }
}

/// The server as a service: opens its store (on a PostgreSQL client that runs beside it), then
/// serves it until the group shuts down; a graceful shutdown while the store opens ends the open
/// (`nil`) and serves nothing.
private struct Serving: Service {
    let open: @Sendable () async -> (any ListStoreEngine)?
    let serve: @Sendable (any ListStoreEngine) async throws -> Void

    func run() async throws {
        guard let store = await cancelWhenGracefulShutdown({ await open() }), !Task.isShuttingDownGracefully else { return }
        try await serve(store)
    }
}
