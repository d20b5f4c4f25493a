import Foundation
import ListStore
@testable import ListStorePostgres
import ListStorePostgresTestSupport
@testable import ListStoreServer
import ListStoreTestSupport
import ListStoreWire
import Logging
import PostgresNIO
import Testing

/// A server on PostgreSQL while the database stumbles: it stops answering (a network that drops
/// everything), restarts (every connection broken, new ones refused), terminates backends, or
/// holds a row lock. Every request is answered within its bound (503 with the code that says
/// whether the change may have landed), its connection slot is freed, `/health` says 503, nothing
/// acknowledged is lost or doubled, and once the database is back the followers get the commits.
/// The faults come from a proxy in front of the test server (`FaultyProxy`), and from
/// `pg_terminate_backend`.
@Suite(.enabled(if: PostgresTestEnvironment.url != nil || PostgresTestEnvironment.inCI), .timeLimit(.minutes(3)))
struct PostgresFaultTests {
    /// A store through `proxy`, whose operations are bounded by `timeout`, with its sessions named
    /// `name` (for `pg_terminate_backend`).
    static func store(
        _ database: PostgresTestDatabase, through proxy: FaultyProxy, timeout: Duration = .seconds(5), lockTimeout: Duration = .seconds(1),
        name: String = "liststore-faults"
    ) async throws -> PostgresStore {
        var configuration = try PostgresStore.Configuration(url: proxy.url(for: database.url), logger: database.configuration.logger)
        configuration.operationTimeout = timeout
        configuration.lockTimeout = lockTimeout
        configuration.applicationName = name
        configuration.postgres.options.connectTimeout = .seconds(1)
        return try await PostgresStore(configuration: configuration)
    }

    static func port(of url: String) -> Int { URLComponents(string: url)!.port! }

    /// Runs `body` with a fresh database whose list "l" is at version 1: a store opened on it
    /// directly (another server's), the proxy, and a store through the proxy.
    static func withProxiedStore(_ body: (PostgresStore, FaultyProxy, PostgresStore) async throws -> Void) async throws {
        try await PostgresTestDatabase.withFresh { database in
            let direct = try await PostgresStore(configuration: database.configuration)
            defer { Task { await direct.close() } }
            try await direct.commit(linearList(3), to: "l")
            let proxy = try FaultyProxy(to: Self.port(of: database.url))
            defer { proxy.stop() }
            let store = try await Self.store(database, through: proxy)
            defer { Task { await store.close() } }
            try await body(direct, proxy, store)
        }
    }

    /// The code of an error answer.
    static func code(_ body: [UInt8]) -> String? { (try? WireDocument.decodeError(body))?.code }

    /// A database that stops answering: commits, reads and `/health` are answered 503 (the store's
    /// `unavailable`, `/health`'s `storeUnavailable`) within their bounds, not when the client gives
    /// up; the slots come back; once the database answers again, a long poll waiting at the head
    /// gets a commit another server made, and commits through this server land.
    @Test func aDatabaseThatStopsAnsweringIsAnswered503AndFollowersResumeAfter() async throws {
        try await Self.withProxiedStore { direct, proxy, store in
            try await ServerHarness.with(store, .init(port: 0, keepAliveInterval: .seconds(1))) { server in
                let connections = server.server.state.connections
                try await server.waitUntilHealthy()
                let before = connections.current

                proxy.mode = .silent
                let commit = try await server.request("/v1/lists/l/commits", method: "POST", body: AccessServerTests.commitBody(1))
                #expect(commit.status == 503 && Self.code(commit.body) == "unavailable", "\(String(decoding: commit.body, as: UTF8.self))")
                #expect((commit.headers["Retry-After"] as? String) != nil)
                let read = try await server.request("/v1/lists/l")
                #expect(read.status == 503 && Self.code(read.body) == "unavailable")
                let health = try await server.request("/health")
                #expect(health.status == 503 && Self.code(health.body) == "storeUnavailable")
                try await waitUntil("the slots are free") { connections.current <= before }

                // Back: a long poll at the head gets the commit of another server.
                proxy.mode = .forwarding
                try await waitUntil("the store answers again", every: .milliseconds(100)) {
                    (try? await server.request("/health").status) == 200
                }
                let poll = Task { () async throws -> (status: Int, body: [UInt8]) in let answer = try await server.request("/v1/lists/l/journal?since=1&wait=30"); return (answer.status, answer.body) }
                try await waitUntil("the poll waits") { server.server.state.streams.current >= 1 }
                try await direct.commit(linearList(4), to: "l")
                let answer = try await poll.value
                #expect(answer.status == 200 && String(decoding: answer.body, as: UTF8.self).contains("\"version\":2"))
                let landed = try await server.request("/v1/lists/l/commits", method: "POST", body: AccessServerTests.commitBody(2, count: 5))
                #expect(landed.status == 200, "\(String(decoding: landed.body, as: UTF8.self))")
            }
            #expect(try await direct.snapshot(of: "l").version == 3)
        }
    }

