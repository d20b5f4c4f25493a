import Crypto
import ListStore

/// bulk-1m (Docs/Benchmarks.md): the first commit of a 1,000,000-element list (one section, the diff-iv
/// source) into a new store, against a raw SQLite insert of the same rows.
///
/// The baseline writes the rows of the store's `element` table (same columns, key and WITHOUT ROWID,
/// same positions) with one prepared statement in one transaction, under the store's settings (WAL,
/// synchronous FULL, 64 MiB cache); the content hashes are computed before it is timed. Ours also
/// checks and hashes every content, computes the digest, and writes the section, list and journal
/// rows. On both sides the file is created untimed (ours: by an empty commit, which writes nothing),
/// so that only the transaction that writes the rows is timed.
struct BulkScenario {
    static let name = "bulk-1m"
    static let baselineName = "raw SQLite insert, 1 transaction (WAL, synchronous FULL)"
    static let target = Target(minRatio: 0.4)
    static let elementCount = 1_000_000
    /// Timed runs of each side after one warm-up, each into a new file; a warm-up that takes longer
    /// than `slowMs` is the only run.
    static let runs = 3
    static let slowMs = 10_000.0

    static var scenario: Scenario {
        Scenario(
            name: name,
            summary: "first commit of \(elementCount) elements into a new store vs \(baselineName)",
            target: target
        ) { () throws(ScenarioFailure) in try BulkScenario().run() }
    }

    let log = ScenarioLog(scenario: name)

    func run() throws(ScenarioFailure) -> ScenarioResult {
        log.progress("generating \(Self.elementCount) elements")
        let sections = StoreInput.bulk(count: Self.elementCount)

        log.progress("ours: 1 warm-up + \(Self.runs) runs, each on a new store")
        var peak: Double?
        var committed: CommitResult?
        let (oursTiming, _) = try log.attempt("committing") {
            try Measurement.prepared(
                runs: Self.runs, warmUp: true, slowMs: Self.slowMs,
                progress: { run, ms in log.progress("ours: \(run) \(Format.fixed(ms, decimals: 1)) ms") },
                prepare: { () throws -> (TemporaryDirectory, Store) in
                    let directory = try TemporaryDirectory(label: Self.name)
                    let store = try Store(path: directory.file("bulk.liststore"))
                    try store.commit([], to: "list")  // creates the file; the empty list writes nothing
                    PeakMemory.reset()
                    return (directory, store)
                },
                { _, store in
                    let result = try store.commit(sections, to: "list")
                    return (result.rowsWritten, result)
                },
                finish: { _, result in
                    if let mb = PeakMemory.peakMB() { peak = max(peak ?? 0, mb) }
                    committed = result
                })
        }
        log.progress("ours: median \(Format.fixed(oursTiming.medianMs, decimals: 1)) ms")
        guard let committed else { throw log.failure("no commit ran") }

        log.progress("baseline: hashing the contents (untimed)")
        let elements = sections[0].elements
        var hashes = [UInt8]()
        hashes.reserveCapacity(32 * elements.count)
        for element in elements {
            SHA256.hash(data: element.content).withUnsafeBytes { hashes.append(contentsOf: $0) }
        }
        log.progress("baseline: 1 warm-up + \(Self.runs) runs, each on a new file")
        let (baselineTiming, baselineRows) = try log.attempt("the raw SQLite insert") {
            try Measurement.prepared(
                runs: Self.runs, warmUp: true, slowMs: Self.slowMs,
                progress: { run, ms in log.progress("baseline: \(run) \(Format.fixed(ms, decimals: 1)) ms") },
                prepare: { () throws -> (TemporaryDirectory, SQLiteConnection) in
                    let directory = try TemporaryDirectory(label: Self.name)
                    let db = try SQLiteConnection(path: directory.file("bulk.sqlite"), create: true)
                    try db.execute("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA cache_size = -65536")
                    try db.execute(Self.elementTable)
                    return (directory, db)
                },
                { _, db in (try Self.insert(elements, hashes: hashes, into: db), ()) },
                finish: { _, _ in })
        }
        log.progress("baseline: median \(Format.fixed(baselineTiming.medianMs, decimals: 1)) ms")

        var failures = [String]()
        log.progress("checking the committed digest (untimed)")
        let expectedDigest = ListDigest.of(sections)
        if !committed.changed || committed.version != 1 || committed.digest != expectedDigest {
            let message = "WRONG COMMIT: changed \(committed.changed), version \(committed.version), digest "
                + "\(committed.digest.hex) (the list's is \(expectedDigest.hex))"
            log.progress(message)
            failures.append(message)
        }
        var details: [String: JSONValue] = [
            "rowsWritten": .int(committed.rowsWritten),
            "baselineRowsWritten": .int(baselineRows),
        ]
        if let peak { details["peakMemoryMB"] = .number(peak, decimals: 1) }
        return ScenarioResult(
            scenario: Self.name, oursMs: oursTiming.medianMs, baseline: Self.baselineName,
            baselineMs: baselineTiming.medianMs, target: Self.target, details: details,
            oursRuns: oursTiming.runsText, baselineRuns: baselineTiming.runsText, failures: failures)
    }

    /// The store's `element` table (Migrations/v0001_initial.sql).
    static let elementTable = """
        CREATE TABLE element (
            section_id INTEGER NOT NULL,
            position INTEGER NOT NULL,
            identifier TEXT NOT NULL,
            content TEXT NOT NULL,
            content_hash BLOB NOT NULL,
            PRIMARY KEY (section_id, position)
        ) WITHOUT ROWID
        """

    /// The distance between the positions of a new store's rows (the store's `_Positions.spacing`).
    static let positionSpacing: Int64 = 1 << 32

    /// Inserts the rows of section 1 in one transaction; returns the number of rows written.
    static func insert(_ elements: [ListItem], hashes: [UInt8], into db: SQLiteConnection) throws -> Int {
        try db.execute("BEGIN IMMEDIATE")
        let insert = try db.prepare(
            "INSERT INTO element (section_id, position, identifier, content, content_hash) VALUES (?, ?, ?, ?, ?)")
        try hashes.withUnsafeBytes { hashBytes in
            for (i, element) in elements.enumerated() {
                var id = element.id
                try id.withUTF8 { idBytes in
                    try element.content.withUnsafeBufferPointer { contentBytes in
                        insert.bind(1, 1)
                        insert.bind(2, Int64(i) * positionSpacing)
                        insert.bind(3, text: idBytes)
                        insert.bind(4, text: contentBytes)
                        insert.bind(5, blob: UnsafeRawBufferPointer(rebasing: hashBytes[32 * i..<32 * i + 32]))
                        _ = try insert.step()
                        insert.reset()
                    }
                }
            }
        }
        try db.execute("COMMIT")
        return elements.count
    }
}
