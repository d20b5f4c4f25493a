import ListStore

/// load-1m (Docs/Benchmarks.md): open a store and load the head of a 1,000,000-element list (the bulk-1m
/// list), against a raw SQLite open and select of the same rows on the same file.
///
/// Ours is `Store(path:)` followed by `snapshot(of:)`, which reads the head from the tables into
/// `ListItem`s, positions and content hashes. The baseline opens the file with the SQLite C API, finds
/// the list's sections and steps through their element rows in position order, copying every column
/// out (identifier into a `String`, content into `[UInt8]`, the position and the hash), as a program
/// that loads the rows itself would. What either side loaded is released after the run, untimed.
struct LoadScenario {
    static let name = "load-1m"
    static let baselineName = "raw SQLite open + select of the element rows"
    static let target = Target(minRatio: 0.5)
    static let elementCount = 1_000_000
    static let listName = "list"
    /// Timed runs of each side after one warm-up.
    static let runs = 5

    static var scenario: Scenario {
        Scenario(
            name: name,
            summary: "open a store and load a \(elementCount)-element head vs \(baselineName)",
            target: target
        ) { () throws(ScenarioFailure) in try LoadScenario().run() }
    }

    let log = ScenarioLog(scenario: name)

    func run() throws(ScenarioFailure) -> ScenarioResult {
        let directory = try log.attempt("creating a temporary directory") { try TemporaryDirectory(label: Self.name) }
        defer { directory.remove() }
        let path = directory.file("load.liststore")
        log.progress("building a store holding \(Self.elementCount) elements (untimed)")
        let expectedDigest = try log.attempt("building the store") { try Self.build(at: path) }

        // Ours first; the peak is reset before each run and read after it, before its result is released.
        log.progress("ours: 1 warm-up + \(Self.runs) runs")
        var peak: Double?
        let (oursTiming, rows) = try log.attempt("loading") {
            try Measurement.prepared(
                runs: Self.runs, warmUp: true,
                prepare: { PeakMemory.reset() },
                { _ in
                    let store = try Store(path: path)
                    let snapshot = try store.snapshot(of: Self.listName)
                    return (snapshot.elementCount, snapshot)
                },
                finish: { _, _ in
                    if let mb = PeakMemory.peakMB() { peak = max(peak ?? 0, mb) }
                })
        }
        log.progress("ours: median \(Format.fixed(oursTiming.medianMs, decimals: 1)) ms, \(rows) rows")

        log.progress("baseline: 1 warm-up + \(Self.runs) runs")
        let (baselineTiming, baselineRows) = try log.attempt("the raw SQLite select") {
            try Measurement.prepared(
                runs: Self.runs, warmUp: true,
                prepare: {},
                { _ in
                    let loaded = try Self.select(path: path)
                    return (loaded.positions.count, loaded)
                },
                finish: { _, _ in })
        }
        log.progress("baseline: median \(Format.fixed(baselineTiming.medianMs, decimals: 1)) ms, \(baselineRows) rows")

        // Check once, untimed, that the store loads the list that was committed.
        var failures = [String]()
        let snapshot = try log.attempt("loading") { try Store(path: path).snapshot(of: Self.listName) }
        if snapshot.digest != expectedDigest || ListDigest.of(snapshot.sections) != expectedDigest
            || rows != Self.elementCount || baselineRows != Self.elementCount
        {
            let message = "WRONG LOAD: \(rows) rows (baseline \(baselineRows)), digest \(snapshot.digest.hex)"
                + " (the committed list's is \(expectedDigest.hex))"
            log.progress(message)
            failures.append(message)
        }
        var details: [String: JSONValue] = ["rows": .int(rows)]
        if let peak { details["peakMemoryMB"] = .number(peak, decimals: 1) }
        return ScenarioResult(
            scenario: Self.name, oursMs: oursTiming.medianMs, baseline: Self.baselineName,
            baselineMs: baselineTiming.medianMs, target: Self.target, details: details,
            oursRuns: oursTiming.runsText, baselineRuns: baselineTiming.runsText, failures: failures)
    }

    /// Commits the bulk-1m list into a new store at `path` and closes it; returns the list's digest.
    static func build(at path: String) throws -> ListDigest {
        let store = try Store(path: path)
        return try store.commit(StoreInput.bulk(count: elementCount), to: listName).digest
    }

    /// The element rows as the baseline copies them out.
    struct LoadedRows {
        var positions: [Int64] = []
        var identifiers: [String] = []
        var contents: [[UInt8]] = []
        /// The 32-byte content hashes, one after the other.
        var hashes: [UInt8] = []
    }

    /// Opens the file and reads the list's element rows, section by section in position order.
    static func select(path: String) throws -> LoadedRows {
        let db = try SQLiteConnection(path: path, create: false)
        try db.execute("PRAGMA cache_size = -65536")
        try db.execute("BEGIN")
        let sections = try db.prepare(
            "SELECT s.id FROM section s JOIN list l ON l.id = s.list_id WHERE l.name = '\(listName)' ORDER BY s.position")
        var sectionIDs = [Int64]()
        while try sections.step() { sectionIDs.append(sections.int64(0)) }
        let elements = try db.prepare(
            "SELECT position, identifier, content, content_hash FROM element WHERE section_id = ? ORDER BY position")
        var rows = LoadedRows()
        for id in sectionIDs {
            elements.bind(1, id)
            while try elements.step() {
                rows.positions.append(elements.int64(0))
                rows.identifiers.append(String(decoding: elements.text(1), as: UTF8.self))
                rows.contents.append(Array(elements.text(2)))
                rows.hashes.append(contentsOf: elements.blob(3))
            }
            elements.reset()
        }
        try db.execute("COMMIT")
        return rows
    }
}
