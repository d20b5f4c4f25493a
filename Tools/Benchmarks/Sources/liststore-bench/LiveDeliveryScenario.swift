#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import ListStore
import ListSync

/// live-delivery: how long after a commit returns in one process a follower in another process has
/// it. The target is absolute: p99 ≤ 50 ms (`LocalSource` polls for other processes' commits every
/// 20 ms).
///
/// The scenario process creates a store holding a 100-element list (one section) and starts two
/// follower processes (this executable again, with a hidden flag) on it, both waiting before the
/// first commit:
///
/// - ours: `LocalSource(store).changes(after: cursor)` from a cursor at the head, timestamping each
///   change as the sequence delivers it;
/// - the baseline: a raw SQLite connection that selects the journal rows after the last version it
///   has (version and stages), then sleeps 20 ms, and so on — the plain polling a program would do
///   without the library; it timestamps each row as it reads it.
///
/// Then it makes `commitCount` commits (one element's content changes each), started 20 to 30 ms
/// apart (uniform jitter from SplitMix64 seeded base + 6), and takes the time as each `commit` returns.
/// Times are `clock_gettime(CLOCK_MONOTONIC)`, one clock for all processes; latency = delivery −
/// commit return. Both followers run at once, on the same commits. Followers print their deliveries
/// when they are done, so that writing them costs nothing while they follow.
///
/// ours_ms and baseline_ms are p99 latencies (nearest rank); details hold p50, p99, min and max of
/// both (a follower may read a commit a few microseconds before `commit` has returned: the row is
/// visible once SQLite commits, and the store still updates its in-memory head after that).
struct LiveDeliveryScenario {
    static let name = "live-delivery"
    static let baselineName = "raw SQLite reader polling the journal every 20 ms"
    static let target = Target(minRatio: nil, maxOursMs: 50)
    static let listName = "list"
    static let elementCount = 100
    static let commitCount = 200
    /// Commits start `spacingMs` + up to `jitterMs` apart.
    static let spacingMs = 20
    static let jitterMs = 10
    static let seedOffset: UInt64 = 6
    /// The baseline's pause between two polls.
    static let pollIntervalNanos: Int64 = 20_000_000
    /// Hidden arguments: `liststore-bench --follow-changes|--follow-polling PATH LIST LAST-VERSION`.
    static let followChangesFlag = "--follow-changes"
    static let followPollingFlag = "--follow-polling"

    static var scenario: Scenario {
        Scenario(
            name: name,
            summary: "commit in one process → delivered to a changes(after:) follower in another (p99) vs \(baselineName)",
            target: target
        ) { () throws(ScenarioFailure) in try LiveDeliveryScenario().run() }
    }

    let log = ScenarioLog(scenario: name)

