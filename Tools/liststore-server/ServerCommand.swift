import ArgumentParser
import Foundation
import ListStore
import ListStoreServer
import Logging

/// `liststore-server --db D [--host H] [--port P] [--token T]`, which `liststore serve` runs: the
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
            The address is printed on stdout once it accepts connections; requests are logged on stderr. SIGINT or SIGTERM stops accepting connections, ends long \
            polls and event streams, and exits with 0 once the requests under way are answered.

            Exit codes: 0 ok; 1 failure (such as a port in use); 64 usage; 66 no store at --db; 74 I/O \
            error or damaged store.
            """
    )

    @Option(name: .long, help: ArgumentHelp("The store to serve (it must exist).", valueName: "path"))
    var db: String

    @Option(name: .long, help: ArgumentHelp("The address to bind.", valueName: "host"))
    var host = "127.0.0.1"

    @Option(name: .long, help: ArgumentHelp("The port (0: any free port, printed at start).", valueName: "port"))
    var port = 8080

    @Option(name: .long, help: ArgumentHelp("Require 'Authorization: Bearer <token>'.", valueName: "token"))
    var token: String?

    @Option(name: .customLong("max-body-mib"), help: ArgumentHelp("The largest request body accepted, in MiB.", valueName: "MiB"))
    var maxBodyMiB = 32

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535") }
        guard maxBodyMiB >= 1 else { throw ValidationError("--max-body-mib must be 1 or more") }
        if let token, token.isEmpty { throw ValidationError("--token must not be empty") }
    }

    func run() async throws {
        let store: Store
        do {
            store = try Store(path: db)
            guard store.exists else { fail("no store at '\(db)'", 66) }
            _ = try store.identity()
        } catch let error as StoreError {
            fail(error.message, error.code == .notAStore || error.code == .unsupportedSchema || error.code == .damaged || error.code == .io ? 74 : 1)
        }
        let token = token ?? ProcessInfo.processInfo.environment["LISTSTORE_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .info
            return handler
        }
        let server = JournalServer(
            store: store,
            configuration: .init(host: host, port: port, token: token, maxBodyBytes: maxBodyMiB << 20))
        let (db, host) = (db, host)
        do {
            try await server.run { port in
                FileHandle.standardOutput.write(Data("liststore: serving \(db) on http://\(host):\(port)\(token == nil ? "" : " (token required)")\n".utf8))
            }
        } catch {
            fail("cannot serve on \(host):\(port): \(error)", 1)
        }
    }

    private func fail(_ message: String, _ code: Int32) -> Never {
        FileHandle.standardError.write(Data("error: \(message)\n".utf8))
        Foundation.exit(code)
    }
}
