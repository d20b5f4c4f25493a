import GRDB
import GRDBSQLite
@_spi(Replication) import ListStoreCore

// The SQLite driver's own steps of a paged sync (`stage`, `commitStagedCopy`): a page's rows
// written through the statements' columns and bindings (no row values made: a million of each for
// a list of a million), and the journal entry written in pieces: a copy's entry (the stages
// inserting a whole list) is larger than anything else a store writes, and SQLite's incremental
// blob I/O writes it without holding it. A stored snapshot that a replayed entry's commit writes
// from the rows goes in pieces the same way.

extension SQLiteTransaction {
    func insertCopiedRecords(_ records: [CopiedRecord], listID: Int64, section: Int64?) throws -> [Int64] {
        var section = section
        let made = try reserveSectionRows(records.count(where: \.isSection))
        var reserved = made[...]
        let sections = try _RawStatement(
            db, "INSERT INTO section (id, list_id, position, identifier, content, content_hash) VALUES (?, ?, ?, ?, ?, ?)")
        let elements = try _RawStatement(
            db, "INSERT INTO element (section_id, position, identifier, content, content_hash) VALUES (?, ?, ?, ?, ?)")
        for record in records {
            let statement = record.isSection ? sections : elements
            if record.isSection {
                let row = reserved.removeFirst()
                sections.bind(1, row)
                sections.bind(2, listID)
                section = row
            } else {
                guard let section else { throw damaged("a copied element comes before any section") }
                elements.bind(1, section)
            }
            let first: Int32 = record.isSection ? 3 : 2
            statement.bind(first, record.position)
            statement.bind(first + 1, text: record.item.id)
            statement.bind(first + 2, textBytes: record.item.content)
            statement.bind(first + 3, hash: record.hash)
            try statement.execute()
        }
        return made
    }

    /// Inserts the entry with a zero-filled `stages` of `stagesCount` bytes, then writes the pieces
    /// into it (`writeInPieces`).
    func insertJournal(
        _ journal: CommitRows.Journal, listID: Int64, digest: ListDigest, stagesCount: Int,
        stages: (_ write: ([UInt8]) throws -> Void) throws -> Void
    ) throws {
        guard stagesCount > 0, stagesCount <= Int(Int32.max) else { throw damaged("a journal entry of \(stagesCount) bytes") }
        try run(
            """
            INSERT INTO journal (list_id, version, parent_version, committed_at, digest, author, message,
                section_count, element_count, stages) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, zeroblob(?))
            """,
            [
                .integer(listID), SQLValue(journal.version), SQLValue(journal.parentVersion), .text(journal.committedAt),
                .text(digest.hex), SQLValue(journal.author), SQLValue(journal.message), SQLValue(journal.sectionCount),
                SQLValue(journal.elementCount), SQLValue(stagesCount),
            ])
        try writeInPieces(table: "journal", column: "stages", count: stagesCount, "a journal entry", stages)
    }

    var writesInPieces: Bool { true }

    /// Inserts the stored snapshot with a zero-filled document of `count` bytes, then writes the
    /// pieces into it (`writeInPieces`).
    func insertStoredSnapshot(
        version: Int, listID: Int64, count: Int, document: (_ write: ([UInt8]) throws -> Void) throws -> Void
    ) throws {
        guard count > 0, count <= Int(Int32.max) else { throw damaged("a stored snapshot of \(count) bytes") }
        try run(
            "INSERT INTO stored_snapshot (list_id, version, snapshot) VALUES (?, ?, zeroblob(?))",
            [.integer(listID), SQLValue(version), SQLValue(count)])
        try writeInPieces(table: "stored_snapshot", column: "snapshot", count: count, "a stored snapshot", document)
        try storedSnapshotIsNewest(version: version, listID: listID)
    }

    /// Writes the pieces `pieces` makes, `count` bytes in all, into the zero-filled `column` of the
    /// row of `table` just inserted, through `sqlite3_blob_write` (the value is then a BLOB of the
    /// same UTF-8 bytes, which every read of the column takes as it takes TEXT).
    /// - Throws: `.damaged` when the pieces are not `count` bytes (`what` names them).
    private func writeInPieces(
        table: String, column: String, count: Int, _ what: String, _ pieces: (_ write: ([UInt8]) throws -> Void) throws -> Void
    ) throws {
        let connection = db.sqliteConnection
        var blob: OpaquePointer?
        let opened = sqlite3_blob_open(connection, "main", table, column, sqlite3_last_insert_rowid(connection), 1, &blob)
        defer { sqlite3_blob_close(blob) }
        guard opened == SQLITE_OK, let blob else {
            throw DatabaseError(resultCode: ResultCode(rawValue: opened), message: String(cString: sqlite3_errmsg(connection)))
        }
        var offset = 0
        try pieces { piece in
            guard offset + piece.count <= count else { throw damaged("\(what) of \(count) bytes was written longer") }
            let code = piece.withUnsafeBytes { sqlite3_blob_write(blob, $0.baseAddress, Int32($0.count), Int32(offset)) }
            guard code == SQLITE_OK else {
                throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(connection)))
            }
            offset += piece.count
        }
        guard offset == count else { throw damaged("\(what) of \(count) bytes was written as \(offset)") }
    }
}
