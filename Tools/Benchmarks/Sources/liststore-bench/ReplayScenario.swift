import Foundation
import ListStore
import ListSync

/// replay-1k (Docs/Benchmarks.md): a replica applies 1,000 commits of a source list (1% of a 10,000-element
/// list each), against a raw SQLite write of the same rows, 1,000 transactions too.
///
/// Untimed, the source store receives version 0 of `ReplayInput` (store version 1) and the 1,000
/// versions after it (store versions 2…1001), and a replica template is made: a replica store that
/// pulled store version 1, checkpointed and closed. Each run of ours copies the template to a new file,
/// opens it (`Store(path:)`, untimed), and times one `Replica.pull(from: LocalSource(source))` with the
/// default options: it reads the source's journal a page at a time, and applies each commit in its own
/// transaction (decode the stages, apply them to the replica's head, write the rows along them, the
/// journal entry with the source's stages JSON, the list row and the replica_source position, check the
/// digest; synchronous FULL). rowsWritten is the sum of the source commits' `CommitResult.rowsWritten`
/// plus one replica_source row per commit: each replica transaction writes the same changes onto the
/// same head (same positions) with the same writer.
///
/// The baseline is what a program that keeps the list in SQLite itself would write for the same
/// commits: on a file with the store's tables and pragmas (WAL, synchronous FULL, 64 MiB cache,
/// autocheckpoint at 10,000 pages), holding version 0 and checkpointed, each version is one
/// transaction of prepared statements: a DELETE per deleted element, an UPDATE of the key per moved
/// element, an UPDATE of content and hash per updated element, an INSERT per new element (positions of
/// its own, see `ReplayInput`), the journal row holding that commit's stages JSON as the source
/// recorded it, and the list row's head version and digest. Everything it writes (contents, hashes,
/// JSON) is prepared before it is timed.
///
/// Runs of the baseline and of ours alternate (baseline first), so that both see the same machine.
struct ReplayScenario {
    static let name = "replay-1k"
    static let baselineName = "raw SQLite write of the same rows, 1 transaction per commit (WAL, synchronous FULL)"
    static let target = Target(minRatio: 0.5)
    static let listName = "list"
    /// Timed runs of each side, alternating; no warm-up (each run is 1,000 flushed transactions).
    static let runs = 3

    static var scenario: Scenario {
        Scenario(
            name: name,
            summary: "replica pulls \(ReplayInput.versionCount) commits (1% of a 10,000-element list each) vs \(baselineName)",
            target: target
        ) { () throws(ScenarioFailure) in try ReplayScenario().run() }
    }

    let log = ScenarioLog(scenario: name)

    /// What the baseline writes for one commit.
    struct BaselineCommit {
        var rows: ReplayInput.RowWrites
        var version: Int64
        var committedAt: [UInt8]
        var digest: [UInt8]
        var sectionCount: Int64
        var elementCount: Int64
        var stages: [UInt8]
    }