    func run() throws(ScenarioFailure) -> ScenarioResult {
        let directory = try log.attempt("creating a temporary directory") { try TemporaryDirectory(label: Self.name) }
        defer { directory.remove() }
        let path = directory.file("live.liststore")
        var elements = (0..<Self.elementCount).map { StoreInput.listItem(Item("e\($0)", $0)) }
        let model = StoreInput.listItem(Item("s", 0))
        let store = try log.attempt("creating the store") { () throws -> Store in
            let store = try Store(path: path)
            try store.commit([ListSection(model: model, elements: elements)], to: Self.listName)
            try store.checkpoint()
            return store
        }
        let firstVersion = 2
        let lastVersion = firstVersion + Self.commitCount - 1

        log.progress("starting the followers (ours and the polling baseline) in processes of their own")
        let ours = try log.attempt("starting our follower") {
            try Follower(flag: Self.followChangesFlag, path: path, list: Self.listName, last: lastVersion)
        }
        let baseline = try log.attempt("starting the baseline follower") {
            try Follower(flag: Self.followPollingFlag, path: path, list: Self.listName, last: lastVersion)
        }
        try log.attempt("waiting for our follower") { try ours.waitUntilReady() }
        try log.attempt("waiting for the baseline follower") { try baseline.waitUntilReady() }

        log.progress("\(Self.commitCount) commits, \(Self.spacingMs)–\(Self.spacingMs + Self.jitterMs) ms apart")
        var random = SplitMix64(seed: SplitMix64.baseSeed + Self.seedOffset)
        var returnedAt = [Int64]()
        var start = MonotonicClock.nanoseconds() + 50_000_000
        let committed = Result { () throws -> Void in
            for c in 0..<Self.commitCount {
                MonotonicClock.sleep(until: start)
                elements[c % Self.elementCount] = StoreInput.listItem(Item("e\(c % Self.elementCount)", Self.elementCount + c))
                let result = try store.commit([ListSection(model: model, elements: elements)], to: Self.listName)
                returnedAt.append(MonotonicClock.nanoseconds())
                guard result.changed, result.version == firstVersion + c else {
                    throw ScenarioFailure(scenario: Self.name, message: "commit \(c) made version \(result.version)")
                }
                start += Int64(Self.spacingMs) * 1_000_000 + Int64(random.bounded(Self.jitterMs * 1_000 + 1)) * 1_000
            }
        }
        let oursLines = ours.finish(timeout: .seconds(10))
        let baselineLines = baseline.finish(timeout: .seconds(10))
        try log.attempt("committing") { try committed.get() }

        var failures = [String]()
        func latencies(_ lines: [String], of who: String, exactlyOnce: Bool) -> [Double] {
            var latencies = [Double]()
            var expected = firstVersion
            for line in lines {
                let parts = line.split(separator: " ")
                guard parts.count == 2, let version = Int(parts[0]), let at = Int64(parts[1]),
                      (firstVersion...lastVersion).contains(version)
                else { continue }
                if exactlyOnce && version != expected {
                    failures.append("\(who) delivered version \(version) where \(expected) was due")
                }
                expected = version + 1
                latencies.append(Double(at - returnedAt[version - firstVersion]) / 1e6)
            }
            if latencies.count != Self.commitCount {
                failures.append("\(who) delivered \(latencies.count) of \(Self.commitCount) commits")
            }
            return latencies
        }
        let oursLatencies = latencies(oursLines, of: "our follower", exactlyOnce: true)
        let baselineLatencies = latencies(baselineLines, of: "the baseline follower", exactlyOnce: false)
        for failure in failures { log.progress(failure) }
        guard !oursLatencies.isEmpty, !baselineLatencies.isEmpty else {
            throw log.failure("no deliveries: " + failures.joined(separator: "; "))
        }
        let ours50 = Self.percentile(oursLatencies, 50), ours99 = Self.percentile(oursLatencies, 99)
        let base50 = Self.percentile(baselineLatencies, 50), base99 = Self.percentile(baselineLatencies, 99)
        log.progress("ours: p50 \(Format.fixed(ours50, decimals: 2)) ms, p99 \(Format.fixed(ours99, decimals: 2)) ms; "
            + "baseline: p50 \(Format.fixed(base50, decimals: 2)) ms, p99 \(Format.fixed(base99, decimals: 2)) ms")

        let details: [String: JSONValue] = [
            "commits": .int(Self.commitCount),
            "deliveries": .int(oursLatencies.count),
            "p50Ms": .number(ours50, decimals: 2),
            "p99Ms": .number(ours99, decimals: 2),
            "minMs": .number(oursLatencies.min() ?? 0, decimals: 2),
            "maxMs": .number(oursLatencies.max() ?? 0, decimals: 2),
            "baselineDeliveries": .int(baselineLatencies.count),
            "baselineP50Ms": .number(base50, decimals: 2),
            "baselineP99Ms": .number(base99, decimals: 2),
            "baselineMinMs": .number(baselineLatencies.min() ?? 0, decimals: 2),
            "baselineMaxMs": .number(baselineLatencies.max() ?? 0, decimals: 2),
        ]
        return ScenarioResult(
            scenario: Self.name, oursMs: ours99, baseline: Self.baselineName, baselineMs: base99,
            target: Self.target, details: details, oursRuns: "p99 of \(oursLatencies.count)",
            baselineRuns: "p99 of \(baselineLatencies.count)", failures: failures)
    }

    /// The nearest-rank percentile: the smallest value with at least p% of the values at or below it;
    /// NaN for no values (a side of a scenario that delivered nothing, whose failure is reported).
    static func percentile(_ values: [Double], _ p: Double) -> Double {
        guard !values.isEmpty else { return .nan }
        let sorted = values.sorted()
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
        return sorted[min(max(rank, 1), sorted.count) - 1]
    }

    // MARK: - The follower processes

    /// A follower process: started with a hidden flag, it says "ready <version>" on its stdout once it
    /// follows, and prints "<version> <monotonic ns>" per delivery when it has the last version.
    final class Follower {
        let process = Process()
        let output = Pipe()

