import GRDBSQLite

/// A prepared statement of a `SQLiteConnection`: bind, step, read columns, reset.
///
/// Text and blobs are bound without a copy (`SQLITE_STATIC`): the caller keeps the bytes alive until
/// the statement has been stepped.
final class SQLiteStatement {
    let handle: OpaquePointer
    let connection: SQLiteConnection

    init(handle: OpaquePointer, connection: SQLiteConnection) {
        self.handle = handle
        self.connection = connection
    }

    deinit {
        sqlite3_finalize(handle)
    }

    func bind(_ index: Int32, _ value: Int64) {
        sqlite3_bind_int64(handle, index, value)
    }

    /// Binds UTF-8 bytes as TEXT, without copying them.
    func bind(_ index: Int32, text: UnsafeBufferPointer<UInt8>) {
        let base = UnsafeRawPointer(text.baseAddress ?? UnsafePointer(bitPattern: 1)!)
        sqlite3_bind_text(handle, index, base.assumingMemoryBound(to: CChar.self), Int32(text.count), nil)
    }

    /// Binds bytes as a BLOB, without copying them.
    func bind(_ index: Int32, blob: UnsafeRawBufferPointer) {
        sqlite3_bind_blob(handle, index, blob.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!, Int32(blob.count), nil)
    }

    /// Steps to the next row; `false` when the statement is done.
    func step() throws -> Bool {
        let code = sqlite3_step(handle)
        if code == SQLITE_ROW { return true }
        if code == SQLITE_DONE { return false }
        throw connection.error(code, String(cString: sqlite3_sql(handle)))
    }

    func reset() {
        sqlite3_reset(handle)
    }

    func int64(_ column: Int32) -> Int64 {
        sqlite3_column_int64(handle, column)
    }

    /// A TEXT column's bytes, valid until the next step or reset.
    func text(_ column: Int32) -> UnsafeBufferPointer<UInt8> {
        let pointer = sqlite3_column_text(handle, column)
        return UnsafeBufferPointer(start: pointer, count: Int(sqlite3_column_bytes(handle, column)))
    }

    /// A BLOB column's bytes, valid until the next step or reset.
    func blob(_ column: Int32) -> UnsafeRawBufferPointer {
        let pointer = sqlite3_column_blob(handle, column)
        return UnsafeRawBufferPointer(start: pointer, count: Int(sqlite3_column_bytes(handle, column)))
    }
}
