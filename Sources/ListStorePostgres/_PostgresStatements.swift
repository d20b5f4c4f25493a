import PostgresNIO

/// The statements of the read path, prepared once per connection (postgres-nio prepares a
/// `PostgresPreparedStatement` on first use and reuses it).
enum _PostgresStatements {
    /// A list's row, by name.
    struct ListInfo: PostgresPreparedStatement {
        static let sql = "SELECT id, head_version, head_digest, base_version, base_snapshot FROM list WHERE name = $1"
        typealias Row = (Int64, Int, String, Int, ByteBuffer?)
        var name: String

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 1)
            bindings.append(name)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    /// `ListInfo` taking the row's lock for the rest of the transaction.
    struct LockedListInfo: PostgresPreparedStatement {
        static let sql = ListInfo.sql + " FOR UPDATE"
        typealias Row = ListInfo.Row
        var name: String

        func makeBindings() throws -> PostgresBindings { try ListInfo(name: name).makeBindings() }
        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    /// Summaries of every list (`name` NULL) or of one; counts from the head's journal entry, or
    /// from the rows when that entry was pruned. Names in byte order, as SQLite's BINARY collation.
    struct Summaries: PostgresPreparedStatement {
        static let sql = """
            SELECT l.name, l.head_version, l.head_digest, l.base_version,
                COALESCE(j.section_count, (SELECT count(*) FROM section s WHERE s.list_id = l.id)),
                COALESCE(j.element_count, (SELECT count(*) FROM section s JOIN element e ON e.section_id = s.id
                    WHERE s.list_id = l.id))
            FROM list l LEFT JOIN journal j ON j.list_id = l.id AND j.version = l.head_version
            WHERE $1::text IS NULL OR l.name = $1::text
            ORDER BY l.name COLLATE "C"
            """
        typealias Row = (String, Int, String, Int, Int, Int)
        var name: String?

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 1)
            bindings.append(name)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    /// The head rows of a list: each section, then its elements, in order (a section without
    /// elements has one row with NULL element columns).
    struct HeadRows: PostgresPreparedStatement {
        static let sql = """
            SELECT s.id, s.identifier, s.content, e.identifier, e.content
            FROM section s LEFT JOIN element e ON e.section_id = s.id
            WHERE s.list_id = $1 ORDER BY s.position, e.position
            """
        typealias Row = (Int64, ByteBuffer, ByteBuffer, ByteBuffer?, ByteBuffer?)
        var listID: Int64

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 1)
            bindings.append(listID)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    /// Versions `after+1 ... through` of a list's journal, at most `limit` of them: the bindings of
    /// `EntrySizes` and `Entries`.
    struct JournalRange: Sendable {
        var listID: Int64
        var after: Int
        var through: Int
        var limit: Int

        var bindings: PostgresBindings {
            var bindings = PostgresBindings(capacity: 4)
            bindings.append(listID)
            bindings.append(after)
            bindings.append(through)
            bindings.append(limit)
            return bindings
        }
    }

    /// The byte sizes of a list's journal entries in a range, oldest first.
    struct EntrySizes: PostgresPreparedStatement {
        static let sql = """
            SELECT octet_length(stages)::bigint FROM journal
            WHERE list_id = $1 AND version > $2 AND version <= $3 ORDER BY version LIMIT $4
            """
        typealias Row = Int
        var range: JournalRange

        func makeBindings() throws -> PostgresBindings { range.bindings }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Int.self) }
    }

    /// A list's journal entries in a range, oldest first.
    struct Entries: PostgresPreparedStatement {
        static let sql = """
            SELECT version, parent_version, committed_at, digest, author, message, section_count, element_count, stages,
                push_client, push_seq, conflicts
            FROM journal WHERE list_id = $1 AND version > $2 AND version <= $3 ORDER BY version LIMIT $4
            """
        typealias Row = (Int, Int, String, String, String?, String?, Int, Int, ByteBuffer, String?, Int?, ByteBuffer?)
        var range: JournalRange

        func makeBindings() throws -> PostgresBindings { range.bindings }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }
}
