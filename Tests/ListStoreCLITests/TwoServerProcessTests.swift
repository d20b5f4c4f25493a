import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ListDiffTestSupport
import ListJSON
import ListStorePostgresTestSupport
import Logging
import PostgresNIO
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Two `liststore serve` processes on one PostgreSQL database: writers through both
/// only ever conflict, followers of both see every commit, replicas pulled from either equal the
/// source, a server killed mid-commit leaves the other serving, and a follower outlives a restart
/// of the database's connections.
@Suite(
    .serialized, .blockingWaits,
    .enabled(if: PostgresTestEnvironment.url != nil, Comment(rawValue: PostgresTestEnvironment.reason)))
struct TwoServerProcessTests {
    @Test func twoServersShareOneDatabase() async throws {
        do {
            try await scenario()
        } catch let error as PSQLError {
            Issue.record("\(String(reflecting: error))")
        }
    }

    private func scenario() async throws {
        try await PostgresTestDatabase.withFresh { database in
            let temporary = try TemporaryDirectory()
            let dir = temporary.url.path
            let servers = try await CLIRunner.offPool { try Self.startServers(database.url) }
            defer {
                for (server, _) in servers { server.send(SIGKILL) }
                for (server, _) in servers { _ = server.waitForExit(timeout: .seconds(10)) }
            }
            let (a, b) = (servers[0].1, servers[1].1)
            let followerB = try await CLIRunner.offPool { try Self.writersReplicasAndFollowers(a, b, dir) }
            defer {
                followerB.send(SIGKILL)
                _ = followerB.waitForExit(timeout: .seconds(10))
            }
            try await CLIRunner.offPool { try Self.killOneMidCommit(servers[0], database.url, b, followerB, dir) }

            // The database drops every connection and refuses new ones for two seconds, as a
            // restart does; server B reconnects, and its follower sees the next commit.
            try await database.withServerSQL { client in
                let logger = Logger(label: "TwoServerProcessTests")
                let name = database.name
                _ = try await client.query(PostgresQuery(unsafeSQL: "ALTER DATABASE \(name) ALLOW_CONNECTIONS false"), logger: logger)
                _ = try await client.query(
                    PostgresQuery(unsafeSQL: """
                        SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                        WHERE datname = '\(name)'
                        """), logger: logger)
                try await Task.sleep(for: .seconds(2))
                _ = try await client.query(PostgresQuery(unsafeSQL: "ALTER DATABASE \(name) ALLOW_CONNECTIONS true"), logger: logger)
            }
            try await CLIRunner.offPool { try Self.followerResumes(b, followerB) }
        }
    }

    /// The store feed through two servers on one database, with writers committing concurrently
    /// through both to many lists (new ones among them): a follower that reads `/v1/changes` from
    /// one server and then the other, resuming each time from the last cursor it got, receives
    /// every commit exactly once, each list's in order; and a replica set following each server
    /// (`pull --lists '**' --follow`) ends equal to the source.
    @Test func theFeedThroughTwoServersHasNoGaps() async throws {
        try await PostgresTestDatabase.withFresh { database in
            let temporary = try TemporaryDirectory()
            let dir = temporary.url.path
            let servers = try await CLIRunner.offPool { try Self.startServers(database.url) }
            defer {
                for (server, _) in servers { server.send(SIGKILL) }
                for (server, _) in servers { _ = server.waitForExit(timeout: .seconds(10)) }
            }
            try await CLIRunner.offPool { try Self.feedWithoutGaps(servers[0].1, servers[1].1, dir) }
        }
    }

    // MARK: Phases (each blocks its thread: they wait for processes)

