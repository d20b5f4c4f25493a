import Foundation
import ListStorePostgres
import ListStorePostgresTestSupport
import ListStoreTestSupport
import Logging
import PostgresNIO
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `liststore serve --db postgres://…` as an operator runs it while the database stumbles: a
/// request in flight on a database that stopped answering is answered 503 within `--db-timeout`,
/// SIGTERM ends the server within `--shutdown-grace` and its bound, and servers that together ask
/// for more connections than the database allows answer every request (some 503), none stalls.
@Suite(
    .serialized, .blockingWaits,
    .enabled(if: PostgresTestEnvironment.url != nil, Comment(rawValue: PostgresTestEnvironment.reason)))
struct PostgresServeFaultTests {
    /// A commit document of `count` items, as `POST /v1/lists/L/commits` takes it.
    static func commitBody(_ count: Int) -> String {
        let elements = (0..<count).map { #"{"id":"e\#($0)","content":\#($0)}"# }.joined(separator: ",")
        return #"{"sections":[{"id":"s","content":0,"elements":[\#(elements)]}]}"#
    }

    /// `curl` with a bound of its own (exit 28 when it passes): the status and the body.
    static func curl(_ arguments: [String], maxTime: Int = 60) throws -> (exit: Int32, status: Int, body: String) {
        let result = try TestCertificates.run(
            "curl", ["-sS", "--max-time", String(maxTime), "-w", "\n%{http_code}"] + arguments, check: false)
        let lines = result.output.split(separator: "\n", omittingEmptySubsequences: false)
        return (result.status, Int(lines.last ?? "") ?? 0, lines.dropLast().joined(separator: "\n"))
    }

    @Test(.timeLimit(.minutes(3))) func aServerOnADatabaseThatStopsAnsweringAnswersAndStopsWhenTold() async throws {
        try await PostgresTestDatabase.withFresh { database in
            // Migrated here, with the test database's generous open timeout: on a loaded machine
            // a fresh database's migration outlasts `serve`'s 30 seconds, which this is not about.
            await (try PostgresStore(configuration: database.configuration)).close()
            let proxy = try FaultyProxy(to: URLComponents(string: database.url)!.port!)
            defer { proxy.stop() }
            try await CLIRunner.offPool {
                let (server, url) = try ServeCommandTests.serve(
                    proxy.url(for: database.url), ["--db-timeout", "2", "--shutdown-grace", "2", "--db-connections", "3"])
                defer { server.send(SIGKILL) }
                let commit = ["-X", "POST", "-H", "Content-Type: application/json", "--data", Self.commitBody(3), "\(url)/v1/lists/l/commits"]
                #expect(try Self.curl(commit).status == 200)

                proxy.mode = .silent
                // Answered by the server within its bound, long before curl's own.
                let refused = try Self.curl(commit)
                #expect(refused.status == 503 && refused.body.contains("\"unavailable\""), "\(refused)")
                let health = try Self.curl(["\(url)/health"])
                #expect(health.status == 503 && health.body.contains("storeUnavailable"), "\(health)")

                // A request under way when SIGTERM comes is answered, and the server ends.
                let inFlight = _Locked<(exit: Int32, status: Int, body: String)?>(nil)
                let done = DispatchSemaphore(value: 0)
                let held = proxy.held
                Thread {
                    inFlight.withLock { $0 = try? Self.curl(commit) }
                    done.signal()
                }.start()
                // Under way: its statement is held by the silent database.
                #expect(proxy.waitUntilHeld(moreThan: held, timeout: .seconds(30)), "the request never reached the database")
                server.send(SIGTERM)
                #expect(server.waitForExit(timeout: .seconds(60)), "SIGTERM did not end the server: \(server.errorOutput.suffix(2000))")
                done.wait()
                let answer = inFlight.withLock { $0 }
                // Answered 503, or refused once the server had stopped listening: never left hanging.
                #expect(answer.map { $0.status == 503 || $0.exit == 7 || $0.exit == 52 || $0.exit == 56 } ?? false, "\(String(describing: answer))")
            }
        }
    }

    @Test(.timeLimit(.minutes(3))) func serversThatAskForMoreConnectionsThanTheDatabaseAllowsAnswerEveryRequest() async throws {
        let role = "liststore_limited_\(UInt32.random(in: 0...UInt32.max))"
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let admin = try PostgresStore.Configuration(url: PostgresTestEnvironment.url!, logger: logger).makeClient()
        let adminRunning = Task { await admin.run() }
        defer { adminRunning.cancel() }
        try await PostgresTestDatabase.withFresh { database in
            // The servers' role may hold 4 sessions (a role's limit: a superuser's is not
            // enforced); three servers of 3 connections each ask for 9.
            for statement in ["CREATE ROLE \(role) LOGIN CONNECTION LIMIT 4", "ALTER DATABASE \(database.name) OWNER TO \(role)"] {
                _ = try await admin.query(PostgresQuery(unsafeSQL: statement), logger: logger)
            }
            var components = URLComponents(string: database.url)!
            components.user = role
            let url = components.string!
            try await CLIRunner.offPool {
                // One creates the schema and the list before the others start.
                var servers: [(StreamingProcess, String)] = []
                defer { for (server, _) in servers { server.send(SIGKILL) } }
                for _ in 0..<3 {
                    servers.append(try ServeCommandTests.serve(url, ["--db-timeout", "3", "--db-connections", "3"]))
                    if servers.count == 1 {
                        let first = ["-X", "POST", "-H", "Content-Type: application/json", "--data", Self.commitBody(3), "\(servers[0].1)/v1/lists/l/commits"]
                        #expect(try Self.curl(first).status == 200)
                    }
                }
                // 60 requests at once, 20 through each server: reads and commits.
                let answers = _Locked<[(exit: Int32, status: Int, body: String)]>([])
                let group = DispatchGroup()
                for k in 0..<60 {
                    let base = servers[k % 3].1
                    let arguments =
                        k % 2 == 0
                        ? ["\(base)/v1/lists/l"]
                        : ["-X", "POST", "-H", "Content-Type: application/json", "--data", Self.commitBody(4 + k), "\(base)/v1/lists/l/commits"]
                    group.enter()
                    Thread {
                        let answer = (try? Self.curl(arguments)) ?? (exit: -1, status: 0, body: "")
                        answers.withLock { $0.append(answer) }
                        group.leave()
                    }.start()
                }
                group.wait()
                let all = answers.withLock { $0 }
                #expect(all.count == 60)
                // Every request answered (none left to curl's bound): landed, or refused clearly.
                for answer in all {
                    #expect(answer.exit == 0 && [200, 503].contains(answer.status), "\(answer)")
                    if answer.status == 503 { #expect(answer.body.contains("\"unavailable\""), "\(answer)") }
                }
                #expect(all.contains { $0.status == 200 })
                for (server, _) in servers {
                    server.send(SIGTERM)
                    #expect(server.waitForExit(timeout: .seconds(60)))
                }
            }
        }
        _ = try await admin.query(PostgresQuery(unsafeSQL: "DROP ROLE IF EXISTS \(role)"), logger: logger)
    }
}
