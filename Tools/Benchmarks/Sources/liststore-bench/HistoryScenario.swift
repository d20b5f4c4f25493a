import Foundation
import ListStore

/// history-10k (Docs/Benchmarks.md): time travel in a long history. `snapshot(of:at:)` of the oldest, the
/// middle and the newest older version of a 10,000-version history of a 10,000-element list, against
/// loading the head (`snapshot(of:)`). Each run of either side opens the store anew (`Store(path:)`,
/// as load-1m does: an open store keeps its head in memory) and reads one snapshot. Target: ratio ≥ 0.33 for each; ours_ms
/// is the slowest of the three medians, and details hold each.
///
/// The history (untimed; fingerprinted): version 1 is one section ("s", 0) holding ("e<i>", i) for
/// i in 0..<10,000. SplitMix64 seeded `baseSeed + 10`; for version v in 2...10,000, on the list of
/// version v − 1 (M elements): for p in partialFY(M, 8): content of p += 1; remove the element at
/// bounded(M); insert ("n<v>", −v) at bounded(M); move the element at bounded(M) to bounded(M)
/// (remove, then insert). Each version is committed with `Store.commit` and an expected version.
/// The fingerprint is FNV-1a 64 over version 1 then 0xFF then version 10,000 (as in Docs/Benchmarks.md).
///
/// Versions read: 1 (the oldest), 5,000 (the middle) and 9,999 (the newest before the head). Each
/// side runs 1 warm-up + 7 times. Details also say what the stored snapshots cost: their count and bytes,
/// the journal's bytes, and the store file's size.
struct HistoryScenario {
    static let name = "history-10k"
    static let baselineName = "loading the head"
    static let target = Target(minRatio: 0.33)
    static let versionCount = 10_000
    static let elementCount = 10_000
    static let listName = "history"
    static let runs = 7
    static let expectedFingerprint = "a25f9e19976272c8"

    static var scenario: Scenario {
        Scenario(
            name: name,
            summary: "snapshot(at:) of the oldest, middle and newest versions of a \(versionCount)-version history (slowest) vs \(baselineName)",
            target: target
        ) { () throws(ScenarioFailure) in try HistoryScenario().run() }
    }

    let log = ScenarioLog(scenario: name)

    /// Version `v` (1-based) of the history, one at a time.
    struct History {
        var rng = SplitMix64(seed: SplitMix64.baseSeed + 10)
        var items: [Item] = (0..<HistoryScenario.elementCount).map { Item("e\($0)", $0) }
        var version = 1

        mutating func next() {
            version += 1
            for p in rng.partialFY(items.count, 8) { items[p].content += 1 }
            items.remove(at: rng.bounded(items.count))
            items.insert(Item("n\(version)", -version), at: rng.bounded(items.count))
            let moved = items.remove(at: rng.bounded(items.count))
            items.insert(moved, at: rng.bounded(items.count))
        }

        var sections: [ListSection] {
            [ListSection(model: StoreInput.listItem(Item("s", 0)), elements: items.map(StoreInput.listItem))]
        }
    }

