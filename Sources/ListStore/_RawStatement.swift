import GRDB
import GRDBSQLite

/// Binding and reading through a cached GRDB statement's SQLite handle, for the hot paths (loading a
/// head, writing rows): no per-row allocations beyond the values themselves.
struct _RawStatement {
    let statement: Statement
    let db: Database
    private var handle: OpaquePointer { statement.sqliteStatement }

    init(_ db: Database, _ sql: String) throws {
        self.db = db
        self.statement = try db.cachedStatement(sql: sql)
        sqlite3_reset(statement.sqliteStatement)
        sqlite3_clear_bindings(statement.sqliteStatement)
    }

    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    func bind(_ index: Int32, _ value: Int64) {
        sqlite3_bind_int64(handle, index, value)
    }

    func bind(_ index: Int32, text: String) {
        var text = text
        text.withUTF8 { bindText(index, $0) }
    }

    private func bindText(_ index: Int32, _ buffer: UnsafeBufferPointer<UInt8>) {
        if let base = buffer.baseAddress {
            sqlite3_bind_text(
                handle, index, UnsafeRawPointer(base).assumingMemoryBound(to: CChar.self), Int32(buffer.count), Self.transient)
        } else {
            sqlite3_bind_text(handle, index, "", 0, Self.transient)
        }
    }

    /// Binds UTF-8 bytes as TEXT.
    func bind(_ index: Int32, textBytes bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { bindText(index, $0) }
    }

    /// Binds bytes as a BLOB.
    func bind(_ index: Int32, blob bytes: [UInt8]) {
        // No bytes are an empty BLOB, not NULL (which a nil pointer would bind).
        guard !bytes.isEmpty else { return _ = sqlite3_bind_zeroblob(handle, index, 0) }
        bytes.withUnsafeBytes { _ = sqlite3_bind_blob64(handle, index, $0.baseAddress, sqlite3_uint64($0.count), Self.transient) }
    }

    func bind(_ index: Int32, hash: ContentHash) {
        hash.withUnsafeBytes { _ = sqlite3_bind_blob(handle, index, $0.baseAddress, 32, Self.transient) }
    }

    /// Binds `arguments` to the placeholders in order.
    func bind(_ arguments: [SQLValue]) {
        for (k, argument) in arguments.enumerated() { bind(Int32(k + 1), argument) }
    }

    /// Binds `value` as the store keeps it: bytes and UTF-8 identifiers as TEXT, hashes and blobs' parts as BLOB.
    func bind(_ index: Int32, _ value: SQLValue) {
        switch value {
        case .null: sqlite3_bind_null(handle, index)
        case .integer(let value): bind(index, value)
        case .text(let text), .utf8(let text): bind(index, text: text)
        case .bytes(let bytes): bind(index, textBytes: bytes)
        case .hash(let hash): bind(index, hash: hash)
        case .blob(let bytes): bind(index, blob: bytes)
        }
    }

    /// Runs a statement that returns no rows; returns the number of rows it changed.
    @discardableResult
    func execute() throws -> Int {
        let code = sqlite3_step(handle)
        defer { sqlite3_reset(handle) }
        guard code == SQLITE_DONE || code == SQLITE_ROW else { throw failure(code) }
        return Int(sqlite3_changes(db.sqliteConnection))
    }

    /// Steps to the next row; `false` when there are no more.
    func step() throws -> Bool {
        let code = sqlite3_step(handle)
        if code == SQLITE_ROW { return true }
        if code == SQLITE_DONE { return false }
        throw failure(code)
    }

    func reset() {
        sqlite3_reset(handle)
    }

    /// The error of a failed step: `CancellationError` when GRDB interrupted the statement because
    /// the task that runs it was cancelled (its async access), SQLite's error otherwise.
    private func failure(_ code: Int32) -> any Error {
        if code == SQLITE_INTERRUPT, Task.isCancelled { return CancellationError() }
        let message = String(cString: sqlite3_errmsg(db.sqliteConnection))
        return DatabaseError(resultCode: ResultCode(rawValue: code), message: message, sql: statement.sql)
    }

    // MARK: Columns

    /// The current row's columns: integers, NULLs, and TEXT or BLOB as bytes.
    func values() -> [SQLValue] {
        (0..<sqlite3_column_count(handle)).map { column in
            switch sqlite3_column_type(handle, column) {
            case SQLITE_NULL: .null
            case SQLITE_INTEGER, SQLITE_FLOAT: .integer(int64(column))
            default: .bytes(bytes(column))
            }
        }
    }

    func int64(_ column: Int32) -> Int64 {
        sqlite3_column_int64(handle, column)
    }

    func string(_ column: Int32) -> String {
        guard let text = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    /// A TEXT or BLOB column's bytes.
    func bytes(_ column: Int32) -> [UInt8] {
        guard let pointer = sqlite3_column_blob(handle, column) else { return [] }
        let count = Int(sqlite3_column_bytes(handle, column))
        return Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    /// A 32-byte BLOB column as a hash; `nil` when it is not 32 bytes.
    func hash(_ column: Int32) -> ContentHash? {
        guard let pointer = sqlite3_column_blob(handle, column), sqlite3_column_bytes(handle, column) == 32 else { return nil }
        return ContentHash(unsafeBytes: pointer)
    }
}
