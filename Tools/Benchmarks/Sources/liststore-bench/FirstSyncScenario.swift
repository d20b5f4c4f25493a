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
import ListSync

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// first-sync-1m (Docs/Benchmarks.md): a 1,000,000-element list (1,000 sections of 1,000 messages,
/// about 98 MB of JSON, committed at once) copied into a new replica over HTTP, the client in a
/// process of its own with an answer limit of 8 MiB, against a download of the same list plus one raw
/// SQLite transaction inserting its rows.
///
/// The scenario process builds the source store (untimed) and starts a `JournalServer` of it in a
/// process of its own (http-followers' server mode). Ours: a client process (this executable with
/// `--first-sync-client`) opens a new replica store and pulls the list with `HTTPSource`
/// (`maxAnswerBytes` 8 MiB, `maxPageBytes` 4 MiB): the commit is larger than a page, so the replica
/// copies the head in pages; it reports the time of the pull, the time to its first page landed
/// (`firstPageMs`) and its peak resident memory (`clientPeakMB`). The baseline, in a client process of
/// its own (`--first-sync-baseline`): `GET /v1/lists/list/snapshot` read whole into memory with
/// URLSession, then the list's rows (made by the same generator, not parsed) inserted into a new
/// SQLite file in one transaction with the C API (sections, then elements: position, identifier,
/// content).
///
/// Then apply-1m, in the details: one element of the source changes, and a new client process pulls
/// it into the replica ours made (`applyMs`, `applyPeakMB`; target ≤ 300 ms and ≤ 128 MB).
struct FirstSyncScenario {
    static let name = "first-sync-1m"
    static let baselineName = "download + one raw SQLite insert transaction"
    static let target = Target(minRatio: 0.5)
    static let sections = 1_000
    static let elementsPerSection = 1_000
    static let listName = "list"
    static let clientFlag = "--first-sync-client"
    static let baselineFlag = "--first-sync-baseline"
    /// Timed runs of each side (each a new process and a new replica).
    static let runs = Int(ProcessInfo.processInfo.environment["LISTSTORE_BENCH_RUNS"] ?? "") ?? 3

    static var scenario: Scenario {
        Scenario(
            name: name, summary: "a 1,000,000-element list into a new replica over HTTP vs \(baselineName)", target: target
        ) { () throws(ScenarioFailure) in try FirstSyncScenario().run() }
    }

    let log = ScenarioLog(scenario: name)