    func run() throws(ScenarioFailure) -> ScenarioResult {
        let directory = try log.attempt("creating a temporary directory") { try TemporaryDirectory(label: Self.name) }
        defer { directory.remove() }

        // The source store and the replica template (untimed).
        log.progress("committing version 0 to the source store and pulling it into a replica template (untimed)")
        var input = ReplayInput()
        let base = input.itemSections
        let baseRows = input.rows
        let source = try log.attempt("creating the source store") { try Store(path: directory.file("source.liststore")) }
        let templatePath = directory.file("replica-template.liststore")
        try log.attempt("making the replica template") {
            try source.commit(input.listSections, to: Self.listName)
            try Self.makeTemplate(at: templatePath, from: source)
        }

        log.progress("generating and committing \(ReplayInput.versionCount) versions to the source store (untimed)")
        var plan = [ReplayInput.RowWrites]()
        var sourceRows = 0
        var sourceCommitMs = 0.0
        try log.attempt("committing the versions to the source") {
            for _ in 0..<ReplayInput.versionCount {
                plan.append(input.advance())
                let sections = input.listSections
                let started = ContinuousClock.now
                let result = try source.commit(sections, to: Self.listName)
                sourceCommitMs += Measurement.milliseconds(ContinuousClock.now - started)
                guard result.changed, result.version == input.version + 1 else {
                    throw ScenarioFailure(
                        scenario: Self.name,
                        message: "the source commit of input version \(input.version) made store version \(result.version)")
                }
                sourceRows += result.rowsWritten
            }
            try source.checkpoint()
        }
        // For people: the same commits made directly (the first time, into the source), without the
        // replica's journal reads and stage decoding.
        log.progress("the source's \(ReplayInput.versionCount) commits (Store.commit, untimed) took "
            + "\(Format.fixed(sourceCommitMs, decimals: 1)) ms in all")
        let fingerprint = Fingerprint.of(source: base, target: input.itemSections).hex
        guard fingerprint == ReplayInput.expectedFingerprint else {
            throw log.failure("FINGERPRINT MISMATCH: got \(fingerprint), expected \(ReplayInput.expectedFingerprint)"
                + " — the input does not follow ReplayInput's specification")
        }
        log.progress("fingerprint \(fingerprint) ok")
        let head = try log.attempt("reading the source's head") { try source.summary(of: Self.listName) }
        let finalDigest = ListDigest.of(input.listSections)
        guard head.version == ReplayInput.versionCount + 1, head.digest == finalDigest else {
            throw log.failure("the source's head is version \(head.version), digest \(head.digest.hex); expected "
                + "version \(ReplayInput.versionCount + 1), digest \(finalDigest.hex)")
        }
        let commits = try log.attempt("reading the source's journal") { try Self.baselineCommits(plan, from: source) }

        // Alternating runs.
        log.progress("\(Self.runs) runs of the baseline and of ours, alternating (each \(ReplayInput.versionCount) transactions)")
        let clock = ContinuousClock()
        var oursSamples = [Double]()
        var baselineSamples = [Double]()
        var peak: Double?
        var pulled: Replica.PullResult?
        var replicaDigest: ListDigest?
        var baselineRows = 0
        for run in 1...Self.runs {
            // Baseline.
            let baselineMs = try log.attempt("the raw SQLite writes") { () throws -> Double in
                let runDirectory = try TemporaryDirectory(label: Self.name)
                let db = try Self.baselineDatabase(at: runDirectory.file("replay.sqlite"), rows: baseRows)
                let statements = try BaselineStatements(db)
                let before = db.totalChanges
                let ms = Measurement.milliseconds(try clock.measure {
                    for commit in commits { try statements.write(commit) }
                })
                baselineRows = db.totalChanges - before
                try Self.checkBaseline(db)
                return ms
            }
            baselineSamples.append(baselineMs)
            log.progress("run \(run): baseline \(Format.fixed(baselineMs, decimals: 1)) ms")

            // Ours.
            let oursMs = try log.attempt("pulling") { () throws -> Double in
                let runDirectory = try TemporaryDirectory(label: Self.name)
                let path = runDirectory.file("replica.liststore")
                try FileManager.default.copyItem(atPath: templatePath, toPath: path)
                let replica = Replica(store: try Store(path: path), list: Self.listName)
                PeakMemory.reset()
                var result: Replica.PullResult?
                let ms = Measurement.milliseconds(try clock.measure {
                    result = try runBlocking { try await replica.pull(from: LocalSource(source)) }
                })
                if let mb = PeakMemory.peakMB() { peak = max(peak ?? 0, mb) }
                pulled = result
                replicaDigest = try replica.store.snapshot(of: Self.listName).digest
                return ms
            }
            oursSamples.append(oursMs)
            log.progress("run \(run): ours \(Format.fixed(oursMs, decimals: 1)) ms")
        }
        let oursTiming = Measurement.Timing(samples: oursSamples, warmedUp: false)
        let baselineTiming = Measurement.Timing(samples: baselineSamples, warmedUp: false)
        log.progress("ours: median \(Format.fixed(oursTiming.medianMs, decimals: 1)) ms, baseline: median "
            + "\(Format.fixed(baselineTiming.medianMs, decimals: 1)) ms")

        // The replica must equal the source, commit by commit, without a resync.
        var failures = [String]()
        guard let pulled else { throw log.failure("no pull ran") }
        if pulled.version != head.version || pulled.digest != head.digest.hex || replicaDigest != head.digest
            || pulled.applied != ReplayInput.versionCount || pulled.resynced
        {
            let message = "WRONG REPLICA: version \(pulled.version), digest \(pulled.digest) (stored: "
                + "\(replicaDigest?.hex ?? "none")), applied \(pulled.applied), resynced \(pulled.resynced) "
                + "\(pulled.reason.map { "(\($0))" } ?? ""); the source is version \(head.version), digest \(head.digest.hex)"
            log.progress(message)
            failures.append(message)
        }

        // Each replica transaction writes what the source's commit of the same version wrote (the same
        // head, the same target, the same writer) plus its replica_source row.
        var details: [String: JSONValue] = [
            "commits": .int(ReplayInput.versionCount),
            "rowsWritten": .int(sourceRows + ReplayInput.versionCount),
            "baselineRowsWritten": .int(baselineRows),
            "fingerprint": .string(fingerprint),
        ]
        if let peak { details["peakMemoryMB"] = .number(peak, decimals: 1) }
        return ScenarioResult(
            scenario: Self.name, oursMs: oursTiming.medianMs, baseline: Self.baselineName,
            baselineMs: baselineTiming.medianMs, target: Self.target, details: details,
            oursRuns: oursTiming.runsText, baselineRuns: baselineTiming.runsText, failures: failures)
    }

