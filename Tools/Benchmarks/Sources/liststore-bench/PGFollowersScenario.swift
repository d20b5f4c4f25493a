#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ListStore
import ListStorePostgres

/// pg-followers: several servers on one PostgreSQL database (Docs/Benchmarks.md). Two journal servers, each
/// in a process of its own on the database `LISTSTORE_BENCH_PG` names, with 1,000 HTTP followers
/// each, reading Server-Sent Events as `HTTPSource` does; the writer commits through both servers in turn (`POST …/commits`), and each
/// commit must reach every follower of both. The target is absolute: p99 ≤ 250 ms. A server learns of
/// the other's commits from PostgreSQL's `NOTIFY` (and reads the heads every second besides).
///
/// The scenario creates a list of 1,000 elements (one section) under a fresh name, starts the two
/// servers (this executable again, with a hidden flag: `JournalServer` over a `PostgresStore`,
/// port 0, logging errors only) and two `HTTPFollowerPool`s, as http-followers does.
///
/// - ours: 1,000 followers on each server, each reading one event stream (`GET …/events`), the way
///   `HTTPSource` follows a list;
/// - the baseline, measured first in the same run: the same two servers (fresh processes) and writer
///   with one such follower on each, so that the ratio says what 2,000 clients cost over two;
/// - then, in details (`longPoll…`), the same with 1,000 long-polling followers on each server
///   (`GET …/journal?wait=`), the way clients without event streams follow.
///
/// For each side: once every follower waits, one untimed warm-up commit; once every follower has it,
/// 200 ms of quiet; then `commitCount` commits, `spacingMs` apart, alternately through server A and
/// server B, each changing the content of `changedPerCommit` elements. Latency = a follower's
/// arrival − the moment the writer SENT the commit's request (so it includes the commit itself, over
/// HTTP and PostgreSQL), over every (follower, commit) pair; every follower must have every commit.
/// Arrival is when the answer or event was complete at the follower's socket (`HTTPFollowerPool`'s
/// "Two times"); `readP99Ms` and `longPollReadP99Ms` give the p99 to when the followers' threads
/// read it. ours_ms and baseline_ms are p99 latencies (nearest rank); details hold p50, p99 and max
/// of both, the deliveries, and the servers' peak memory with 1,000 followers each.
struct PGFollowersScenario {
    static let name = "pg-followers"
    static let baselineName = "the same two servers and writer with 1 follower each"
    static let target = Target(minRatio: nil, maxOursMs: 250)
    static let followerCount = 1_000
    static let commitCount = 100
    static let spacingMs = 50
    /// Hidden arguments: `liststore-bench --serve-journal-pg URL`.
    static let serveFlag = "--serve-journal-pg"

    static var scenario: Scenario {
        Scenario(
            name: name,
            summary: "commit through either of 2 servers on one PostgreSQL → delivered to \(followerCount) followers of each (p99) vs \(baselineName)",
            target: target
        ) { () throws(ScenarioFailure) in try PGFollowersScenario().run() }
    }

    let log = ScenarioLog(scenario: name)

