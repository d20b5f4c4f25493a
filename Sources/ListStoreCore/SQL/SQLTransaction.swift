import ListJSON
import ListMerge

/// A `StoreTransaction` of an SQL engine: the row steps whose statements are the same on SQLite
/// and PostgreSQL are written once, here and in this protocol's extensions, over the primitives a
/// driver gives (`rows`, `run`, and `run` of a `SQLBatch` for a commit's many rows); a driver keeps
/// only what its engine does its own way: loading and locking heads, and its integrity check.
///
/// Statements are written with `?` placeholders, one per argument, in order (the PostgreSQL
/// driver numbers them `$1`, `$2`, …). Where the dialects differ (collation, byte length), the
/// step asks `dialect`.
///
/// Not API: package-visible for the engines.
package protocol SQLTransaction: StoreTransaction {
    /// Which SQL the engine speaks.
    var dialect: SQLDialect { get }

    /// Runs `sql` with `arguments`; its rows.
    /// - Throws: `StoreError` (`.io` for a failed connection, `.damaged` for rows the logic did not
    ///   leave), or `CancellationError`.
    func rows(_ sql: String, _ arguments: [SQLValue]) throws -> [SQLRow]

    /// Runs `sql` with `arguments`, a statement that answers no rows; how many rows it changed.
    /// - Throws: as `rows(_:_:)`.
    @discardableResult
    func run(_ sql: String, _ arguments: [SQLValue]) throws -> Int

    /// Runs `batch`'s statement for each of its rows; how many rows it changed in all.
    /// - Throws: as `rows(_:_:)`.
    @discardableResult
    func run(_ batch: SQLBatch) throws -> Int

    /// The client id a new local change is queued under. SQLite makes it anew for a file that is
    /// not the one it was made for (a copied or restored file is another replica); PostgreSQL's is
    /// the store's.
    func clientIDForLocalChanges() throws -> String
}