    /// A replica store at `path` that pulled `source`'s current version, checkpointed and closed (its
    /// write-ahead log gone), so that the file alone can be copied.
    static func makeTemplate(at path: String, from source: Store) throws {
        do {
            let replica = Replica(store: try Store(path: path), list: listName)
            let result = try runBlocking { try await replica.pull(from: LocalSource(source)) }
            guard result.version == 1, !result.resynced else {
                throw ScenarioFailure(scenario: name, message: "the template pull reached version \(result.version)")
            }
            try replica.store.checkpoint()
        }
        // The store closed its connections when it went away; a background checkpoint may still hold
        // the log for a moment.
        let deadline = ContinuousClock.now + .seconds(10)
        while FileManager.default.fileExists(atPath: path + "-wal") {
            guard ContinuousClock.now < deadline else {
                throw ScenarioFailure(scenario: name, message: "the replica template's write-ahead log stayed open")
            }
            Thread.sleep(forTimeInterval: 0.01)
        }
    }

    /// Pairs each version's row writes with the journal entry the source recorded for it.
    static func baselineCommits(_ plan: [ReplayInput.RowWrites], from source: Store) throws -> [BaselineCommit] {
        var entries = [JournalEntry]()
        var page = try source.journal(of: listName, after: 1, limit: 100)
        entries += page.entries
        while page.hasMore, let last = entries.last {
            page = try source.journal(of: listName, after: last.version, limit: 100)
            entries += page.entries
        }
        guard entries.count == plan.count else {
            throw ScenarioFailure(scenario: name, message: "the source's journal holds \(entries.count) entries after version 1, not \(plan.count)")
        }
        return zip(plan, entries).map { rows, entry in
            BaselineCommit(
                rows: rows, version: Int64(entry.version), committedAt: Array(entry.committedAt.utf8),
                digest: Array(entry.digest.hex.utf8), sectionCount: Int64(entry.sectionCount),
                elementCount: Int64(entry.elementCount), stages: entry.stagesJSON)
        }
    }

    /// The baseline's tables (the store's `element`, `journal` and the `list` columns it writes).
    static let tables = BulkScenario.elementTable + ";\n" + """
        CREATE TABLE journal (
            list_id INTEGER NOT NULL,
            version INTEGER NOT NULL,
            parent_version INTEGER NOT NULL,
            committed_at TEXT NOT NULL,
            digest TEXT NOT NULL,
            author TEXT,
            message TEXT,
            section_count INTEGER NOT NULL,
            element_count INTEGER NOT NULL,
            stages TEXT NOT NULL,
            PRIMARY KEY (list_id, version)
        ) WITHOUT ROWID;
        CREATE TABLE list (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            head_version INTEGER NOT NULL,
            head_digest TEXT NOT NULL
        );
        """

