import Foundation
import GRDB
import ListMerge

// The SQLite driver's row steps for the store as a whole and for reads: identity, lists, journal
// entries, consumers, the outbox and recorded pushes.

extension SQLiteTransaction {
    // MARK: The store

    func identity() throws -> StoreIdentity {
        guard let row = try Row.fetchOne(db, sql: "SELECT uuid, epoch FROM store WHERE id = 1"),
              let uuid = row["uuid"] as String?, let epoch = row["epoch"] as Int?
        else {
            throw StoreError(.damaged, "the store at \(location) is damaged: it has no identity row")
        }
        return StoreIdentity(uuid: uuid, epoch: epoch)
    }

    func advanceEpoch(clientID: String) throws {
        try db.execute(sql: "UPDATE store SET epoch = epoch + 1, client_id = ? WHERE id = 1", arguments: [clientID])
    }

    func integrityProblems() throws -> [String] {
        do {
            let rows = try String.fetchAll(db, sql: "PRAGMA integrity_check")
            return rows == ["ok"] ? [] : rows
        } catch let error as CancellationError {
            throw error
        } catch let error as DatabaseError where error.resultCode == .SQLITE_INTERRUPT && Task.isCancelled {
            throw CancellationError()
        } catch {
            return ["integrity check failed: \(error)"]
        }
    }

    func listNames() throws -> [String] {
        try String.fetchAll(db, sql: "SELECT name FROM list ORDER BY name")
    }

    func summaries(of list: String?) throws -> [ListSummary] {
        let statement = try _RawStatement(
            db, """
                SELECT l.name, l.head_version, l.head_digest, l.base_version,
                    COALESCE(j.section_count, (SELECT COUNT(*) FROM section s WHERE s.list_id = l.id)),
                    COALESCE(j.element_count, (SELECT COUNT(*) FROM section s JOIN element e ON e.section_id = s.id
                        WHERE s.list_id = l.id))
                FROM list l LEFT JOIN journal j ON j.list_id = l.id AND j.version = l.head_version
                WHERE ?1 IS NULL OR l.name = ?1
                ORDER BY l.name
                """)
        statement.bind(1, optionalText: list)
        defer { statement.reset() }
        var lists: [ListSummary] = []
        while try statement.step() {
            lists.append(ListSummary(
                name: statement.string(0), version: Int(statement.int64(1)), digest: ListDigest(hex: statement.string(2)),
                sectionCount: Int(statement.int64(4)), elementCount: Int(statement.int64(5)),
                baseVersion: Int(statement.int64(3))))
        }
        return lists
    }

    func clientID() throws -> String {
        guard let id = try String.fetchOne(db, sql: "SELECT client_id FROM store WHERE id = 1") else {
            throw StoreError(.damaged, "the store at \(location) is damaged: it has no client id")
        }
        return id
    }

    /// The client id of the store, made anew first when the store's file is not the one the id was
    /// made for: a copy of the file, or the file restored from a backup, is another file (another
    /// device and inode), and must not push under the id its original goes on pushing under
    /// (ListMerge's article "Offline Writes and Conflicts", "What a replica promises"). Moving or
    /// renaming the file keeps it; a file the identity cannot be read of keeps the id, and the
    /// source's record tells of a reuse instead.
    func clientIDOfThisFile() throws -> String {
        let client = try clientID()
        guard let file = _FileIdentity.of(location) else { return client }
        let recorded = try String.fetchOne(db, sql: "SELECT file_identity FROM store WHERE id = 1")
        if recorded == file { return client }
        guard recorded != nil else {
            try db.execute(sql: "UPDATE store SET file_identity = ? WHERE id = 1", arguments: [file])
            return client
        }
        let fresh = UUID().uuidString.lowercased()
        try db.execute(sql: "UPDATE store SET client_id = ?, file_identity = ? WHERE id = 1", arguments: [fresh, file])
        return fresh
    }

    // MARK: Lists and journals