    /// The content of message `n`, canonical JSON.
    static func content(_ n: Int) -> [UInt8] {
        Array(#"{"n":\#(n),"read":false,"title":"Message number \#(n) from someone"}"#.utf8)
    }

    /// The list: section `s` holds messages `s * 1000 ..< (s + 1) * 1000`.
    static func list(tag: String = "") -> [ListSection] {
        (0..<sections).map { s in
            ListSection(
                model: ListItem(id: "folder\(s)", content: Array(#"{"title":"folder \#(s)\#(tag)"}"#.utf8)),
                elements: (0..<elementsPerSection).map { e in
                    let n = s * elementsPerSection + e
                    return ListItem(id: "m\(n)", content: content(n))
                })
        }
    }

    func run() throws(ScenarioFailure) -> ScenarioResult {
        let directory = try log.attempt("creating a temporary directory") { try TemporaryDirectory(label: Self.name) }
        defer { directory.remove() }
        let sourcePath = directory.file("source.liststore")
        log.progress("building a source store holding \(Self.sections * Self.elementsPerSection) elements (untimed)")
        let digest = try log.attempt("building the source") {
            try runBlocking { try await Store(path: sourcePath).commit(Self.list(), to: Self.listName).digest }
        }
        let server = try log.attempt("starting the server") { try HTTPFollowersScenario.ServerProcess(path: sourcePath) }
        // The clients' files in a directory of their own, as on another machine: the server watches
        // its store's directory for other processes' commits, and would wake for their every write.
        let clients = directory.file("clients")
        try log.attempt("creating the clients' directory") { try FileManager.default.createDirectory(atPath: clients, withIntermediateDirectories: false) }
        defer { _ = server.stop(timeout: .seconds(10)) }
        let url = "http://127.0.0.1:\(server.port)"

        var ours: [Double] = []
        var firstPage: [Double] = []
        var clientPeak: [Double] = []
        var failures: [String] = []
        var replica = ""
        for run in 0..<Self.runs {
            replica = clients + "/replica\(run).liststore"
            log.progress("ours: run \(run + 1) of \(Self.runs)")
            let report = try log.attempt("the client") { try Self.child([Self.clientFlag, url, replica]) }
            log.progress("ours: \(report.sorted { $0.key < $1.key }.map { "\($0.key) \(Format.fixed($0.value, decimals: 1))" }.joined(separator: ", "))")
            ours.append(report["ms"] ?? .nan)
            firstPage.append(report["first"] ?? .nan)
            clientPeak.append(report["peak"] ?? .nan)
            if report["digestMatches"] != 1 { failures.append("WRONG REPLICA: run \(run + 1) does not equal the source (\(digest.hex))") }
        }
        var baseline: [Double] = []
        for run in 0..<Self.runs {
            log.progress("baseline: run \(run + 1) of \(Self.runs)")
            let report = try log.attempt("the baseline") { try Self.child([Self.baselineFlag, url, clients + "/raw\(run).sqlite"]) }
            log.progress("baseline: \(report.sorted { $0.key < $1.key }.map { "\($0.key) \(Format.fixed($0.value, decimals: 1))" }.joined(separator: ", "))")
            baseline.append(report["ms"] ?? .nan)
        }

        // apply-1m: one element changes at the source; a new process pulls it into the last replica.
        log.progress("apply-1m: one element changed, pulled by a new process")
        try log.attempt("changing one element") {
            try runBlocking {
                var sections = Self.list()
                sections[500].elements[500] = ListItem(id: "m500500", content: Self.content(-1))
                try await Store(path: sourcePath).commit(sections, to: Self.listName)
            }
        }
        let apply = try log.attempt("the apply client") { try Self.child([Self.clientFlag, url, replica]) }
        log.progress("apply-1m: \(apply.sorted { $0.key < $1.key }.map { "\($0.key) \(Format.fixed($0.value, decimals: 1))" }.joined(separator: ", "))")
        if apply["digestMatches"] != 1 { failures.append("WRONG REPLICA after the one-element change") }

        func median(_ values: [Double]) -> Double {
            let sorted = values.sorted()
            return sorted.isEmpty ? .nan : sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
        }
        let details: [String: JSONValue] = [
            "clientPeakMB": .number(median(clientPeak), decimals: 1),
            "firstPageMs": .number(median(firstPage), decimals: 1),
            "applyMs": .number(apply["ms"] ?? .nan, decimals: 1),
            "applyPeakMB": .number(apply["peak"] ?? .nan, decimals: 1),
            "serverPeakMB": .number(server.peakMemoryMB() ?? .nan, decimals: 1),
            "elements": .int(Self.sections * Self.elementsPerSection),
        ]
        return ScenarioResult(
            scenario: Self.name, oursMs: median(ours), baseline: Self.baselineName, baselineMs: median(baseline), target: Self.target,
            details: details, oursRuns: "\(ours.count)", baselineRuns: "\(baseline.count)", failures: failures)
    }

    /// Runs this executable with `arguments` and reads its report: `key=value` pairs on one line.
    static func child(_ arguments: [String]) throws -> [String: Double] {
        let process = Process()
        let output = Pipe()
        process.executableURL = ScenarioResult.executableURL
        process.arguments = arguments
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ScenarioFailure(scenario: name, message: "\(arguments[0]) ended with status \(process.terminationStatus)")
        }
        var report: [String: Double] = [:]
        for pair in String(decoding: data, as: UTF8.self).split(whereSeparator: { $0 == " " || $0 == "\n" }) {
            let parts = pair.split(separator: "=")
            if parts.count == 2, let value = Double(parts[1]) { report[String(parts[0])] = value }
        }
        return report
    }

    // MARK: - The client processes

    /// Runs a client when the arguments ask for one; returns its exit status, or nil.
    static func clientMain(_ arguments: [String]) -> Int32? {
        guard arguments.count == 4, arguments[1] == clientFlag || arguments[1] == baselineFlag else { return nil }
        do {
            let line = try runBlocking {
                arguments[1] == clientFlag ? try await pull(from: arguments[2], into: arguments[3]) : try await baseline(from: arguments[2], into: arguments[3])
            }
            LiveDeliveryScenario.writeOut(line + "\n")
            return 0
        } catch {
            StandardError.line("\(name): the client failed: \(error)")
            return 1
        }
    }

    /// Pulls the list into the replica store at `path`, as an app on a phone would.
    static func pull(from url: String, into path: String) async throws -> String {
        let clock = ContinuousClock()
        let start = clock.now
        var source = try HTTPSource(url)
        source.maxAnswerBytes = 8 << 20
        source.maxPageBytes = 4 << 20
        let firstPage = Locked<Duration?>(nil)
        let lastPage = Locked<Duration?>(nil)
        var options = ReplicaPullOptions()
        options.onProgress = { progress in
            firstPage.withLock { if $0 == nil { $0 = clock.now - start } }
            if progress.records == progress.totalRecords { lastPage.withLock { $0 = clock.now - start } }
        }
        let store = try Store(path: path)
        let result = try await Replica(store: store, list: listName).pull(from: source, options: options)
        let elapsed = clock.now - start
        let stored = try await store.summary(of: listName).digest.hex
        let served = try await source.summary(of: listName).digest.hex
        let matches = stored == result.digest && result.digest == served
        return "ms=\(Measurement.milliseconds(elapsed)) first=\(firstPage.withLock { $0 }.map(Measurement.milliseconds) ?? .nan) "
            + "last=\(lastPage.withLock { $0 }.map(Measurement.milliseconds) ?? .nan) "
            + "peak=\(PeakMemory.peakMB() ?? .nan) digestMatches=\(matches ? 1 : 0) pages=\(result.pages?.pages ?? 0)"
    }

    /// The baseline: the list's snapshot downloaded whole, then its rows inserted in one transaction.
    static func baseline(from url: String, into path: String) async throws -> String {
        let clock = ContinuousClock()
        let start = clock.now
        let (data, _) = try await URLSession.shared.data(from: URL(string: "\(url)/v1/lists/\(listName)/snapshot")!)
        guard data.count > 90_000_000 else { throw ScenarioFailure(scenario: name, message: "the download took \(data.count) bytes") }
        let db = try SQLiteConnection(path: path, create: true)
        try db.execute("PRAGMA journal_mode = WAL")
        try db.execute("CREATE TABLE section (id INTEGER PRIMARY KEY, position INTEGER NOT NULL, identifier TEXT NOT NULL, content TEXT NOT NULL)")
        try db.execute(
            "CREATE TABLE element (section_id INTEGER NOT NULL, position INTEGER NOT NULL, identifier TEXT NOT NULL, content TEXT NOT NULL, PRIMARY KEY (section_id, position)) WITHOUT ROWID")
        try db.execute("BEGIN")
        let sections = try db.prepare("INSERT INTO section (id, position, identifier, content) VALUES (?, ?, ?, ?)")
        let elements = try db.prepare("INSERT INTO element (section_id, position, identifier, content) VALUES (?, ?, ?, ?)")
        for (s, section) in list().enumerated() {
            try insert(sections, Int64(s + 1), Int64(s) << 20, section.model)
            for (e, element) in section.elements.enumerated() {
                try insert(elements, Int64(s + 1), Int64(e) << 20, element)
            }
        }
        try db.execute("COMMIT")
        return "ms=\(Measurement.milliseconds(clock.now - start)) bytes=\(data.count)"
    }

    private static func insert(_ statement: SQLiteStatement, _ a: Int64, _ b: Int64, _ item: ListItem) throws {
        statement.bind(1, a)
        statement.bind(2, b)
        let id = Array(item.id.utf8)
        try id.withUnsafeBufferPointer { id in
            try item.content.withUnsafeBufferPointer { content in
                statement.bind(3, text: id)
                statement.bind(4, text: content)
                _ = try statement.step()
                statement.reset()
            }
        }
    }
}

/// A value behind a lock, for a callback of another task.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