    /// A new baseline file holding version 0 (sections 1…10), checkpointed.
    static func baselineDatabase(at path: String, rows: [[ReplayInput.Row]]) throws -> SQLiteConnection {
        let db = try SQLiteConnection(path: path, create: true)
        try db.execute(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA cache_size = -65536; PRAGMA wal_autocheckpoint = 10000")
        try db.execute(tables)
        try db.execute("BEGIN IMMEDIATE")
        try db.execute("INSERT INTO list (id, name, head_version, head_digest) VALUES (1, '\(listName)', 1, '')")
        let insert = try db.prepare(
            "INSERT INTO element (section_id, position, identifier, content, content_hash) VALUES (?, ?, ?, ?, ?)")
        for (s, section) in rows.enumerated() {
            for row in section {
                let id = Array(row.item.id.utf8)
                let content = row.listItem.content
                let hash = ReplayInput.hash(content)
                try id.withUnsafeBufferPointer { id in
                    try content.withUnsafeBufferPointer { content in
                        try hash.withUnsafeBytes { hash in
                            insert.bind(1, Int64(s + 1))
                            insert.bind(2, row.position)
                            insert.bind(3, text: id)
                            insert.bind(4, text: content)
                            insert.bind(5, blob: hash)
                            _ = try insert.step()
                            insert.reset()
                        }
                    }
                }
            }
        }
        try db.execute("COMMIT")
        try db.execute("PRAGMA wal_checkpoint(RESTART)")
        return db
    }

    /// After a baseline run: the table holds as many rows as the list.
    static func checkBaseline(_ db: SQLiteConnection) throws {
        let count = try db.prepare("SELECT COUNT(*) FROM element")
        guard try count.step(), count.int64(0) == Int64(ReplayInput.sectionCount * ReplayInput.sectionSize) else {
            throw ScenarioFailure(scenario: name, message: "the baseline's element table does not hold the list")
        }
    }

    /// The baseline's prepared statements.
    struct BaselineStatements {
        let db: SQLiteConnection
        let delete: SQLiteStatement
        let move: SQLiteStatement
        let update: SQLiteStatement
        let insert: SQLiteStatement
        let journal: SQLiteStatement
        let list: SQLiteStatement

        init(_ db: SQLiteConnection) throws {
            self.db = db
            delete = try db.prepare("DELETE FROM element WHERE section_id = ? AND position = ?")
            move = try db.prepare("UPDATE element SET section_id = ?, position = ? WHERE section_id = ? AND position = ?")
            update = try db.prepare("UPDATE element SET content = ?, content_hash = ? WHERE section_id = ? AND position = ?")
            insert = try db.prepare(
                "INSERT INTO element (section_id, position, identifier, content, content_hash) VALUES (?, ?, ?, ?, ?)")
            journal = try db.prepare("""
                INSERT INTO journal (list_id, version, parent_version, committed_at, digest, author, message,
                    section_count, element_count, stages)
                VALUES (1, ?, ?, ?, ?, NULL, NULL, ?, ?, ?)
                """)
            list = try db.prepare("UPDATE list SET head_version = ?, head_digest = ? WHERE id = 1")
        }

        /// One commit, one transaction.
        func write(_ commit: BaselineCommit) throws {
            try db.execute("BEGIN IMMEDIATE")
            let rows = commit.rows
            for (section, position) in rows.deletes {
                delete.bind(1, Int64(section + 1))
                delete.bind(2, position)
                try run(delete)
            }
            for m in rows.moves {
                move.bind(1, Int64(m.toSection + 1))
                move.bind(2, m.toPosition)
                move.bind(3, Int64(m.fromSection + 1))
                move.bind(4, m.fromPosition)
                try run(move)
            }
            for u in rows.updates {
                try u.content.withUnsafeBufferPointer { content in
                    try u.hash.withUnsafeBytes { hash in
                        update.bind(1, text: content)
                        update.bind(2, blob: hash)
                        update.bind(3, Int64(u.section + 1))
                        update.bind(4, u.position)
                        try run(update)
                    }
                }
            }
            for i in rows.inserts {
                try i.id.withUnsafeBufferPointer { id in
                    try i.content.withUnsafeBufferPointer { content in
                        try i.hash.withUnsafeBytes { hash in
                            insert.bind(1, Int64(i.section + 1))
                            insert.bind(2, i.position)
                            insert.bind(3, text: id)
                            insert.bind(4, text: content)
                            insert.bind(5, blob: hash)
                            try run(insert)
                        }
                    }
                }
            }
            try commit.committedAt.withUnsafeBufferPointer { committedAt in
                try commit.digest.withUnsafeBufferPointer { digest in
                    try commit.stages.withUnsafeBufferPointer { stages in
                        journal.bind(1, commit.version)
                        journal.bind(2, commit.version - 1)
                        journal.bind(3, text: committedAt)
                        journal.bind(4, text: digest)
                        journal.bind(5, commit.sectionCount)
                        journal.bind(6, commit.elementCount)
                        journal.bind(7, text: stages)
                        try run(journal)
                        list.bind(1, commit.version)
                        list.bind(2, text: digest)
                        try run(list)
                    }
                }
            }
            try db.execute("COMMIT")
        }

        /// Steps a statement that returns no rows and must change exactly one.
        private func run(_ statement: SQLiteStatement) throws {
            _ = try statement.step()
            statement.reset()
            guard db.changes == 1 else {
                throw SQLiteError(code: 0, message: "a baseline statement did not change exactly one row")
            }
        }
    }
}