        init(flag: String, path: String, list: String, last: Int) throws {
            process.executableURL = ScenarioResult.executableURL
            process.arguments = [flag, path, list, String(last)]
            process.standardOutput = output
            try process.run()
        }

        /// Returns once the follower has said "ready".
        func waitUntilReady() throws {
            var line = [UInt8]()
            while !line.contains(UInt8(ascii: "\n")) {
                let data = output.fileHandleForReading.availableData
                if data.isEmpty {
                    throw ScenarioFailure(
                        scenario: LiveDeliveryScenario.name, message: "a follower ended before it was ready")
                }
                line += data
            }
            guard String(decoding: line, as: UTF8.self).hasPrefix("ready ") else {
                throw ScenarioFailure(
                    scenario: LiveDeliveryScenario.name,
                    message: "a follower said \(String(decoding: line, as: UTF8.self).debugDescription)")
            }
        }

        /// Waits for the follower to end (stopping it after `timeout`); returns its delivery lines.
        func finish(timeout: Duration) -> [String] {
            let deadline = ContinuousClock.now + timeout
            while process.isRunning && ContinuousClock.now < deadline {
                Thread.sleep(forTimeInterval: 0.005)
            }
            if process.isRunning {
                StandardError.line("\(LiveDeliveryScenario.name): a follower did not finish within \(timeout); stopping it")
                process.terminate()
            }
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
        }
    }

    /// Runs a follower when the arguments ask for one; returns its exit status, or nil.
    static func followerMain(_ arguments: [String]) -> Int32? {
        guard arguments.count == 5, arguments[1] == followChangesFlag || arguments[1] == followPollingFlag,
              let last = Int(arguments[4])
        else { return nil }
        let (path, list) = (arguments[2], arguments[3])
        // A follower whose parent went away does not wait forever.
        DispatchQueue.global().asyncAfter(deadline: .now() + 120) {
            StandardError.line("\(name): a follower gave up after 120 s")
            exit(3)
        }
        do {
            let lines = arguments[1] == followChangesFlag
                ? try followChanges(path: path, list: list, last: last)
                : try followPolling(path: path, list: list, last: last)
            writeOut(lines.map { $0 + "\n" }.joined())
            return 0
        } catch {
            StandardError.line("\(name): follower \(arguments[1]) failed: \(error)")
            return 1
        }
    }

    /// Ours: the library's live changes, in a process that did not commit.
    static func followChanges(path: String, list: String, last: Int) throws -> [String] {
        let source = LocalSource(try Store(path: path))
        return try runBlocking {
            let cursor = try await source.cursor(of: list)
            writeOut("ready \(cursor.version)\n")
            var lines = [String]()
            for try await change in source.changes(after: cursor) {
                let now = MonotonicClock.nanoseconds()
                lines.append("\(change.cursor.version) \(now)")
                if change.cursor.version >= last { break }
            }
            return lines
        }
    }

    /// The baseline: a raw SQLite connection that polls the journal.
    static func followPolling(path: String, list: String, last: Int) throws -> [String] {
        let db = try SQLiteConnection(path: path, create: false)
        let head = try db.prepare("SELECT head_version FROM list WHERE name = '\(list)'")
        guard try head.step() else { throw SQLiteError(code: 0, message: "no list '\(list)'") }
        var seen = Int(head.int64(0))
        head.reset()
        let journal = try db.prepare("""
            SELECT version, stages FROM journal WHERE list_id = (SELECT id FROM list WHERE name = '\(list)')
                AND version > ? ORDER BY version
            """)
        writeOut("ready \(seen)\n")
        var lines = [String]()
        var stages = [[UInt8]]()
        while seen < last {
            journal.bind(1, Int64(seen))
            while try journal.step() {
                let now = MonotonicClock.nanoseconds()
                seen = Int(journal.int64(0))
                stages.append(Array(journal.text(1)))
                lines.append("\(seen) \(now)")
            }
            journal.reset()
            if seen < last { MonotonicClock.sleep(until: MonotonicClock.nanoseconds() + pollIntervalNanos) }
        }
        precondition(stages.count == lines.count)
        return lines
    }

    /// Writes `text` to stdout at once (unbuffered).
    static func writeOut(_ text: String) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { write(1, $0.baseAddress! + offset, $0.count - offset) }
            if n <= 0 { return }
            offset += n
        }
    }
}
