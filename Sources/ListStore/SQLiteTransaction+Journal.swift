import GRDB
import GRDBSQLite
@_spi(Replication) import ListStoreCore

// The SQLite driver's journal entry written in pieces: a copy's entry (the stages inserting a whole
// list) is larger than anything else a store writes, and SQLite's incremental blob I/O writes it
// without holding it.

extension SQLiteTransaction {
    /// Inserts the entry with a zero-filled `stages` of `stagesCount` bytes, then writes the pieces
    /// into it through `sqlite3_blob_write` (the value is then a BLOB of the same UTF-8 bytes, which
    /// every read of `stages` takes as it takes TEXT).
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
        let connection = db.sqliteConnection
        var blob: OpaquePointer?
        let opened = sqlite3_blob_open(connection, "main", "journal", "stages", sqlite3_last_insert_rowid(connection), 1, &blob)
        defer { sqlite3_blob_close(blob) }
        guard opened == SQLITE_OK, let blob else {
            throw DatabaseError(resultCode: ResultCode(rawValue: opened), message: String(cString: sqlite3_errmsg(connection)))
        }
        var offset = 0
        try stages { piece in
            guard offset + piece.count <= stagesCount else { throw damaged("a journal entry of \(stagesCount) bytes was written longer") }
            let code = piece.withUnsafeBytes { sqlite3_blob_write(blob, $0.baseAddress, Int32($0.count), Int32(offset)) }
            guard code == SQLITE_OK else {
                throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(connection)))
            }
            offset += piece.count
        }
        guard offset == stagesCount else { throw damaged("a journal entry of \(stagesCount) bytes was written as \(offset)") }
    }
}
