import GRDBSQLite

/// A bare SQLite connection through the C API, for the baselines: what a program that talks to SQLite
/// directly does for the same rows, without the store.
final class SQLiteConnection {
    let handle: OpaquePointer

    /// Opens (with `create`, creating) the database at `path`, in the multi-thread mode
    /// (`SQLITE_OPEN_NOMUTEX`) as GRDB opens the store's connections: a connection used by one thread
    /// at a time, without a mutex around every call.
    init(path: String, create: Bool) throws {
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (create ? SQLITE_OPEN_CREATE : 0)
        let code = sqlite3_open_v2(path, &handle, flags, nil)
        guard code == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(handle)
            throw SQLiteError(code: code, message: "cannot open \(path): \(message)")
        }
        self.handle = handle
    }

    deinit {
        sqlite3_close_v2(handle)
    }

    /// Runs one or more statements that return no rows.
    func execute(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &message)
        defer { sqlite3_free(message) }
        guard code == SQLITE_OK else {
            throw SQLiteError(code: code, message: (message.map { String(cString: $0) } ?? "error") + " in: \(sql)")
        }
    }

    /// The rows inserted, updated or deleted by this connection since it opened.
    var totalChanges: Int { Int(sqlite3_total_changes(handle)) }

    /// The rows changed by the last statement that finished.
    var changes: Int { Int(sqlite3_changes(handle)) }

    func prepare(_ sql: String) throws -> SQLiteStatement {
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        guard code == SQLITE_OK, let statement else { throw error(code, sql) }
        return SQLiteStatement(handle: statement, connection: self)
    }

    /// The connection's last error message as an error.
    func error(_ code: Int32, _ sql: String) -> SQLiteError {
        SQLiteError(code: code, message: String(cString: sqlite3_errmsg(handle)) + " in: \(sql)")
    }
}

/// An SQLite result code with its message.
struct SQLiteError: Error, CustomStringConvertible {
    var code: Int32
    var message: String

    var description: String { "SQLite error \(code): \(message)" }
}
