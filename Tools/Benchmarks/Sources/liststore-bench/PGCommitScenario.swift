import Foundation
import ListDiff
import ListStore
import ListStorePostgres
import Logging
import NIOCore
import PostgresNIO

/// pg-commit-1pct (Docs/Benchmarks.md): the diff-iii pair committed into a `PostgresStore` holding its
/// source, against the same rows written with postgres-nio directly.
///
/// Ours is `PostgresStore.commit`: the list's row locked, the diff against the head the store kept
/// from its previous commit, the changed rows, the list's row and the journal entry written in one
/// transaction. The baseline writes the rows that commit changes (the sections and elements deleted,
/// inserted, moved and updated, one list row, one journal row with the same stage bytes) into plain
/// tables keyed by id, with one batched statement per kind, in one transaction: what a hand-written
/// PostgreSQL backend of the same data would do at the least. Each run of either starts from the
/// source, written untimed into a list of its own; runs of ours and of the baseline alternate.
struct PGCommitScenario {
    static let name = "pg-commit-1pct"
    static let baselineName = "the same rows written with postgres-nio directly"
    static let target = Target(minRatio: 0.4)
    /// Timed runs of ours and of the baseline, alternating, after one warm-up each.
    static let runs = 7

    static var scenario: Scenario {
        Scenario(
            name: name,
            summary: "\(CommitScenario.diffName) pair committed into a PostgresStore holding its source vs \(baselineName)",
            target: target
        ) { () throws(ScenarioFailure) in try PGCommitScenario().run() }
    }

    let log = ScenarioLog(scenario: name)

    func run() throws(ScenarioFailure) -> ScenarioResult {
        let (source, target, fingerprint) = try CommitScenario.inputPair(log)
        let url = try log.attempt("starting PostgreSQL") { try PostgresServer.url() }
        log.progress("database \(url)")
        let changeset = ListChangeset(source: source, target: target)
        let rows = try log.attempt("working out the baseline's rows") { try BaselineRows(source: source, target: target, changeset: changeset) }

        return try log.attempt("measuring") {
            let store = try runBlocking { try await PostgresStore(url: url) }
            let direct = try runBlocking { try await DirectWriter(url: url) }
            defer {
                _ = try? runBlocking {
                    await store.close()
                    await direct.close()
                }
            }
            // The journal entry's stages, as ours writes them, for the baseline's journal row.
            let scratch = "scratch-\(UUID().uuidString)"
            _ = try runBlocking { try await store.commit(source, to: scratch) }
            _ = try runBlocking { try await store.commit(target, to: scratch) }
            let stages = try runBlocking { try await store.journal(of: scratch, after: 1, limit: 1) }.entries[0].stagesJSON

            log.progress("1 warm-up + \(Self.runs) runs of ours (each on a list holding the source), each after one of the baseline")
            var baselineSamples = [Double]()
            var committed: CommitResult?
            let clock = ContinuousClock()
            let (oursTiming, _) = try Measurement.prepared(
                runs: Self.runs, warmUp: true,
                prepare: { () throws -> String in
                    let listID = try runBlocking { try await direct.load(source) }
                    baselineSamples.append(Measurement.milliseconds(try clock.measure {
                        try runBlocking { try await direct.write(rows, stages: stages, list: listID) }
                    }))
                    let list = "run-\(UUID().uuidString)"
                    _ = try runBlocking { try await store.commit(source, to: list) }
                    return list
                },
                { list in
                    let result = try runBlocking { try await store.commit(target, to: list) }
                    return (result.rowsWritten, result)
                },
                finish: { _, result in committed = result })
            let baselineTiming = Measurement.Timing(samples: Array(baselineSamples.dropFirst()), warmedUp: true)
            log.progress("ours: median \(Format.fixed(oursTiming.medianMs, decimals: 3)) ms, baseline: median "
                + "\(Format.fixed(baselineTiming.medianMs, decimals: 3)) ms")

            var failures = [String]()
            guard let committed else { throw PostgresServerError(message: "no commit ran") }
            if !committed.changed || committed.version != 2 || committed.digest != ListDigest.of(target) {
                failures.append("WRONG COMMIT: changed \(committed.changed), version \(committed.version), digest \(committed.digest.hex)")
            }
            if committed.rowsWritten != rows.count {
                log.progress("note: ours wrote \(committed.rowsWritten) rows, the baseline \(rows.count)")
            }
            return ScenarioResult(
                scenario: Self.name, oursMs: oursTiming.medianMs, baseline: Self.baselineName,
                baselineMs: baselineTiming.medianMs, target: Self.target,
                details: [
                    "rowsWritten": .int(committed.rowsWritten), "baselineRows": .int(rows.count),
                    "stages": .int(changeset.count), "fingerprint": .string(fingerprint),
                ],
                oursRuns: oursTiming.runsText, baselineRuns: baselineTiming.runsText, failures: failures)
        }
    }
}

