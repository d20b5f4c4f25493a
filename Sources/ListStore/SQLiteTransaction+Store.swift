import Foundation
import GRDB
import ListMerge

// The SQLite driver's own row steps for the store as a whole and for reads: its integrity check,
// summaries, the client id of its file, list rows and journal entries.

extension SQLiteTransaction {
    // MARK: The store

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
}