    /// A database that restarts breaks every connection: requests are answered 503 `unavailable`
    /// at once, and once it is back the server's listener for other servers' commits is too, so a
    /// follower is woken by the commit of another server even when the server polls only once a
    /// minute.
    @Test func aDatabaseThatRestartsWakesTheFollowersOnceBack() async throws {
        try await Self.withProxiedStore { direct, proxy, store in
            var configuration = JournalServer.Configuration(port: 0, keepAliveInterval: .seconds(1))
            configuration.pollInterval = .seconds(60)
            try await ServerHarness.with(store, configuration) { server in
                // The listener runs (a commit of another server wakes a poll).
                let first = try await Self.pollThatWaits(server, since: 1)
                try await direct.commit(linearList(4), to: "l")
                #expect(try await first.value.status == 200)

                proxy.mode = .refusing
                let commit = try await server.request("/v1/lists/l/commits", method: "POST", body: AccessServerTests.commitBody(2))
                #expect(commit.status == 503 && Self.code(commit.body) == "unavailable", "\(String(decoding: commit.body, as: UTF8.self))")
                proxy.mode = .forwarding
                try await waitUntil("the store answers again", every: .milliseconds(100)) {
                    (try? await server.request("/health").status) == 200
                }
                // Another server's commit wakes a poll at the head: through the listener's NOTIFY
                // once it listens again, or through its restart, which counts as a commit. The
                // pool's other connections may still be coming back after `/health` is.
                let poll = try await Self.pollThatWaits(server, since: 2)
                try await direct.commit(linearList(5), to: "l")
                let answer = try await poll.value
                #expect(answer.status == 200 && String(decoding: answer.body, as: UTF8.self).contains("\"version\":3"))
            }
        }
    }

    /// A long poll of list "l" at `since` through `server`, once it waits at the server or was
    /// answered otherwise than 503. A poll answered 503 (a pooled connection not back yet after a
    /// restart, or an operation that outlasted its bound on a machine loaded by every suite at
    /// once) is sent again once `/health` answers 200, as a follower sends it, 50 times at most.
    static func pollThatWaits(_ server: ServerHarness, since: Int) async throws -> Task<(status: Int, body: [UInt8]), any Error> {
        var refused = 0
        while true {
            let ended = _Locked(false)
            let poll = Task { () async throws -> (status: Int, body: [UInt8]) in
                defer { ended.withLock { $0 = true } }
                let answer = try await server.request("/v1/lists/l/journal?since=\(since)&wait=30")
                return (answer.status, answer.body)
            }
            try await waitUntil("the poll waits or is answered") { server.server.state.streams.current >= 1 || ended.withLock { $0 } }
            guard ended.withLock({ $0 }), let early = try? await poll.value, early.status == 503, refused < 50 else { return poll }
            refused += 1
            try await waitUntil("the store answers again", every: .milliseconds(100)) {
                (try? await server.request("/health").status) == 200
            }
        }
    }

