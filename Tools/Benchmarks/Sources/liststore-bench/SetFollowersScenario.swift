#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Crypto
import Foundation
import ListStore

/// set-followers-10k: 10,000 users, each following their own 10 lists (100,000 lists in the store)
/// over one event stream of the store feed (`GET /v1/events?lists=users/<user>/**`) with a token of
/// their own, from a `JournalServer` in another process that verifies the tokens (ES256) and grants
/// each user `users/{sub}/**`. Commits land on random lists; how long after a commit returns does
/// the one follower whose list it is have it?
///
/// The scenario process creates the store (one small commit per list), raises its open-file limit
/// as http-followers does, starts the server (this executable again, with a hidden flag and the
/// access file), and opens the followers (`HTTPFollowerPool` in feed mode: raw sockets, one thread
/// with epoll), each from the feed's position after the lists were made. Once every follower's
/// stream is open and waiting, one untimed warm-up commit; then `commitCount` commits,
/// `spacingMs` apart, each to a random list of a random user, timed as each `commit` returns.
/// latency = the owner's arrival (at its socket: `HTTPFollowerPool`'s "Two times") − commit
/// return; every commit must reach its owner and no one else (`missingDeliveries` 0,
/// `deliveries` = commits).
///
/// - ours: 10,000 set followers;
/// - the baseline, measured first in the same run: the same server and writer with 1 set follower,
///   whose lists get every commit.
///
/// ours_ms and baseline_ms are p99 latencies (nearest rank); details hold p50, max, the deliveries,
/// peakMemoryMB (the server's, with 10,000 followers; the target is ≤ 1 GB) and the server's
/// `/metrics` figures.
struct SetFollowersScenario {
    static let name = "set-followers-10k"
    static let baselineName = "the same server and writer with 1 set follower"
    static let target = Target(minRatio: nil, maxOursMs: 250)
    static let users = 10_000
    static let listsPerUser = 10
    static let commitCount = 200
    static let spacingMs = 25
    /// Hidden arguments: `liststore-bench --serve-journal-access PATH ACCESS_FILE`.
    static let serveFlag = "--serve-journal-access"

    static var scenario: Scenario {
        Scenario(
            name: name,
            summary: "commit to one of 100,000 lists → delivered to its owner among \(users) users following their 10 lists over one event stream each (p99) vs \(baselineName)",
            target: target
        ) { () throws(ScenarioFailure) in try SetFollowersScenario().run() }
    }

    let log = ScenarioLog(scenario: name)

    func run() throws(ScenarioFailure) -> ScenarioResult {
        do {
            return try measure()
        } catch let failure as ScenarioFailure {
            throw failure
        } catch {
            throw log.failure("\(error)")
        }
    }

    private static func list(user: Int, _ k: Int) -> String { "users/u\(user)/l\(k)" }

