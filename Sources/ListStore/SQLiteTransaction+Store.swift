import Foundation
import GRDB
import ListMerge

// The SQLite driver's own row steps for the store as a whole: its integrity check and the client id
// of its file.

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
}