/// The rows a commit of target over source changes, by kind, as the baseline writes them.
struct BaselineRows {
    struct Row {
        var id: String
        var section: String
        var position: Int64
        var content: [UInt8]
    }

    var deletedSections: [String] = []
    var insertedSections: [Row] = []
    var movedSections: [Row] = []
    var deletedElements: [String] = []
    var insertedElements: [Row] = []
    var movedElements: [Row] = []
    var updatedElements: [Row] = []

    /// Rows written, counted as `PostgresStore` counts them (a deleted section with its elements, the
    /// list's row and the journal's included).
    var count: Int {
        deletedSections.count + insertedSections.count + movedSections.count + deletedElements.count
            + insertedElements.count + movedElements.count + updatedElements.count + 2
    }

    init(source: [ListSection], target: [ListSection], changeset: ListChangeset) throws {
        let sourceSections = Set(source.map(\.model.id))
        let targetSections = Set(target.map(\.model.id))
        var sourceElements: [String: (section: String, content: [UInt8])] = [:]
        for section in source { for element in section.elements { sourceElements[element.id] = (section.model.id, element.content) } }
        var targetElements: [String: Row] = [:]
        for (s, section) in target.enumerated() {
            if !sourceSections.contains(section.model.id) {
                insertedSections.append(Row(id: section.model.id, section: "", position: Int64(s), content: section.model.content))
            }
            for (e, element) in section.elements.enumerated() {
                targetElements[element.id] = Row(id: element.id, section: section.model.id, position: Int64(e), content: element.content)
            }
        }
        for section in source where !targetSections.contains(section.model.id) {
            deletedSections.append(section.model.id)
            deletedElements += section.elements.map(\.id)
        }
        let gone = Set(deletedElements)
        for (id, _) in sourceElements where targetElements[id] == nil && !gone.contains(id) { deletedElements.append(id) }
        var moved = Set<String>()
        var movedSectionIDs = Set<String>()
        try changeset.forEachStage(applyingTo: source) { stage, after in
            for move in stage.elementMoved { moved.insert(after[move.to.section].elements[move.to.element].id) }
            for move in stage.sectionMoved { movedSectionIDs.insert(after[move.to].model.id) }
        }
        for (s, section) in target.enumerated() where movedSectionIDs.contains(section.model.id) {
            movedSections.append(Row(id: section.model.id, section: "", position: Int64(s), content: section.model.content))
        }
        for (id, row) in targetElements {
            guard let before = sourceElements[id] else {
                insertedElements.append(row)
                continue
            }
            if moved.contains(id) {
                movedElements.append(row)
            } else if before.content != row.content {
                updatedElements.append(row)
            }
        }
    }
}

/// Writes `BaselineRows` with postgres-nio, into tables of its own.
final class DirectWriter: Sendable {
    private let client: PostgresClient
    private let running: Task<Void, Never>
    private let logger: Logger = {
        var logger = Logger(label: "pg-commit-1pct.baseline")
        logger.logLevel = .error
        return logger
    }()
    private let lists = ManagedAtomicCounter()

    init(url: String) async throws {
        let configuration = try PostgresStore.Configuration(url: url)
        client = PostgresClient(configuration: configuration.postgres, backgroundLogger: logger)
        let client = client
        running = Task { await client.run() }
        try await client.withConnection { connection in
            for statement in [
                "CREATE TABLE IF NOT EXISTS bench_list (id BIGINT PRIMARY KEY, version BIGINT NOT NULL)",
                "CREATE TABLE IF NOT EXISTS bench_section (list_id BIGINT, id TEXT, position BIGINT, content BYTEA, PRIMARY KEY (list_id, id))",
                """
                CREATE TABLE IF NOT EXISTS bench_element (list_id BIGINT, id TEXT, section TEXT, position BIGINT, content BYTEA,
                    PRIMARY KEY (list_id, id))
                """,
                "CREATE TABLE IF NOT EXISTS bench_journal (list_id BIGINT, version BIGINT, stages BYTEA, PRIMARY KEY (list_id, version))",
                "TRUNCATE bench_list, bench_section, bench_element, bench_journal",
            ] {
                try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
            }
        }
    }