    func run() throws(ScenarioFailure) -> ScenarioResult {
        signal(SIGPIPE, SIG_IGN)
        let url = try log.attempt("finding PostgreSQL") { try PostgresServer.url() }
        let openFiles = try HTTPFollowersScenario.raiseOpenFileLimit(log)
        guard openFiles >= rlim_t(2 * Self.followerCount + 64) else {
            throw log.failure("the open-file limit is \(openFiles), too low for \(2 * Self.followerCount) connections")
        }
        let list = "followers-\(UUID().uuidString.lowercased())"
        let model = StoreInput.listItem(Item("s", 0))
        var elements = (0..<HTTPFollowersScenario.elementCount).map { StoreInput.listItem(Item("e\($0)", $0)) }
        let first = [ListSection(model: model, elements: elements)]
        try log.attempt("creating the list") {
            let store = try runBlocking { try await PostgresStore(url: url) }
            defer { _ = try? runBlocking { await store.close() } }
            _ = try runBlocking { try await store.commit(first, to: list) }
        }
        var head = 1
        var changes = 0
        var ports = [Int]()
        /// Commits `changedPerCommit` new contents through server `k % 2`; returns when the request
        /// was sent.
        func commit(_ k: Int) throws -> Int64 {
            for _ in 0..<HTTPFollowersScenario.changedPerCommit {
                let e = changes % elements.count
                elements[e] = StoreInput.listItem(Item("e\(e)", elements.count + changes))
                changes += 1
            }
            let body = String(decoding: ListSnapshot(list: list, version: 0, digest: ListDigest.of([]), sections: [
                ListSection(model: model, elements: elements),
            ]).documentJSON, as: UTF8.self)
            let sentAt = MonotonicClock.nanoseconds()
            let answer = try Self.post(port: ports[k % 2], path: "/v1/lists/\(list)/commits", body: body, expectedVersion: head)
            guard answer.contains(#""version":\#(head + 1)"#) else {
                throw ScenarioFailure(scenario: Self.name, message: "a commit after \(head) answered \(answer.prefix(300))")
            }
            head += 1
            return sentAt
        }

        var failures = [String]()
        var sides = [HTTPFollowersScenario.Side]()
        for (followers, events) in [(1, true), (Self.followerCount, true), (Self.followerCount, false)] {
            let who = followers == 1
                ? "baseline (1 follower per server)"
                : "ours (\(followers) \(events ? "event-stream" : "long-poll") followers per server)"
            log.progress("\(who): starting two servers on \(url)")
            let servers = try log.attempt("starting the servers") {
                [try HTTPFollowersScenario.ServerProcess(arguments: [Self.serveFlag, url]),
                 try HTTPFollowersScenario.ServerProcess(arguments: [Self.serveFlag, url])]
            }
            ports = servers.map(\.port)
            let firstVersion = head + 2  // after the warm-up commit
            let lastVersion = firstVersion + Self.commitCount - 1
            let pools = servers.map {
                HTTPFollowerPool(
                    count: followers, port: $0.port, list: list, since: head, firstVersion: firstVersion, lastVersion: lastVersion,
                    events: events)
            }
            for (k, pool) in pools.enumerated() {
                let thread = Thread { pool.run() }
                thread.name = "pg-followers-\(k)"
                thread.start()
            }

            var sentAt = [Int64]()
            let committed = Result { () throws -> Void in
                for pool in pools {
                    try HTTPFollowersScenario.waitFor("every follower waiting", pool, timeoutSeconds: 120, scenario: Self.name) {
                        $0.waitingSince >= head
                    }
                }
                _ = try commit(0)
                let warmUp = head
                for pool in pools {
                    try HTTPFollowersScenario.waitFor("the warm-up commit", pool, timeoutSeconds: 60, scenario: Self.name) {
                        $0.seen >= warmUp && $0.waitingSince >= warmUp
                    }
                }
                log.progress("\(who): every follower had the warm-up commit; \(Self.commitCount) commits, \(Self.spacingMs) ms apart, through both servers")
                var start = MonotonicClock.nanoseconds() + 200_000_000
                for k in 0..<Self.commitCount {
                    MonotonicClock.sleep(until: start)
                    sentAt.append(try commit(k))
                    start += Int64(Self.spacingMs) * 1_000_000
                }
                for pool in pools {
                    try HTTPFollowersScenario.waitFor("every commit at every follower", pool, timeoutSeconds: 30, scenario: Self.name) {
                        $0.seen >= lastVersion
                    }
                }
            }
            for pool in pools { pool.stop() }
            for pool in pools { pool.finished.wait() }
            let peaks = servers.compactMap { $0.peakMemoryMB() }
            for (k, server) in servers.enumerated() where !server.stop(timeout: .seconds(30)) {
                failures.append("\(who): server \(k) did not stop within 30 s of SIGTERM")
            }
            if case .failure(let error) = committed {
                log.progress("\(who): \(error)")
                failures.append("\(who): \(error)")
            }
            var latencies = [Double](), readLatencies = [Double]()
            var missing = 0
            var errors = 0
            var reconnects = 0
            for pool in pools {
                let measured = HTTPFollowersScenario.latencies(
                    pool, followers: followers, span: lastVersion - firstVersion + 1, committedAt: sentAt)
                latencies += measured.latencies
                readLatencies += measured.readLatencies
                missing += measured.missing
                errors += pool.current.errors
                reconnects += pool.current.reconnects
            }
            if missing > 0 { failures.append("\(who): \(missing) deliveries missing") }
            let side = HTTPFollowersScenario.Side(
                followers: followers, latencies: latencies, readLatencies: readLatencies, missing: missing,
                peakMemoryMB: peaks.max(), errors: errors,
                reconnects: reconnects, metrics: [:])
            log.progress("\(who): \(latencies.count) deliveries, \(missing) missing; p50 \(Format.fixed(side.p50, decimals: 2)) ms, "
                + "p99 \(Format.fixed(side.p99, decimals: 2)) ms, max \(Format.fixed(latencies.max() ?? .nan, decimals: 2)) ms "
                + "(read by the followers' threads: p99 \(Format.fixed(side.readP99, decimals: 2)) ms)")
            sides.append(side)
        }
        let (baseline, ours, polls) = (sides[0], sides[1], sides[2])
        guard !ours.latencies.isEmpty, !baseline.latencies.isEmpty else {
            throw log.failure("no deliveries: " + failures.joined(separator: "; "))
        }
        var details: [String: JSONValue] = [
            "servers": .int(2),
            "followersPerServer": .int(ours.followers),
            "commits": .int(Self.commitCount),
            "deliveries": .int(ours.latencies.count),
            "missingDeliveries": .int(ours.missing),
            "p50Ms": .number(ours.p50, decimals: 2),
            "maxMs": .number(ours.latencies.max() ?? 0, decimals: 2),
            "errors": .int(ours.errors),
            "reconnects": .int(ours.reconnects),
            "baselineP50Ms": .number(baseline.p50, decimals: 2),
            "baselineMaxMs": .number(baseline.latencies.max() ?? 0, decimals: 2),
            "longPollP50Ms": .number(polls.p50, decimals: 2),
            "longPollP99Ms": .number(polls.p99, decimals: 2),
            "longPollMaxMs": .number(polls.latencies.max() ?? 0, decimals: 2),
            "readP99Ms": .number(ours.readP99, decimals: 2),
            "longPollReadP99Ms": .number(polls.readP99, decimals: 2),
            "longPollDeliveries": .int(polls.latencies.count),
            "longPollMissingDeliveries": .int(polls.missing),
        ]
        if let mb = polls.peakMemoryMB { details["longPollPeakServerMemoryMB"] = .number(mb, decimals: 1) }
        if let mb = ours.peakMemoryMB { details["peakServerMemoryMB"] = .number(mb, decimals: 1) }
        return ScenarioResult(
            scenario: Self.name, oursMs: ours.p99, baseline: Self.baselineName, baselineMs: baseline.p99,
            target: Self.target, details: details, oursRuns: "p99 of \(ours.latencies.count)",
            baselineRuns: "p99 of \(baseline.latencies.count)", failures: failures)
    }

    /// A blocking `POST` of a commit to the server on 127.0.0.1:`port`; returns the answer's body.
    static func post(port: Int, path: String, body: String, expectedVersion: Int) throws -> String {
        let document = body.dropLast() + #","expectedVersion":\#(expectedVersion)}"#
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!, timeoutInterval: 60)
        request.httpMethod = "POST"
        request.httpBody = Data(document.utf8)
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        let done = DispatchSemaphore(value: 0)
        let answer = Answer()
        URLSession.shared.dataTask(with: request) { data, _, error in
            answer.set(data.map { String(decoding: $0, as: UTF8.self) } ?? "error: \(error.map { "\($0)" } ?? "no answer")")
            done.signal()
        }.resume()
        done.wait()
        return answer.text
    }

    /// The text of one answer, handed from URLSession's thread to the writer.
    final class Answer: @unchecked Sendable {
        // Safe: written once before the semaphore is signalled, read after it was waited for.
        private(set) var text = ""
        func set(_ text: String) { self.text = text }
    }
}