    func listRow(_ list: String, locking: Bool) throws -> ListRow {
        // A transaction that writes is IMMEDIATE: it holds the store's write lock already.
        let statement = try _RawStatement(
            db, "SELECT id, head_version, head_digest, base_version, base_snapshot FROM list WHERE name = ?")
        statement.bind(1, text: list)
        defer { statement.reset() }
        guard try statement.step() else {
            throw StoreError.listNotFound(list, in: location)
        }
        return ListRow(
            id: statement.int64(0), name: list, headVersion: Int(statement.int64(1)),
            headDigest: ListDigest(hex: statement.string(2)), baseVersion: Int(statement.int64(3)),
            baseSnapshot: statement.isNull(4) ? nil : statement.bytes(4))
    }

    func entries(of info: ListRow, after: Int, through: Int, limit: Int) throws -> [JournalEntry] {
        let statement = try _RawStatement(
            db, """
                SELECT version, parent_version, committed_at, digest, author, message, section_count, element_count, stages,
                    push_client, push_seq, conflicts
                FROM journal WHERE list_id = ? AND version > ? AND version <= ? ORDER BY version LIMIT ?
                """)
        statement.bind(1, info.id)
        statement.bind(2, after)
        statement.bind(3, through)
        statement.bind(4, Int64(min(limit, Int(Int64.max))))
        defer { statement.reset() }
        var entries: [JournalEntry] = []
        while try statement.step() {
            let version = Int(statement.int64(0))
            entries.append(JournalEntry(
                list: info.name, version: version, parentVersion: Int(statement.int64(1)),
                committedAt: statement.string(2), digest: ListDigest(hex: statement.string(3)),
                author: statement.optionalString(4), message: statement.optionalString(5),
                sectionCount: Int(statement.int64(6)), elementCount: Int(statement.int64(7)), stagesJSON: statement.bytes(8),
                pushID: statement.optionalString(9).map { PushID(client: $0, seq: Int(statement.int64(10))) },
                conflicts: statement.isNull(11)
                    ? [] : try Conflict.storedReport(statement.bytes(11), of: "version \(version) of list '\(info.name)'")))
        }
        return entries
    }

    // MARK: Consumers, outbox, pushes

    func consumers(of info: ListRow) throws -> [ConsumerInfo] {
        try Row.fetchAll(
            db, sql: "SELECT name, version, registered_at, acknowledged_at FROM consumer WHERE list_id = ? ORDER BY name",
            arguments: [info.id]
        ).map { row in
            ConsumerInfo(
                name: row["name"], list: info.name, version: row["version"], registeredAt: row["registered_at"],
                acknowledgedAt: row["acknowledged_at"])
        }
    }

    func outbox(of info: ListRow) throws -> [OutboxEntry] {
        try Row.fetchAll(
            db,
            sql: """
                SELECT seq, intents, author, message, created_at, local_version, pushed_version,
                    coalesce(client_id, (SELECT client_id FROM store WHERE id = 1), '')
                FROM outbox WHERE list_id = ? ORDER BY seq
                """,
            arguments: [info.id]
        ).map { row in
            try OutboxEntry.stored(
                seq: row[0], intentsJSON: Array((row[1] as String).utf8), author: row[2], message: row[3], createdAt: row[4],
                localVersion: row[5], pushedVersion: row[6], client: row[7], list: info.name)
        }
    }

    func recordedPushes(listID: Int64, list: String, client: String, seqs: ClosedRange<Int>) throws -> [PushAnswer] {
        try Row.fetchAll(
            db,
            sql: """
                SELECT seq, version, conflicts, fingerprint FROM push
                WHERE list_id = ? AND client_id = ? AND seq BETWEEN ? AND ? ORDER BY seq LIMIT 1000
                """,
            arguments: [listID, client, seqs.lowerBound, seqs.upperBound]
        ).map { row in
            let seq: Int = row[0]
            let report: String = row[2]
            return PushAnswer(
                list: list, version: row[1], seq: seq, duplicate: false,
                conflicts: try Conflict.storedReport(Array(report.utf8), of: "push \(PushID(client: client, seq: seq)) of list '\(list)'"),
                fingerprint: row[3])
        }
    }
}