    func close() async {
        running.cancel()
        await running.value
    }

    /// Writes `source` as a new list (untimed); its id.
    func load(_ source: [ListSection]) async throws -> Int64 {
        let list = lists.next()
        try await client.withConnection { connection in
            try await connection.query("INSERT INTO bench_list VALUES (\(list), 1)", logger: logger)
            let sections = source.enumerated().map { s, section in
                BaselineRows.Row(id: section.model.id, section: "", position: Int64(s), content: section.model.content)
            }
            try await connection.query(
                """
                INSERT INTO bench_section SELECT \(list), * FROM unnest(\(sections.map(\.id)), \(sections.map(\.position)),
                    \(sections.map { ByteBuffer(bytes: $0.content) }))
                """, logger: logger)
            let elements = source.flatMap { section in
                section.elements.enumerated().map { e, element in
                    BaselineRows.Row(id: element.id, section: section.model.id, position: Int64(e), content: element.content)
                }
            }
            for start in stride(from: 0, to: elements.count, by: 20_000) {
                try await insertElements(Array(elements[start..<min(start + 20_000, elements.count)]), list: list, connection)
            }
        }
        return list
    }

    /// The timed part: the changed rows, the list row and the journal row, in one transaction.
    func write(_ rows: BaselineRows, stages: [UInt8], list: Int64) async throws {
        try await client.withConnection { connection in
            try await connection.query("BEGIN", logger: logger)
            try await connection.query("SELECT version FROM bench_list WHERE id = \(list) FOR UPDATE", logger: logger)
            try await connection.query(
                "DELETE FROM bench_element WHERE list_id = \(list) AND id = ANY(\(rows.deletedElements))", logger: logger)
            try await connection.query(
                "DELETE FROM bench_section WHERE list_id = \(list) AND id = ANY(\(rows.deletedSections))", logger: logger)
            try await connection.query(
                """
                INSERT INTO bench_section SELECT \(list), * FROM unnest(\(rows.insertedSections.map(\.id)),
                    \(rows.insertedSections.map(\.position)), \(rows.insertedSections.map { ByteBuffer(bytes: $0.content) }))
                """, logger: logger)
            try await connection.query(
                """
                UPDATE bench_section s SET position = u.position FROM unnest(\(rows.movedSections.map(\.id)),
                    \(rows.movedSections.map(\.position))) AS u(id, position) WHERE s.list_id = \(list) AND s.id = u.id
                """, logger: logger)
            try await insertElements(rows.insertedElements, list: list, connection)
            try await connection.query(
                """
                UPDATE bench_element e SET section = u.section, position = u.position
                FROM unnest(\(rows.movedElements.map(\.id)), \(rows.movedElements.map(\.section)),
                    \(rows.movedElements.map(\.position))) AS u(id, section, position)
                WHERE e.list_id = \(list) AND e.id = u.id
                """, logger: logger)
            try await connection.query(
                """
                UPDATE bench_element e SET content = u.content
                FROM unnest(\(rows.updatedElements.map(\.id)), \(rows.updatedElements.map { ByteBuffer(bytes: $0.content) })) AS u(id, content)
                WHERE e.list_id = \(list) AND e.id = u.id
                """, logger: logger)
            try await connection.query("UPDATE bench_list SET version = 2 WHERE id = \(list)", logger: logger)
            try await connection.query(
                "INSERT INTO bench_journal VALUES (\(list), 2, \(ByteBuffer(bytes: stages)))", logger: logger)
            try await connection.query("COMMIT", logger: logger)
        }
    }

    private func insertElements(_ rows: [BaselineRows.Row], list: Int64, _ connection: PostgresConnection) async throws {
        try await connection.query(
            """
            INSERT INTO bench_element SELECT \(list), * FROM unnest(\(rows.map(\.id)), \(rows.map(\.section)),
                \(rows.map(\.position)), \(rows.map { ByteBuffer(bytes: $0.content) }))
            """, logger: logger)
    }
}

/// Numbers 1, 2, … handed out once each.
final class ManagedAtomicCounter: @unchecked Sendable {
    // Safe: `value` is only used under `lock`.
    private var value: Int64 = 0
    private let lock = NSLock()

    func next() -> Int64 {
        lock.withLock {
            value += 1
            return value
        }
    }
}