/// The SQL dialect of an engine.
package enum SQLDialect: Sendable {
    case sqlite
    case postgres

    /// `ORDER BY` of names in byte order (PostgreSQL's default collation is the locale's).
    var byteOrder: String { self == .postgres ? #" COLLATE "C""# : "" }

    /// The length in bytes of a `stages` column.
    func octetLength(_ column: String) -> String {
        self == .postgres ? "octet_length(\(column))" : "length(CAST(\(column) AS BLOB))"
    }
}

extension SQLTransaction {
    /// The first row of `sql`, if any.
    package func row(_ sql: String, _ arguments: [SQLValue] = []) throws -> SQLRow? {
        try rows(sql, arguments).first
    }

    /// Calls `body` with `values` in runs of at most 500 (far below either engine's limit on a
    /// statement's arguments), each with its placeholders: `mark` once per value, separated by
    /// commas (`?, ?, ?` for an `IN` list, `(?, ?), (?, ?)` for rows).
    /// - Complexity: O(values).
    package func inRuns<T>(of values: [T], mark: String = "?", _ body: (ArraySlice<T>, _ placeholders: String) throws -> Void) rethrows {
        for start in stride(from: 0, to: values.count, by: 500) {
            let chunk = values[start..<min(start + 500, values.count)]
            try body(chunk, Array(repeating: mark, count: chunk.count).joined(separator: ", "))
        }
    }

    // MARK: The store

    package func identity() throws -> StoreIdentity {
        guard let row = try row("SELECT uuid, epoch FROM store WHERE id = 1") else {
            throw StoreError(.damaged, "the store at \(location) is damaged: it has no identity row")
        }
        return StoreIdentity(uuid: try row.string(0), epoch: try row.int(1))
    }

    package func advanceEpoch(clientID: String) throws {
        try run("UPDATE store SET epoch = epoch + 1, client_id = ? WHERE id = 1", [.text(clientID)])
    }

    package func clientID() throws -> String {
        guard let id = try row("SELECT client_id FROM store WHERE id = 1") else {
            throw StoreError(.damaged, "the store at \(location) is damaged: it has no client id")
        }
        return try id.string(0)
    }

    package func replaceClientID(_ old: String, with new: String) throws {
        try run("UPDATE store SET client_id = ? WHERE id = 1 AND client_id = ?", [.text(new), .text(old)])
    }

    package func listNames() throws -> [String] {
        // The store's own lists (`_Names.ownPrefix`) are left out.
        try rows("SELECT name FROM list WHERE substr(name, 1, 1) <> ? ORDER BY name\(dialect.byteOrder)", [.text(_Names.ownPrefix)])
            .map { try $0.string(0) }
    }

    package func summaries(of list: String?) throws -> [ListSummary] {
        // Counts from the head's journal entry, or from the rows when that entry was pruned; the store's
        // own lists left out of a listing.
        try rows(
            """
            SELECT l.name, l.head_version, l.head_digest, l.base_version,
                coalesce(j.section_count, (SELECT count(*) FROM section s WHERE s.list_id = l.id)),
                coalesce(j.element_count, (SELECT count(*) FROM section s JOIN element e ON e.section_id = s.id
                    WHERE s.list_id = l.id)), l.uid
            FROM list l LEFT JOIN journal j ON j.list_id = l.id AND j.version = l.head_version
            WHERE (CAST(? AS TEXT) IS NULL AND substr(l.name, 1, 1) <> ?) OR l.name = ?
            ORDER BY l.name\(dialect.byteOrder)
            """, [SQLValue(list), .text(_Names.ownPrefix), SQLValue(list)]
        ).map { row in
            ListSummary(
                name: try row.string(0), version: try row.int(1), digest: ListDigest(hex: try row.string(2)),
                sectionCount: try row.int(4), elementCount: try row.int(5), baseVersion: try row.int(3), id: try row.string(6))
        }
    }

    // MARK: Lists and journals

    package func listRow(_ list: String, locking: Bool) throws -> ListRow {
        try _Names.checkFindable(list, in: location)
        // SQLite's writing transactions are IMMEDIATE: they hold the store's write lock already.
        let lock = locking && dialect == .postgres ? " FOR UPDATE" : ""
        guard
            let row = try row(
                "SELECT id, head_version, head_digest, base_version, base_snapshot, uid FROM list WHERE name = ?\(lock)", [.text(list)])
        else { throw StoreError.listNotFound(list, in: location) }
        return ListRow(
            id: try row.int64(0), name: list, uid: try row.string(5), headVersion: try row.int(1),
            headDigest: ListDigest(hex: try row.string(2)), baseVersion: try row.int(3), baseSnapshot: try row.optionalBytes(4))
    }

    package func entries(of info: ListRow, after: Int, through: Int, limit: Int) throws -> [JournalEntry] {
        try rows(
            "SELECT \(Self.entryColumns()) FROM journal WHERE list_id = ? AND version > ? AND version <= ? ORDER BY version LIMIT ?",
            [.integer(info.id), SQLValue(after), SQLValue(through), .integer(Int64(clamping: limit))]
        ).map { try Self.entry($0, from: 0, of: info.name) }
    }

    /// The columns of a journal row that `entry(_:from:of:)` reads, each prefixed with `table`.
    static func entryColumns(_ table: String = "") -> String {
        [
            "version", "parent_version", "committed_at", "digest", "author", "message", "section_count", "element_count", "stages",
            "push_client", "push_seq", "conflicts",
        ].map { table + $0 }.joined(separator: ", ")
    }

    /// The journal entry in `row`'s columns `entryColumns`, from column `first` on.
    static func entry(_ row: SQLRow, from first: Int, of list: String) throws -> JournalEntry {
        let version = try row.int(first)
        return JournalEntry(
            list: list, version: version, parentVersion: try row.int(first + 1), committedAt: try row.string(first + 2),
            digest: ListDigest(hex: try row.string(first + 3)), author: try row.optionalString(first + 4),
            message: try row.optionalString(first + 5), sectionCount: try row.int(first + 6), elementCount: try row.int(first + 7),
            stagesJSON: try row.bytes(first + 8),
            pushID: try row.optionalString(first + 9).map { PushID(client: $0, seq: try row.optionalInt(first + 10) ?? 0) },
            conflicts: try row.optionalBytes(first + 11).map { try Conflict.storedReport($0, of: "version \(version) of list '\(list)'") }
                ?? [])
    }

    package func storedSnapshot(listID: Int64, after: Int, through: Int) throws -> (version: Int, document: [UInt8])? {
        try row(
            "SELECT version, snapshot FROM stored_snapshot WHERE list_id = ? AND version > ? AND version <= ? ORDER BY version DESC LIMIT 1",
            [.integer(listID), SQLValue(after), SQLValue(through)]
        ).map { (try $0.int(0), try $0.bytes(1)) }
    }

    package func journalStages(listID: Int64, from: Int, through: Int) throws -> [(version: Int, digest: ListDigest, stages: [UInt8])] {
        try rows(
            "SELECT version, digest, stages FROM journal WHERE list_id = ? AND version >= ? AND version <= ? ORDER BY version",
            [.integer(listID), SQLValue(from), SQLValue(through)]
        ).map { (try $0.int(0), ListDigest(hex: try $0.string(1)), try $0.bytes(2)) }
    }

    package func journalSizes(listID: Int64, after: Int, through: Int, limit: Int) throws -> [Int] {
        try rows(
            "SELECT \(dialect.octetLength("stages")) FROM journal WHERE list_id = ? AND version > ? AND version <= ? ORDER BY version LIMIT ?",
            [.integer(listID), SQLValue(after), SQLValue(through), .integer(Int64(clamping: limit))]
        ).map { try $0.int(0) }
    }

    package func storedSnapshotVersions(listID: Int64) throws -> [Int] {
        try rows("SELECT version FROM stored_snapshot WHERE list_id = ? ORDER BY version", [.integer(listID)]).map { try $0.int(0) }
    }

    package func holdsSections(listID: Int64) throws -> Bool {
        try row("SELECT EXISTS (SELECT 1 FROM section WHERE list_id = ?)", [.integer(listID)])?.bool(0) ?? false
    }

    // MARK: Consumers and pruning

    package func consumers(of info: ListRow) throws -> [ConsumerInfo] {
        try rows(
            "SELECT name, version, registered_at, acknowledged_at FROM consumer WHERE list_id = ? ORDER BY name\(dialect.byteOrder)",
            [.integer(info.id)]
        ).map { row in
            ConsumerInfo(
                name: try row.string(0), list: info.name, version: try row.int(1), registeredAt: try row.string(2),
                acknowledgedAt: try row.string(3))
        }
    }

    package func insertConsumer(_ name: String, listID: Int64, version: Int, at time: String) throws {
        try run(
            """
            INSERT INTO consumer (list_id, name, version, registered_at, acknowledged_at) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (list_id, name) DO UPDATE SET version = excluded.version, acknowledged_at = excluded.acknowledged_at
            """, [.integer(listID), .text(name), SQLValue(version), .text(time), .text(time)])
    }

    package func updateConsumer(_ name: String, listID: Int64, version: Int, at time: String) throws -> Bool {
        try run(
            "UPDATE consumer SET version = ?, acknowledged_at = ? WHERE list_id = ? AND name = ?",
            [SQLValue(version), .text(time), .integer(listID), .text(name)]) == 1
    }

    package func deleteConsumer(_ name: String, listID: Int64) throws -> Bool {
        try run("DELETE FROM consumer WHERE list_id = ? AND name = ?", [.integer(listID), .text(name)]) > 0
    }

    package func deleteJournal(listID: Int64, through version: Int) throws -> Int {
        try run("DELETE FROM journal WHERE list_id = ? AND version <= ?", [.integer(listID), SQLValue(version)])
    }

    package func setBase(listID: Int64, version: Int, snapshot: [UInt8]) throws {
        try run("UPDATE list SET base_version = ?, base_snapshot = ? WHERE id = ?", [SQLValue(version), .bytes(snapshot), .integer(listID)])
    }

    package func dropStoredSnapshots(listID: Int64, through version: Int) throws {
        try run("DELETE FROM stored_snapshot WHERE list_id = ? AND version <= ?", [.integer(listID), SQLValue(version)])
        try run(
            """
            UPDATE list SET snapshot_version = ?,
                bytes_since_snapshot = (SELECT coalesce(sum(\(dialect.octetLength("stages"))), 0) FROM journal
                    WHERE list_id = ? AND version > ?)
            WHERE id = ? AND snapshot_version < ?
            """, [SQLValue(version), .integer(listID), SQLValue(version), .integer(listID), SQLValue(version)])
    }

    // MARK: Pushes

    package func pushRecords(listID: Int64, client: String, seqs: ClosedRange<Int>) throws -> [PushRecord] {
        // A client id no push may carry was never recorded.
        guard PushRule.problem(with: PushID(client: client, seq: 1)) == nil else { return [] }
        return try rows(
            """
            SELECT seq, covers_from, version, pushed_at, conflicts, fingerprint, fingerprints FROM push
            WHERE list_id = ? AND client_id = ? AND seq >= ? AND coalesce(covers_from, seq) <= ? ORDER BY seq LIMIT 1000
            """, [.integer(listID), .text(client), SQLValue(seqs.lowerBound), SQLValue(seqs.upperBound)]
        ).map { try pushRecord($0, client: client, listID: listID) }
    }

    package func pushRecords(listID: Int64, mergedThrough version: Int) throws -> [PushRecord] {
        try rows(
            "SELECT seq, covers_from, version, pushed_at, NULL, fingerprint, fingerprints, client_id FROM push WHERE list_id = ? AND version <= ?",
            [.integer(listID), SQLValue(version)]
        ).map { try pushRecord($0, client: try $0.string(7), listID: listID) }
    }

    /// A row of `push` from its columns `seq, covers_from, version, pushed_at, conflicts,
    /// fingerprint, fingerprints` (a NULL `conflicts`: not read).
    private func pushRecord(_ row: SQLRow, client: String, listID: Int64) throws -> PushRecord {
        let seq = try row.int(0)
        let coversFrom = try row.optionalInt(1)
        let conflicts = try row.optionalBytes(4).map { try Conflict.storedReport($0, of: "push \(PushID(client: client, seq: seq)) of list row \(listID)") }
        guard let coversFrom else {
            return try PushRecord(
                client: client, seq: seq, version: try row.int(2), conflicts: conflicts ?? [], fingerprint: try row.optionalString(5),
                pushedAt: try row.string(3))
        }
        return try PushRecord(
            client: client, seq: seq, coversFrom: coversFrom, version: try row.int(2), conflicts: conflicts ?? [],
            fingerprints: try row.optionalBytes(6) ?? [], pushedAt: try row.string(3))
    }

    package func replacePushRecords(listID: Int64, with record: PushRecord) throws {
        try run("DELETE FROM push WHERE list_id = ? AND client_id = ? AND seq <= ?", [.integer(listID), .text(record.client), SQLValue(record.seq)])
        let single = record.coversFrom == nil
        try run(
            """
            INSERT INTO push (list_id, client_id, seq, covers_from, version, conflicts, pushed_at, fingerprint, fingerprints)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .integer(listID), .text(record.client), SQLValue(record.seq), SQLValue(record.coversFrom), SQLValue(record.version),
                .bytes(Array(Conflict.jsonValue(record.conflicts).serialized().utf8)), .text(record.pushedAt),
                SQLValue(single ? record.fingerprint(of: record.seq) : nil), single ? .null : .text(String(decoding: record.fingerprints, as: UTF8.self)),
            ])
    }

    package func latestPushSeq(listID: Int64, client: String) throws -> Int? {
        try row("SELECT max(seq) FROM push WHERE list_id = ? AND client_id = ?", [.integer(listID), .text(client)])?.optionalInt(0)
    }

    package func insertPush(listID: Int64, id: PushID, version: Int, conflictsJSON: [UInt8], pushedAt: String, fingerprint: String) throws {
        try run(
            "INSERT INTO push (list_id, client_id, seq, version, conflicts, pushed_at, fingerprint) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [.integer(listID), .text(id.client), SQLValue(id.seq), SQLValue(version), .bytes(conflictsJSON), .text(pushedAt), .text(fingerprint)])
    }

    package var waitsToCommit: Bool { true }

    package func insertDeletedSections(listID: Int64, ids: [String]) throws {
        // One row per identifier: those the list deleted before are left as they are.
        var seen = Set<ExactString>()
        let distinct = ids.filter { seen.insert(ExactString($0)).inserted }
        try inRuns(of: distinct, mark: "(?, ?)") { chunk, rows in
            _ = try run(
                "INSERT INTO deleted_section (list_id, identifier) VALUES \(rows) ON CONFLICT (list_id, identifier) DO NOTHING",
                chunk.flatMap { [.integer(listID), .utf8($0)] })
        }
    }

    package func deletedSections(listID: Int64, among ids: Set<ExactString>) throws -> Set<ExactString>? {
        guard try row("SELECT deleted_sections_kept FROM list WHERE id = ?", [.integer(listID)])?.optionalInt(0) == 1 else { return nil }
        var found = Set<ExactString>()
        try inRuns(of: Array(ids)) { chunk, marks in
            for row in try rows(
                "SELECT DISTINCT identifier FROM deleted_section WHERE list_id = ? AND identifier IN (\(marks))",
                [.integer(listID)] + chunk.map { .utf8($0.string) })
            {
                found.insert(ExactString(try row.string(0)))
            }
        }
        return found
    }

    package func markJournal(listID: Int64, version: Int, pushedAs id: PushID?, conflictsJSON: [UInt8]?) throws {
        try run(
            "UPDATE journal SET push_client = ?, push_seq = ?, conflicts = ? WHERE list_id = ? AND version = ?",
            [SQLValue(id?.client), SQLValue(id?.seq), SQLValue(conflictsJSON), .integer(listID), SQLValue(version)])
    }
}