    private func measure() throws -> ScenarioResult {
        signal(SIGPIPE, SIG_IGN)
        let openFiles = try HTTPFollowersScenario.raiseOpenFileLimit(log, wanted: rlim_t(Self.users + 256))
        guard openFiles >= rlim_t(Self.users + 64) else { throw log.failure("the open-file limit is \(openFiles), too low") }
        let directory = try TemporaryDirectory(label: Self.name)
        defer { directory.remove() }
        let path = directory.file("set.liststore")
        let store = try Store(path: path)
        let started = ContinuousClock.now
        let model = ListItem(id: "s", json: ["title": "list"])
        for user in 0..<Self.users {
            for k in 0..<Self.listsPerUser {
                try store.commit([ListSection(model: model, elements: [ListItem(id: "e0", json: 0)])], to: Self.list(user: user, k))
            }
            if user % 1_000 == 999 { log.progress("\((user + 1) * Self.listsPerUser) lists made") }
        }
        try store.checkpoint()
        log.progress("\(Self.users * Self.listsPerUser) lists made in \(Format.fixed(Measurement.milliseconds(ContinuousClock.now - started) / 1000, decimals: 1)) s")
        let identity = try store.identity()
        var head = try store.feed(after: nil, limit: 20_000, including: { _ in false })
        while head.hasMore { head = try store.feed(after: head.position, limit: 20_000, including: { _ in false }) }
        var position = head.position

        let key = P256.Signing.PrivateKey()
        let accessPath = directory.file("access.json")
        let rule = #"{"keys": {"keys": [\#(Self.jwk(key))]}, "issuer": "https://auth.example", "audience": "liststore", "rules": [{"lists": "users/{sub}/**", "grant": "read"}]}"#
        guard FileManager.default.createFile(atPath: accessPath, contents: Data(rule.utf8)) else { throw log.failure("cannot write \(accessPath)") }
        let tokens = try (0..<Self.users).map { try AuthOverheadScenario.token(key, sub: "u\($0)") }

        var random = SplitMix64(seed: 0x5E7_F011)
        var sides: [(latencies: [Double], missing: Int, extra: Int, peak: Double?, metrics: [String: Double])] = []
        var failures: [String] = []
        for followers in [1, Self.users] {
            let who = followers == 1 ? "baseline (1 set follower)" : "ours (\(followers) set followers)"
            let server = try HTTPFollowersScenario.ServerProcess(arguments: [Self.serveFlag, path, accessPath])
            let warmUp = position + 1
            let (first, last) = (warmUp + 1, warmUp + Self.commitCount)
            let requests = (0..<followers).map { user in
                (prefix: "GET /v1/events?lists=users%2Fu\(user)%2F%2A%2A&since=\(identity.uuid).\(identity.epoch).",
                 suffix: " HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\nAccept: text/event-stream\r\nAuthorization: Bearer \(tokens[user])\r\n\r\n")
            }
            let pool = HTTPFollowerPool(port: server.port, feedRequests: requests, since: position, firstVersion: first, lastVersion: last)
            let thread = Thread { pool.run() }
            thread.name = "set-followers"
            thread.start()
            var owners: [Int] = []
            var returnedAt: [Int64] = []
            let measured = Result { () throws -> Void in
                try HTTPFollowersScenario.waitFor("every follower waiting", pool, timeoutSeconds: 180, scenario: Self.name) { $0.waitingSince >= position }
                // The warm-up: to the first follower's list.
                try store.commit([ListSection(model: model, elements: [ListItem(id: "e0", json: -1)])], to: Self.list(user: 0, 0))
                position += 1
                try HTTPFollowersScenario.waitFor("the warm-up commit", pool, timeoutSeconds: 60, scenario: Self.name) { $0.latest >= warmUp }
                log.progress("\(who): every stream open; \(Self.commitCount) commits, \(Self.spacingMs) ms apart")
                var at = MonotonicClock.nanoseconds() + 200_000_000
                for c in 0..<Self.commitCount {
                    let user = Int(random.next() % UInt64(followers))
                    let k = Int(random.next() % UInt64(Self.listsPerUser))
                    MonotonicClock.sleep(until: at)
                    try store.commit([ListSection(model: model, elements: [ListItem(id: "e0", json: .init(integerLiteral: c + 1))])], to: Self.list(user: user, k))
                    returnedAt.append(MonotonicClock.nanoseconds())
                    owners.append(user)
                    position += 1
                    at += Int64(Self.spacingMs) * 1_000_000
                }
                try HTTPFollowersScenario.waitFor("every commit at its owner", pool, timeoutSeconds: 60, scenario: Self.name) { $0.delivered >= Self.commitCount }
            }
            let metrics = HTTPFollowersScenario.scrapeMetrics(port: server.port)
            pool.stop()
            pool.finished.wait()
            let progress = pool.current
            let peak = server.peakMemoryMB()
            if !server.stop(timeout: .seconds(30)) { failures.append("\(who): the server did not stop within 30 s of SIGTERM") }
            if case .failure(let error) = measured { failures.append("\(who): \(error)") }
            var latencies: [Double] = []
            var missing = 0
            for (c, owner) in owners.enumerated() {
                let arrived = pool.arrivals[owner * Self.commitCount + c]
                if arrived == 0 { missing += 1 } else { latencies.append(Double(arrived - returnedAt[c]) / 1e6) }
            }
            let extra = progress.delivered - latencies.count
            if missing > 0 { failures.append("\(who): \(missing) of \(owners.count) commits did not reach their owner") }
            if extra != 0 { failures.append("\(who): \(extra) deliveries to followers whose lists the commits were not") }
            log.progress("\(who): p50 \(Format.fixed(latencies.isEmpty ? .nan : LiveDeliveryScenario.percentile(latencies, 50), decimals: 2)) ms, "
                + "p99 \(Format.fixed(latencies.isEmpty ? .nan : LiveDeliveryScenario.percentile(latencies, 99), decimals: 2)) ms; "
                + "server peak \(peak.map { Format.fixed($0, decimals: 1) } ?? "?") MB; \(progress.errors) errors, \(progress.reconnects) reconnects")
            sides.append((latencies, missing, extra, peak, metrics))
        }
        for failure in failures { log.progress(failure) }
        let (baseline, ours) = (sides[0], sides[1])
        guard !ours.latencies.isEmpty, !baseline.latencies.isEmpty else { throw log.failure("no deliveries: " + failures.joined(separator: "; ")) }
        var details: [String: JSONValue] = [
            "users": .int(Self.users), "lists": .int(Self.users * Self.listsPerUser), "commits": .int(Self.commitCount),
            "deliveries": .int(ours.latencies.count), "missingDeliveries": .int(ours.missing), "foreignDeliveries": .int(ours.extra),
            "p50Ms": .number(LiveDeliveryScenario.percentile(ours.latencies, 50), decimals: 2),
            "p99Ms": .number(LiveDeliveryScenario.percentile(ours.latencies, 99), decimals: 2),
            "maxMs": .number(ours.latencies.max() ?? 0, decimals: 2),
            "baselineP50Ms": .number(LiveDeliveryScenario.percentile(baseline.latencies, 50), decimals: 2),
            "baselineP99Ms": .number(LiveDeliveryScenario.percentile(baseline.latencies, 99), decimals: 2),
            "openFileLimit": .int(Int(openFiles)),
        ]
        for (name, value) in ours.metrics { details["serverMetrics.\(name)"] = .int(Int(value)) }
        if let mb = ours.peak { details["peakMemoryMB"] = .number(mb, decimals: 1) }
        if let mb = baseline.peak { details["baselinePeakMemoryMB"] = .number(mb, decimals: 1) }
        if let mb = ours.peak, mb > 1024 { failures.append("the server's peak memory was \(Format.fixed(mb, decimals: 0)) MB, above 1 GB") }
        return ScenarioResult(
            scenario: Self.name, oursMs: LiveDeliveryScenario.percentile(ours.latencies, 99), baseline: Self.baselineName,
            baselineMs: LiveDeliveryScenario.percentile(baseline.latencies, 99), target: Self.target, details: details,
            oursRuns: "p99 of \(ours.latencies.count)", baselineRuns: "p99 of \(baseline.latencies.count)", failures: failures)
    }

    /// The public half of `key` as a JWK.
    private static func jwk(_ key: P256.Signing.PrivateKey) -> String {
        let point = Array(key.publicKey.rawRepresentation)
        return #"{"kty": "EC", "kid": "k1", "alg": "ES256", "crv": "P-256", "x": "\#(AuthOverheadScenario.base64URL(point.prefix(32)))", "y": "\#(AuthOverheadScenario.base64URL(point.suffix(32)))"}"#
    }
}