    private static func feedWithoutGaps(_ a: String, _ b: String, _ dir: String) throws {
        let followers = [a, b].enumerated().map { k, server in
            try? StreamingProcess(["pull", "--from", server, "--lists", "**", "--replica", dir + "/set\(k).liststore", "--follow", "--json"])
        }
        defer {
            for follower in followers {
                follower?.send(SIGINT)
                _ = follower?.waitForExit(timeout: .seconds(30))
            }
        }
        let committed = _Locked([String]())
        let (writers, rounds) = (4, 12)
        let group = DispatchGroup()
        for writer in 0..<writers {
            group.enter()
            Thread {
                defer { group.leave() }
                for round in 0..<rounds {
                    let server = (writer + round) % 2 == 0 ? a : b
                    let list = "w\(writer)-l\(round % 3)"
                    let answer = try? HTTP.request(
                        "POST", server + "/v1/lists/\(list)/commits", body: #"{"sections":\#(Self.document(writer, round))}"#)
                    if let answer, answer.status == 200, let version = try? HTTP.object(answer)["version"]?.intValue {
                        committed.withLock { $0.append("\(list)@\(version)") }
                    }
                }
            }.start()
        }
        // The follower: long polls of the feed through A, then B, then A…, each from the last cursor.
        var received: [String] = []
        var cursor: String?
        var turn = 0
        var quietAfterWriters = 0
        while quietAfterWriters < 2 {
            let writing = group.wait(timeout: .now()) == .timedOut
            let server = turn % 2 == 0 ? a : b
            turn += 1
            let query = "lists=**&limit=7&wait=1" + (cursor.map { "&since=\($0)" } ?? "")
            let page = try HTTP.object(HTTP.request("GET", server + "/v1/changes?" + query))
            for event in page["events"]?.arrayValue ?? [] {
                let list = event["list"]?.stringValue ?? "?"
                received.append("\(list)@\(event["entry"]?["version"]?.intValue ?? -1)")
            }
            cursor = page["cursor"]?.stringValue
            if !writing, page["events"]?.arrayValue?.isEmpty == true, page["hasMore"]?.boolValue == false { quietAfterWriters += 1 }
        }
        let all = committed.withLock { $0 }
        #expect(all.count == writers * rounds)
        #expect(received.count == all.count, "received \(received.count) events for \(all.count) commits")
        #expect(Set(received) == Set(all) && Set(received).count == received.count, "each commit once")
        // Each list's versions in order.
        var last: [String: Int] = [:]
        for event in received {
            let parts = event.split(separator: "@")
            let (list, version) = (String(parts[0]), Int(parts[1]) ?? -1)
            #expect(version == (last[list] ?? 0) + 1, "\(event) after \(last[list] ?? 0)")
            last[list] = version
        }
        // The replica sets reach the source's head of every list.
        let heads = Dictionary(uniqueKeysWithValues: last.map { ($0.key, $0.value) })
        for (k, follower) in followers.enumerated() {
            guard let follower else {
                Issue.record("follower \(k) did not start")
                continue
            }
            for (list, version) in heads {
                #expect(
                    follower.waitForLine(timeout: .seconds(60)) { $0.contains(#""list":"\#(list)""#) && $0.contains(#""version":\#(version)"#) } != nil
                        || (try? CLIRunner.run(["show", "--db", dir + "/set\(k).liststore", "--list", list, "--json"]).object()["version"]?.intValue) == version,
                    "set \(k): \(list) at \(version): \(follower.errorOutput)")
            }
        }
    }

    private static func startServers(_ url: String) throws -> [(StreamingProcess, String)] {
        let first = try ServeCommandTests.serve(url)
        do {
            return [first, try ServeCommandTests.serve(url)]
        } catch {
            first.0.send(SIGKILL)
            throw error
        }
    }

    /// Writers commit through both servers with expected versions; a replica pulls alternately
    /// from both; followers long-poll both. Returns the follower of B, still running.
    private static func writersReplicasAndFollowers(_ a: String, _ b: String, _ dir: String) throws -> StreamingProcess {
        #expect(try HTTP.commit(a, Self.document(0, 0), expectedVersion: 0).status == 200)
        let followerA = try StreamingProcess(["pull", "--from", a, "--list", "l", "--replica", dir + "/fa.liststore", "--follow", "--json"])
        let followerB = try StreamingProcess(["pull", "--from", b, "--list", "l", "--replica", dir + "/fb.liststore", "--follow", "--json"])
        #expect(followerA.waitForLine(timeout: .seconds(60)) { $0.contains(#""version":1"#) } != nil)
        #expect(followerB.waitForLine(timeout: .seconds(60)) { $0.contains(#""version":1"#) } != nil)

        let outcomes = _Locked([(status: Int, version: Int?)]())
        let writers = 4
        let rounds = 8
        let group = DispatchGroup()
        for writer in 0..<writers {
            group.enter()
            Thread {
                defer { group.leave() }
                for round in 0..<rounds {
                    let server = (writer + round) % 2 == 0 ? a : b
                    do {
                        let summary = try HTTP.object(HTTP.request("GET", server + "/v1/lists/l"))
                        let version = summary["version"]?.intValue ?? -1
                        let answer = try HTTP.commit(server, Self.document(writer + 1, round), expectedVersion: version)
                        let committed = answer.status == 200 ? try HTTP.object(answer)["version"]?.intValue : nil
                        outcomes.withLock { $0.append((answer.status, committed)) }
                    } catch {
                        outcomes.withLock { $0.append((-1, nil)) }
                    }
                }
            }.start()
        }
        // Meanwhile a replica pulls from A and B in turn, and always equals the source at the
        // version it reports.
        let replica = dir + "/alternating.liststore"
        for k in 0..<6 {
            let server = k % 2 == 0 ? a : b
            let other = k % 2 == 0 ? b : a
            let pull = try CLIRunner.run(["pull", "--from", server, "--list", "l", "--replica", replica, "--json"])
            #expect(pull.status == 0, "\(pull.stderr)")
            guard pull.status == 0, let version = try pull.object()["version"]?.intValue else { continue }
            let at = try HTTP.object(HTTP.request("GET", other + "/v1/lists/l/snapshot?at=\(version)"))
            let mine = try CLIRunner.run(["show", "--db", replica, "--list", "l", "--json"]).object()
            #expect(mine["digest"] == at["digest"] && mine["version"]?.intValue == version, "pull \(k)")
        }
        group.wait()

        let all = outcomes.withLock { $0 }
        #expect(all.count == writers * rounds)
        #expect(all.allSatisfy { $0.status == 200 || $0.status == 409 }, "\(all.map(\.status))")
        let versions = all.compactMap(\.version).sorted()
        #expect(!versions.isEmpty && versions == Array(2..<(2 + versions.count)), "every success is a version of its own")
        let head = try HTTP.object(HTTP.request("GET", b + "/v1/lists/l"))["version"]?.intValue ?? -1
        #expect(head == 1 + versions.count)
        for follower in [followerA, followerB] {
            #expect(follower.waitForLine(timeout: .seconds(60)) { $0.contains(#""version":\#(head)"#) } != nil, "\(follower.errorOutput)")
        }
        followerA.send(SIGINT)
        #expect(followerA.waitForExit(timeout: .seconds(30)))
        return followerB
    }

    /// Server A is killed at random instants of a large commit (aimed by how long one takes
    /// through B), and started again: B holds the old or the new version, whole, each time, commits
    /// on, and B's follower sees that.
    private static func killOneMidCommit(
        _ serverA: (StreamingProcess, String), _ url: String, _ b: String, _ followerB: StreamingProcess, _ dir: String
    ) throws {
        var version = try HTTP.object(HTTP.request("GET", b + "/v1/lists/l"))["version"]?.intValue ?? -1
        let clock = ContinuousClock()
        let started = clock.now
        #expect(try HTTP.commit(b, Self.document(9, 1, elements: 20_000), expectedVersion: version).status == 200)
        let took = clock.now - started
        let micros = max(50_000, Int(took.components.seconds) * 1_000_000 + Int(took.components.attoseconds / 1_000_000_000_000))
        version += 1

        var (server, a) = serverA
        for attempt in 0..<4 {
            if attempt > 0 { (server, a) = try ServeCommandTests.serve(url) }
            let (before, target) = (version, a)
            let sent = DispatchSemaphore(value: 0)
            Thread {
                // Killed before it connects, during the commit or after it: any answer, or none.
                _ = try? HTTP.commit(target, Self.document(9, attempt + 2, elements: 20_000), expectedVersion: before)
                sent.signal()
            }.start()
            // A's first commit also reads the head's rows, which B had cached: up to twice as long.
            usleep(UInt32(Int.random(in: 0...(micros * 2))))
            server.send(SIGKILL)
            #expect(server.waitForExit(timeout: .seconds(30)))
            _ = sent.wait(timeout: .now() + 60)

            let summary = try HTTP.object(HTTP.request("GET", b + "/v1/lists/l"))
            version = summary["version"]?.intValue ?? -1
            #expect(version == before || version == before + 1, "attempt \(attempt)")
            let snapshot = try HTTP.object(HTTP.request("GET", b + "/v1/lists/l/snapshot"))
            #expect(snapshot["digest"] == summary["digest"])
        }
        let answer = try HTTP.commit(b, Self.document(5, 5), expectedVersion: version)
        #expect(answer.status == 200, "\(String(decoding: answer.body, as: UTF8.self))")
        version += 1
        #expect(followerB.waitForLine(timeout: .seconds(60)) { $0.contains(#""version":\#(version)"#) } != nil)
        // A new replica of B checks every digest on its way.
        let pull = try CLIRunner.run(["pull", "--from", b, "--list", "l", "--replica", dir + "/after-kill.liststore", "--json"])
        #expect(pull.status == 0 && (try? pull.object()["version"]?.intValue) == version, "\(pull.stderr)")
    }

    /// After the connections came back: a commit through B (retried while B reconnects) reaches
    /// B's follower.
    private static func followerResumes(_ b: String, _ followerB: StreamingProcess) throws {
        var committed: Int?
        for _ in 0..<60 where committed == nil {
            if let summary = try? HTTP.object(HTTP.request("GET", b + "/v1/lists/l")), let version = summary["version"]?.intValue,
                let answer = try? HTTP.commit(b, Self.document(6, version), expectedVersion: version), answer.status == 200
            {
                committed = version + 1
            } else {
                sleep(1)
            }
        }
        guard let committed else {
            Issue.record("server B did not commit after the database came back")
            return
        }
        #expect(followerB.waitForLine(timeout: .seconds(60)) { $0.contains(#""version":\#(committed)"#) } != nil, "\(followerB.errorOutput)")
        followerB.send(SIGINT)
        #expect(followerB.waitForExit(timeout: .seconds(30)))
    }

    // MARK: Helpers

    /// A snapshot document: writer `w`'s version `k`, `elements` elements over two sections.
    private static func document(_ w: Int, _ k: Int, elements: Int = 40) -> String {
        let sections = (0..<2).map { s in
            let items = (0..<elements / 2).map { e in #"{"id":"e\#(s)-\#(e)","content":{"w":\#(w),"k":\#(k),"n":\#(e)}}"# }
            return #"{"id":"s\#(s)","content":\#(s),"elements":[\#(items.joined(separator: ","))]}"#
        }
        return "[\(sections.joined(separator: ","))]"
    }
}

/// Blocking HTTP requests for the process tests (their threads wait anyway).
enum HTTP {
    struct Answer {
        var status: Int
        var body: [UInt8]
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static func request(_ method: String, _ url: String, body: String? = nil, bytes: [UInt8]? = nil, token: String? = nil) throws -> Answer {
        var request = URLRequest(url: URL(string: url)!, timeoutInterval: 120)
        request.httpMethod = method
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let body {
            request.httpBody = Data(body.utf8)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        if let bytes {
            request.httpBody = Data(bytes)
            request.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
        }
        let result = _Locked<Result<Answer, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        URLSession.shared.dataTask(with: request) { data, response, error in
            if let error {
                result.withLock { $0 = .failure(error) }
            } else {
                let status = (response as? HTTPURLResponse)?.statusCode ?? -1
                result.withLock { $0 = .success(Answer(status: status, body: Array(data ?? Data()))) }
            }
            done.signal()
        }.resume()
        done.wait()
        return try result.withLock { $0! }.get()
    }

    /// `POST /v1/lists/l/commits` with `sections` (a JSON array) and `expectedVersion`.
    static func commit(_ server: String, _ sections: String, expectedVersion: Int) throws -> Answer {
        try request("POST", server + "/v1/lists/l/commits", body: #"{"sections":\#(sections),"expectedVersion":\#(expectedVersion)}"#)
    }

    /// The answer's body as a JSON object.
    static func object(_ answer: Answer) throws -> JSONObject {
        guard case .object(let object) = try JSONValue(parsing: answer.body) else {
            throw Failure(description: "not a JSON object: \(String(decoding: answer.body, as: UTF8.self))")
        }
        return object
    }
}
