import ArgumentParser
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `liststore serve [--db D] [--host H] [--port P] [--token T] [SERVER OPTIONS…]`: runs `liststore-server`, the HTTP
/// server built next to `liststore` (a product of its own, so that `liststore` itself does not
/// build an HTTP server).
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve a store's lists and journals over HTTP (runs liststore-server).",
        discussion: """
            Serves the documents of 'liststore … --json' under /v1 for 'liststore pull --from URL' \
            and HTTPSource: lists, snapshots, the journal with long polls, diffs, commits, \
            Server-Sent Events. Binds to 127.0.0.1 unless --host says otherwise; with --token (or \
            LISTSTORE_TOKEN) every request needs 'Authorization: Bearer <token>'. SIGINT or SIGTERM \
            shuts it down gracefully (exit 0). Any other option is passed on to liststore-server: \
            limits and timeouts (--max-connections, --max-streams, --max-page-mib, --max-body-mib, \
            --idle-timeout), --event-loops, --allow-host, --allow-origin and \
            --allow-unauthenticated; 'liststore-server --help' lists them.

            The server is the liststore-server executable next to this one ('swift build' builds \
            both; 'swift build --product liststore-server' builds it alone). --db also takes a \
            PostgreSQL URL (postgres://user@host:port/database), which several servers may serve at \
            once; without --db, LISTSTORE_DB names the store. Exit codes: 0 ok; 1 \
            failure (a port in use, no liststore-server); 64 usage; 66 no store at --db; 74 I/O \
            error or damaged store.
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

    @Option(name: .long, help: ArgumentHelp("Require 'Authorization: Bearer <token>' (default: $LISTSTORE_TOKEN).", valueName: "token"))
    var token: String?

    @Argument(
        parsing: .allUnrecognized,
        help: ArgumentHelp("Options of liststore-server, passed on as they are.", valueName: "server-option"))
    var serverOptions: [String] = []

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535") }
    }

    func run() async throws {
        try await Terminal.reportingFailures {
            guard let server = Self.serverExecutable() else {
                throw CommandFailure(
                    "liststore-server is not next to liststore: build it with 'swift build --product liststore-server'",
                    status: ExitStatus.failure)
            }
            var arguments = [server, "--host", host, "--port", String(port)]
            if let db { arguments += ["--db", db] }
            if let token { arguments += ["--token", token] }
            arguments += serverOptions
            let argv = arguments.map { strdup($0) } + [nil]
            // The server takes this process's place: the same pid and parent, and the environment
            // with LISTSTORE_PARENT_PID, so it ends with whatever started `liststore serve`, and a
            // signal to `liststore serve` reaches the server itself. (A child would need the pid of
            // `liststore serve` in its LISTSTORE_PARENT_PID.)
            execv(server, argv)
            throw CommandFailure("cannot run \(server): \(String(cString: strerror(errno)))", status: ExitStatus.failure)
        }
    }

    /// The path of `liststore-server` in this executable's directory, if it is there.
    static func serverExecutable() -> String? {
        guard let me = Bundle.main.executableURL?.resolvingSymlinksInPath() else { return nil }
        let path = me.deletingLastPathComponent().appendingPathComponent("liststore-server").path
        return FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }
}
