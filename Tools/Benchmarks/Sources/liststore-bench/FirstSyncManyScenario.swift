import Crypto
import Foundation
import ListStore
import ListSync

/// first-sync-many (Docs/Benchmarks.md): 20 first syncs of the first-sync-1m list at once from one
/// `JournalServer`: the server's peak resident memory (target ≤ 512 MB), every copy checked.
///
/// The server runs in a process of its own (http-followers' server mode) over the first-sync-1m
/// source store. The readers run in one client process (`--first-sync-readers`): each reads the
/// list's head page by page with `HTTPSource.page(of:at:after:maxBytes:)` (4 MiB pages, 8 MiB
/// answers), as a replica's first sync does, and hashes the records as they come into the list's
/// digest (`ListDigest`'s records: tag, id length, id, content hash), which must be the pages'
/// digest. They do not write replica stores: 20 replicas of a million elements would measure the
/// client machine, not the server. Ours: 20 readers at once on a fresh server; the baseline: one
/// reader on a fresh server (the ratio says what 20 cost in time over one). Details: the server's
/// peak with 20 (`peakMemoryMB`) and with one (`baselinePeakMemoryMB`).
struct FirstSyncManyScenario {
    static let name = "first-sync-many"
    static let readersFlag = "--first-sync-readers"
    static let readers = 20
    static let target = Target(minRatio: nil, maxPeakMemoryMB: 512)

    static var scenario: Scenario {
        Scenario(name: name, summary: "\(readers) first syncs of a 1,000,000-element list at once: the server's peak memory", target: target) {
            () throws(ScenarioFailure) in try FirstSyncManyScenario().run()
        }
    }

    let log = ScenarioLog(scenario: name)

    func run() throws(ScenarioFailure) -> ScenarioResult {
        let directory = try log.attempt("creating a temporary directory") { try TemporaryDirectory(label: Self.name) }
        defer { directory.remove() }
        let path = directory.file("source.liststore")
        log.progress("building a source store holding 1,000,000 elements (untimed)")
        _ = try log.attempt("building the source") {
            try runBlocking { try await Store(path: path).commit(FirstSyncScenario.list(), to: FirstSyncScenario.listName).digest }
        }
        var sides: [(ms: Double, peak: Double, ok: Bool)] = []
        for readers in [1, Self.readers] {
            let server = try log.attempt("starting the server") { try HTTPFollowersScenario.ServerProcess(path: path) }
            log.progress("\(readers) reader(s) at once")
            let report = try log.attempt("the readers") {
                try FirstSyncScenario.child([Self.readersFlag, "http://127.0.0.1:\(server.port)", String(readers)])
            }
            let peak = server.peakMemoryMB() ?? .nan
            _ = server.stop(timeout: .seconds(10))
            log.progress("\(readers) reader(s): \(Format.fixed(report["ms"] ?? .nan, decimals: 1)) ms, server peak \(Format.fixed(peak, decimals: 1)) MB")
            sides.append((report["ms"] ?? .nan, peak, report["matching"] == Double(readers)))
        }
        var failures: [String] = []
        if !sides.allSatisfy(\.ok) { failures.append("WRONG COPY: a reader's records do not hash to the list's digest") }
        return ScenarioResult(
            scenario: Self.name, oursMs: sides[1].ms, baseline: "1 reader", baselineMs: sides[0].ms, target: Self.target,
            details: ["peakMemoryMB": .number(sides[1].peak, decimals: 1), "baselinePeakMemoryMB": .number(sides[0].peak, decimals: 1),
                      "readers": .int(Self.readers)],
            oursRuns: "1", baselineRuns: "1", failures: failures)
    }

    /// Runs the readers when the arguments ask for them; returns the exit status, or nil.
    static func readersMain(_ arguments: [String]) -> Int32? {
        guard arguments.count == 4, arguments[1] == readersFlag, let count = Int(arguments[3]) else { return nil }
        do {
            let url = arguments[2]
            let line = try runBlocking {
                let clock = ContinuousClock()
                let start = clock.now
                let matching = try await withThrowingTaskGroup(of: Bool.self) { group in
                    for _ in 0..<count { group.addTask { try await read(url) } }
                    return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
                }
                return "ms=\(Measurement.milliseconds(clock.now - start)) matching=\(matching)"
            }
            LiveDeliveryScenario.writeOut(line + "\n")
            return 0
        } catch {
            StandardError.line("\(name): a reader failed: \(error)")
            return 1
        }
    }

    /// Reads the list's head page by page; whether its records hash to the pages' digest.
    static func read(_ url: String) async throws -> Bool {
        var source = try HTTPSource(url)
        source.maxAnswerBytes = 8 << 20
        source.maxPageBytes = 4 << 20
        var hasher = SHA256()
        var page = try await source.page(of: FirstSyncScenario.listName, at: nil, after: nil, maxBytes: .max)
        while true {
            for record in page.records {
                var bytes: [UInt8] = [record.isSection ? 0x53 : 0x45]
                let id = Array(record.item.id.utf8)
                withUnsafeBytes(of: UInt64(id.count).littleEndian) { bytes.append(contentsOf: $0) }
                bytes += id
                bytes += ContentHash(of: record.item.content).bytes
                hasher.update(data: bytes)
            }
            guard let next = page.next else { break }
            page = try await source.page(of: FirstSyncScenario.listName, at: page.version, after: next, maxBytes: .max)
        }
        let hex = hasher.finalize().map { String(format: "%02x", $0) }.joined()
        return hex == page.digest.hex
    }
}