    func run() throws(ScenarioFailure) -> ScenarioResult {
        let directory = try log.attempt("creating a temporary directory") { try TemporaryDirectory(label: Self.name) }
        defer { directory.remove() }
        let path = directory.file("history.liststore")
        log.progress("committing \(Self.versionCount) versions of \(Self.elementCount) elements (untimed)")
        let wanted = [1, Self.versionCount / 2, Self.versionCount - 1]
        var expected: [Int: ListDigest] = [:]
        let fingerprint = try log.attempt("building the history") { () throws -> String in
            let store = try Store(path: path)
            defer { try? store.close() }
            var history = History()
            let first = history.items
            let started = ContinuousClock.now
            while true {
                let sections = history.sections
                let result = try store.commit(sections, to: Self.listName, expectedVersion: history.version - 1)
                guard result.version == history.version else {
                    throw ScenarioFailure(scenario: Self.name, message: "version \(history.version) committed as \(result.version)")
                }
                if wanted.contains(history.version) { expected[history.version] = result.digest }
                if history.version % 1_000 == 0 {
                    log.progress("version \(history.version) (\(Format.fixed(Measurement.milliseconds(ContinuousClock.now - started) / 1000, decimals: 1)) s)")
                }
                guard history.version < Self.versionCount else { break }
                history.next()
            }
            return Fingerprint.of(source: first, target: history.items).hex
        }
        log.progress("fingerprint \(fingerprint)")
        if Self.expectedFingerprint != "unpinned", fingerprint != Self.expectedFingerprint {
            throw log.failure("FINGERPRINT MISMATCH: got \(fingerprint), expected \(Self.expectedFingerprint)")
        }

        var failures = [String]()
        var details: [String: JSONValue] = ["fingerprint": .string(fingerprint)]
        log.progress("baseline: loading the head, 1 warm-up + \(Self.runs) runs")
        let (headTiming, headCount) = try log.attempt("loading the head") {
            try Measurement.prepared(
                runs: Self.runs, warmUp: true, prepare: {},
                { _ in
                    let store = try Store(path: path)
                    defer { try? store.close() }
                    let snapshot = try store.snapshot(of: Self.listName)
                    return (snapshot.elementCount, snapshot)
                }, finish: { _, _ in })
        }
        log.progress("baseline: median \(Format.fixed(headTiming.medianMs, decimals: 2)) ms")
        var slowest: (ms: Double, runs: String) = (0, "")
        for version in wanted {
            let (timing, _) = try log.attempt("reading version \(version)") {
                try Measurement.prepared(
                    runs: Self.runs, warmUp: true, prepare: {},
                    { _ in
                        let store = try Store(path: path)
                        defer { try? store.close() }
                        let snapshot = try store.snapshot(of: Self.listName, at: version)
                        return (snapshot.version, snapshot)
                    },
                    finish: { _, snapshot in
                        if snapshot.digest != expected[version] || ListDigest.of(snapshot.sections) != expected[version] {
                            failures.append("WRONG SNAPSHOT: version \(version) reads back with digest \(ListDigest.of(snapshot.sections).hex)")
                        }
                    })
            }
            log.progress("version \(version): median \(Format.fixed(timing.medianMs, decimals: 2)) ms")
            details["v\(version)Ms"] = .number(timing.medianMs, decimals: 2)
            details["v\(version)Ratio"] = .number(headTiming.medianMs / timing.medianMs, decimals: 2)
            if timing.medianMs > slowest.ms { slowest = (timing.medianMs, timing.runsText) }
        }
        if headCount != Self.elementCount { failures.append("the head holds \(headCount) elements, not \(Self.elementCount)") }
        // What the stored snapshots cost, next to the journal they serve.
        try log.attempt("measuring the storage") {
            let db = try SQLiteConnection(path: path, create: false)
            for (key, sql) in [
                ("storedSnapshots", "SELECT count(*) FROM stored_snapshot"),
                ("storedSnapshotBytes", "SELECT coalesce(sum(length(CAST(snapshot AS BLOB))), 0) FROM stored_snapshot"),
                ("journalBytes", "SELECT coalesce(sum(length(CAST(stages AS BLOB))), 0) FROM journal"),
            ] {
                let statement = try db.prepare(sql)
                _ = try statement.step()
                details[key] = .int(Int(statement.int64(0)))
            }
        }
        let fileBytes = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        details["fileBytes"] = .int(fileBytes)
        return ScenarioResult(
            scenario: Self.name, oursMs: slowest.ms, baseline: Self.baselineName, baselineMs: headTiming.medianMs,
            target: Self.target, details: details, oursRuns: slowest.runs, baselineRuns: headTiming.runsText, failures: failures)
    }
}
