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
/// The scenario process creates the store (one small commit per list: each list is at version 1),
/// raises its open-file limit as http-followers does, starts the server (this executable again,
/// with a hidden flag and the access file), and opens the followers (`HTTPFollowerPool` in feed
/// mode: raw sockets, one thread with epoll), each from the head of the feed. Once every follower's
/// stream is open and waiting, one untimed warm-up commit; then `commitCount` commits,
/// `spacingMs` apart, each to a random list of a random user, timed as each `commit` returns.
/// latency = the owner's arrival (at its socket: `HTTPFollowerPool`'s "Two times") − commit
/// return; every commit must reach its owner and no one else (`missingDeliveries` 0,
/// `deliveries` = commits).
///
/// The server seals the cursors it gives users (`<uuid>.<epoch>.s…`) and refuses a user's plain
/// one, so the followers neither make their cursors nor read positions from them:
/// - where they start: before the pool starts, user 0 opens a stream without `since`, which reads
///   the feed from its start, and keeps the cursor of its first keep-alive (written at the head,
///   after the keep-alive interval, 15 s, of silence; the setup is that much longer); every
///   follower's stream starts with that sealed head cursor as `since` (a sealed cursor is bound to
///   the store, its uuid and epoch, not to its user). Neither a stream without `since` for each
///   user nor a head poll of each user: both make the server read the whole feed (100,000 events)
///   for each of the 10,000 users, 10⁹ events read before anything is measured; and a user's poll
///   does not tell whether its cursor is at the head. A follower that opens its stream again sends
///   the cursor of the last `id:` line it read.
/// - which commit arrived: the scenario draws each side's commits before its followers start, and
///   knows the version each will give its list (versions count up from 1; each commit's result is
///   checked against it); a `FeedCommitTable` maps (list, version) to the commit's feed position
///   (the warm-up's is the head's + 1, commit c's the warm-up's + 1 + c), and the pool reads the
///   list and the entry's version of each event's `data:` line. Other events (the lists'
///   first commits, were a stream to start earlier) are passed over.
///
/// `LISTSTORE_BENCH_SET_USERS` (an integer ≥ 1) sets the number of users instead of 10,000, for a
/// smaller run (the name and the target stay).
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
    static let users = ProcessInfo.processInfo.environment["LISTSTORE_BENCH_SET_USERS"].flatMap { Int($0) }.map { max(1, $0) } ?? 10_000
    static let listsPerUser = 10
    static let commitCount = 200
    static let spacingMs = 25
    /// Hidden arguments: `liststore-bench --serve-journal-access PATH ACCESS_FILE`.
    static let serveFlag = "--serve-journal-access"

    static var scenario: Scenario {
        Scenario(
            name: name,
            summary: "commit to one of \(users * listsPerUser) lists → delivered to its owner among \(users) users following their 10 lists over one event stream each (p99) vs \(baselineName)",
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
        // Each list's version (its first commit made it 1), as the commits made it.
        var versions = [Int](repeating: 1, count: Self.users * Self.listsPerUser)

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
            let warmUp = position + 1
            let (first, last) = (warmUp + 1, warmUp + Self.commitCount)
            // This side's commits (the warm-up's list, then `targets`), drawn before the followers
            // start, with the version each will give its list and its feed position.
            var next = versions
            next[0] += 1
            var planned = [(list: Self.list(user: 0, 0), version: next[0], position: warmUp)]
            var targets: [(user: Int, k: Int, version: Int)] = []
            for c in 0..<Self.commitCount {
                let user = Int(random.next() % UInt64(followers))
                let k = Int(random.next() % UInt64(Self.listsPerUser))
                next[user * Self.listsPerUser + k] += 1
                targets.append((user, k, next[user * Self.listsPerUser + k]))
                planned.append((Self.list(user: user, k), next[user * Self.listsPerUser + k], first + c))
            }
            let server = try HTTPFollowersScenario.ServerProcess(arguments: [Self.serveFlag, path, accessPath])
            let requests = (0..<followers).map { user in
                (prefix: "GET /v1/events?lists=users%2Fu\(user)%2F%2A%2A",
                 suffix: " HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\nAccept: text/event-stream\r\nAuthorization: Bearer \(tokens[user])\r\n\r\n")
            }
            let cursor: String
            do {
                cursor = try Self.headCursor(port: server.port, token: tokens[0], store: identity)
            } catch {
                _ = server.stop(timeout: .seconds(30))
                throw error
            }
            let pool = HTTPFollowerPool(
                port: server.port, feedRequests: requests, cursor: cursor, since: position, commits: FeedCommitTable(planned),
                firstVersion: first, lastVersion: last)
            let thread = Thread { pool.run() }
            thread.name = "set-followers"
            thread.start()
            var owners: [Int] = []
            var returnedAt: [Int64] = []
            let measured = Result { () throws -> Void in
                try HTTPFollowersScenario.waitFor("every follower waiting", pool, timeoutSeconds: 180, scenario: Self.name) { $0.waitingSince >= position }
                // The warm-up: to the first follower's list.
                let warm = try store.commit([ListSection(model: model, elements: [ListItem(id: "e0", json: -1)])], to: Self.list(user: 0, 0))
                versions[0] = warm.version
                position += 1
                guard warm.version == planned[0].version else {
                    throw log.failure("the warm-up commit made \(Self.list(user: 0, 0)) version \(warm.version), not \(planned[0].version)")
                }
                try HTTPFollowersScenario.waitFor("the warm-up commit", pool, timeoutSeconds: 60, scenario: Self.name) { $0.latest >= warmUp }
                log.progress("\(who): every stream open; \(Self.commitCount) commits, \(Self.spacingMs) ms apart")
                var at = MonotonicClock.nanoseconds() + 200_000_000
                for (c, (user, k, version)) in targets.enumerated() {
                    MonotonicClock.sleep(until: at)
                    let result = try store.commit(
                        [ListSection(model: model, elements: [ListItem(id: "e0", json: .init(integerLiteral: c + 1))])], to: Self.list(user: user, k))
                    returnedAt.append(MonotonicClock.nanoseconds())
                    owners.append(user)
                    versions[user * Self.listsPerUser + k] = result.version
                    position += 1
                    // The pool tells the commit by the version the table has for it.
                    guard result.version == version else {
                        throw log.failure("commit \(c) made \(Self.list(user: user, k)) version \(result.version), not \(version)")
                    }
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

    /// A sealed cursor at the head of the store feed, as the server gives the user of `token` (user
    /// 0): the `id:` of the first keep-alive of its stream `GET /v1/events?lists=users%2Fu0%2F%2A%2A`
    /// (no `since`), which the server writes once the stream has read the feed to its head and
    /// nothing came for its keep-alive interval (15 s). A user's `GET /v1/changes` answers would not
    /// do: they do not tell whether their cursor is at the head (a poll reads past at most 32 pages
    /// of other lists' events, and says `hasMore` only for a full page).
    /// - Throws: `ScenarioFailure` for an answer other than 200, a stream that ends, a cursor not of
    ///   `store`, or no keep-alive within `timeoutSeconds`.
    private static func headCursor(port: Int, token: String, store: StoreIdentity, timeoutSeconds: Int64 = 300) throws -> String {
        func failure(_ message: String) -> ScenarioFailure { ScenarioFailure(scenario: name, message: "the head cursor: " + message) }
        guard let fd = KeepAliveClient.connectLoopback(port: port) else { throw failure("cannot connect to port \(port)") }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let request = Array(
            ("GET /v1/events?lists=users%2Fu0%2F%2A%2A HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAccept: text/event-stream\r\n"
                + "Authorization: Bearer \(token)\r\n\r\n").utf8)
        guard request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, 0) }) == request.count else { throw failure("cannot send") }
        let marker = Array(": keep-alive\nid: ".utf8)
        var input = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 65_536)
        // Where the marker was not found yet.
        var searched = 0
        let deadline = MonotonicClock.nanoseconds() + timeoutSeconds * 1_000_000_000
        while MonotonicClock.nanoseconds() < deadline {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { continue }
            guard count > 0 else { throw failure("the stream ended: \(String(decoding: input.prefix(300), as: UTF8.self).debugDescription)") }
            input += chunk[0..<count]
            if input.count >= 12, !input.starts(with: "HTTP/1.1 200".utf8) {
                throw failure("the answer was \(String(decoding: input.prefix(300), as: UTF8.self).debugDescription)")
            }
            while searched + marker.count <= input.count {
                guard input[searched..<(searched + marker.count)].elementsEqual(marker) else {
                    searched += 1
                    continue
                }
                let from = searched + marker.count
                var end = from
                while end < input.count, HTTPFollowerPool.isCursorByte(input[end]) { end += 1 }
                // The line must be complete.
                guard end < input.count else { break }
                let cursor = String(decoding: input[from..<end], as: UTF8.self)
                guard cursor.hasPrefix("\(store.uuid).\(store.epoch).") else { throw failure("not a cursor of the store: \(cursor)") }
                return cursor
            }
        }
        throw failure("no keep-alive within \(timeoutSeconds) s")
    }

    /// The public half of `key` as a JWK.
    static func jwk(_ key: P256.Signing.PrivateKey) -> String {
        let point = Array(key.publicKey.rawRepresentation)
        return #"{"kty": "EC", "kid": "k1", "alg": "ES256", "crv": "P-256", "x": "\#(AuthOverheadScenario.base64URL(point.prefix(32)))", "y": "\#(AuthOverheadScenario.base64URL(point.suffix(32)))"}"#
    }
}