    /// A row lock held past the lock timeout (from another session) is 503 `unavailable`, not a
    /// version conflict: nothing changed, and the same commit lands once the lock is let go.
    @Test func aLockHeldPastTheLockTimeoutIsUnavailableNotAConflict() async throws {
        try await PostgresTestDatabase.withFresh { database in
            let proxy = try FaultyProxy(to: Self.port(of: database.url))
            defer { proxy.stop() }
            let store = try await Self.store(database, through: proxy, timeout: .seconds(10), lockTimeout: .milliseconds(500))
            defer { Task { await store.close() } }
            try await store.commit(linearList(3), to: "l")
            var logger = Logger(label: "test")
            logger.logLevel = .critical
            // Another session, which holds the lock as long as the test needs (its own sessions'
            // bounds are not the store's).
            var holder = database.configuration
            holder.operationTimeout = .seconds(600)
            let client = holder.makeClient()
            let running = Task { await client.run() }
            defer { running.cancel() }
            try await client.withConnection { connection in
                _ = try await connection.query("BEGIN", logger: logger)
                _ = try await connection.query("SELECT name FROM list WHERE name = 'l' FOR UPDATE", logger: logger)
                let refused = await #expect(throws: StoreError.self) { try await store.commit(linearList(4), to: "l") }
                #expect(refused?.code == .unavailable, "\(String(describing: refused))")
                try await ServerHarness.with(store) { server in
                    let answer = try await server.request("/v1/lists/l/commits", method: "POST", body: AccessServerTests.commitBody(1))
                    #expect(answer.status == 503 && Self.code(answer.body) == "unavailable", "\(String(decoding: answer.body, as: UTF8.self))")
                }
                _ = try await connection.query("ROLLBACK", logger: logger)
            }
            #expect(try await store.snapshot(of: "l").version == 1)
            try await store.commit(linearList(4), to: "l", expectedVersion: 1)
            #expect(try await store.snapshot(of: "l").version == 2)
        }
    }

    /// Backends terminated again and again while a writer commits with `expectedVersion`: each
    /// commit lands, or fails `unavailable` (and did not land), or `outcomeUnknown` (and the head
    /// says whether it did). Every acknowledged commit is in the journal exactly once, and the
    /// store verifies.
    @Test func terminatedBackendsLoseNoAcknowledgedCommit() async throws {
        try await PostgresTestDatabase.withFresh { database in
            let direct = try await PostgresStore(configuration: database.configuration)
            defer { Task { await direct.close() } }
            let proxy = try FaultyProxy(to: Self.port(of: database.url))
            defer { proxy.stop() }
            let name = "liststore-faults-\(UInt32.random(in: 0...UInt32.max))"
            let store = try await Self.store(database, through: proxy, name: name)
            defer { Task { await store.close() } }
            // The first version through the direct store, whose bound is the test database's: the
            // faulty store's short one is for the faults (with every suite at once, this commit
            // once outlasted it before any fault began).
            try await direct.commit(linearList(1), to: "l")
            // A DBA's `pg_terminate_backend` of the store's sessions, 15 times, 50 to 250 ms apart.
            let admin = database.configuration.makeClient()
            let adminRunning = Task { await admin.run() }
            defer { adminRunning.cancel() }
            let terminating = Task {
                var terminated = 0
                for _ in 0..<15 where !Task.isCancelled {
                    try? await Task.sleep(for: .milliseconds(Int.random(in: 50...250)))
                    let rows = try? await admin.query(
                        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = \(name) AND pid <> pg_backend_pid()",
                        logger: database.configuration.logger)
                    if let rows { for try await count in rows.decode(Int.self) { terminated += count } }
                }
                return terminated
            }
            var acknowledged: [Int: Int] = [1: 1]  // version → the item count its snapshot has
            var version = 1
            var outcomes = (landed: 0, unavailable: 0, unknown: 0)
            for count in 2...60 {
                while true {
                    do {
                        let result = try await store.commit(linearList(count), to: "l", expectedVersion: version)
                        version = result.version
                        acknowledged[version] = count
                        outcomes.landed += 1
                        break
                    } catch StoreError.Code.unavailable {
                        outcomes.unavailable += 1
                    } catch StoreError.Code.outcomeUnknown {
                        outcomes.unknown += 1
                        // Whether it landed: the head says (read through the direct store).
                        let head = try await direct.snapshot(of: "l")
                        if head.version == version + 1, head.sections == linearList(count) {
                            version = head.version
                            acknowledged[version] = count
                            break
                        }
                    } catch StoreError.Code.versionConflict {
                        Issue.record("a commit with the head's version conflicted: only this writer writes")
                        return
                    }
                }
            }
            let terminated = try await terminating.value
            let head = try await direct.snapshot(of: "l")
            #expect(head.version == version && head.sections == linearList(60), "\(outcomes), \(terminated) sessions terminated")
            for (version, count) in acknowledged {
                #expect(try await direct.snapshot(of: "l", at: version).sections == linearList(count))
            }
            #expect(try await direct.verify().isValid)
        }
    }
}
