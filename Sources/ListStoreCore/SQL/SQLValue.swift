/// A value bound to, or read from, a statement of `SQLTransaction`: what the store's tables hold,
/// on either SQL engine.
///
/// Not API: package-visible for the engines.
package enum SQLValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case text(String)
    /// A JSON document or other UTF-8 bytes: `BYTEA` on PostgreSQL, `TEXT` on SQLite (whose driver
    /// also reads its `TEXT` columns this way, without making a string of them first).
    case bytes([UInt8])
    /// A string the store keeps as UTF-8 bytes (identifiers, which may hold U+0000): `BYTEA` on
    /// PostgreSQL, `TEXT` on SQLite.
    case utf8(String)
    /// A content hash: `BYTEA` on PostgreSQL, `BLOB` on SQLite.
    case hash(ContentHash)
    /// Bytes kept as they are (a blob's part): `BYTEA` on PostgreSQL, `BLOB` on SQLite.
    case blob([UInt8])

    package init(_ value: Int) { self = .integer(Int64(value)) }
    package init(_ value: Int?) { self = value.map { .integer(Int64($0)) } ?? .null }
    package init(_ value: String?) { self = value.map(SQLValue.text) ?? .null }
    package init(_ value: [UInt8]?) { self = value.map(SQLValue.bytes) ?? .null }
}

/// A row of a statement's answer, read column by column; a column that is not what the store's
/// logic wrote throws `StoreError.damaged`.
///
/// Not API: package-visible for the engines.
package struct SQLRow: Sendable {
    package let values: [SQLValue]
    /// What the row is, for messages.
    let location: String

    package init(_ values: [SQLValue], location: String) {
        self.values = values
        self.location = location
    }

    package func int(_ column: Int) throws -> Int {
        guard let value = try optionalInt(column) else { throw damaged(column, "is NULL") }
        return value
    }

    package func optionalInt(_ column: Int) throws -> Int? {
        switch values[column] {
        case .null: return nil
        case .integer(let value): return Int(value)
        default: throw damaged(column, "is not an integer")
        }
    }

    package func int64(_ column: Int) throws -> Int64 {
        guard case .integer(let value) = values[column] else { throw damaged(column, "is not an integer") }
        return value
    }

    package func optionalInt64(_ column: Int) throws -> Int64? {
        switch values[column] {
        case .null: return nil
        case .integer(let value): return value
        default: throw damaged(column, "is not an integer")
        }
    }

    package func bool(_ column: Int) throws -> Bool { try int(column) != 0 }

    package func string(_ column: Int) throws -> String {
        guard let value = try optionalString(column) else { throw damaged(column, "is NULL") }
        return value
    }

    package func optionalString(_ column: Int) throws -> String? {
        switch values[column] {
        case .null: return nil
        case .text(let value): return value
        case .bytes(let bytes): return String(decoding: bytes, as: UTF8.self)
        case .utf8(let value): return value
        case .integer, .hash, .blob: throw damaged(column, "is not text")
        }
    }

    package func bytes(_ column: Int) throws -> [UInt8] {
        guard let value = try optionalBytes(column) else { throw damaged(column, "is NULL") }
        return value
    }

    package func optionalBytes(_ column: Int) throws -> [UInt8]? {
        switch values[column] {
        case .null: return nil
        case .text(let value): return Array(value.utf8)
        case .bytes(let bytes), .blob(let bytes): return bytes
        case .utf8(let value): return Array(value.utf8)
        case .hash(let hash): return hash.bytes
        case .integer: throw damaged(column, "is not text")
        }
    }

    /// A content hash column (32 bytes).
    package func hash(_ column: Int) throws -> ContentHash {
        if case .hash(let hash) = values[column] { return hash }
        guard let hash = ContentHash(bytes: try bytes(column)) else { throw damaged(column, "is not a content hash") }
        return hash
    }

    private func damaged(_ column: Int, _ what: String) -> StoreError {
        StoreError(.damaged, "the store at \(location) is damaged: column \(column + 1) of a row \(what)")
    }
}
