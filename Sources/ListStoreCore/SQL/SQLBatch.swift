/// One statement of `SQLTransaction` run for many rows: an insert, an update or a delete of a
/// table's rows, with its values column by column. A driver runs it its own way: SQLite prepares
/// the statement once and steps it for each row; PostgreSQL sends a few statements over arrays
/// (`unnest`), so that a commit takes a fixed number of round trips.
///
/// ```swift
/// var moved = SQLBatch.delete(from: "element", where: ["section_id", "position"])
/// moved.append([.integer(7), .integer(1024)])
/// let deleted = try transaction.run(moved)
/// ```
///
/// Not API: package-visible for the engines.
package struct SQLBatch: Sendable {
    package enum Kind: Sendable {
        case insert
        case update
        case delete
    }

    package let kind: Kind
    package let table: String
    /// The columns written: every column of an insert, those an update sets; none for a delete.
    package let columns: [String]
    /// The columns that pick the rows of an update or a delete.
    package let keys: [String]
    /// The values, column by column (`columns`, then `keys`), as many in each as the batch has rows.
    package private(set) var values: [[SQLValue]]

    private init(_ kind: Kind, _ table: String, columns: [String], keys: [String]) {
        self.kind = kind
        self.table = table
        self.columns = columns
        self.keys = keys
        self.values = Array(repeating: [], count: columns.count + keys.count)
    }

    /// Inserts rows of `columns`.
    package static func insert(into table: String, _ columns: [String]) -> SQLBatch {
        SQLBatch(.insert, table, columns: columns, keys: [])
    }

    /// Sets `columns` of the rows whose `keys` are given.
    package static func update(_ table: String, set columns: [String], where keys: [String]) -> SQLBatch {
        SQLBatch(.update, table, columns: columns, keys: keys)
    }

    /// Deletes the rows whose `keys` are given.
    package static func delete(from table: String, where keys: [String]) -> SQLBatch {
        SQLBatch(.delete, table, columns: [], keys: keys)
    }

    /// The number of rows.
    package var count: Int { values.first?.count ?? 0 }

    /// The most rows a batch gathers before it is run (`SQLTransaction.add(_:to:)`): enough for
    /// PostgreSQL to send few statements, few enough that the values stay in the processor's caches.
    package static let rowsPerRun = 4096

    /// Removes the rows, keeping the statement and the columns' capacity.
    package mutating func removeAll() {
        for column in values.indices { values[column].removeAll(keepingCapacity: true) }
    }

    /// Adds a row: its values in the order of `columns`, then `keys`.
    package mutating func append(_ row: [SQLValue]) {
        precondition(row.count == values.count, "a row of \(table) with \(row.count) values, not \(values.count)")
        for (column, value) in row.enumerated() { values[column].append(value) }
    }

    /// The statement for one row, with a `?` placeholder per value in the order of `values`.
    package var rowStatement: String {
        let match = keys.map { "\($0) = ?" }.joined(separator: " AND ")
        switch kind {
        case .insert:
            return "INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))"
        case .update:
            return "UPDATE \(table) SET \(columns.map { "\($0) = ?" }.joined(separator: ", ")) WHERE \(match)"
        case .delete:
            return "DELETE FROM \(table) WHERE \(match)"
        }
    }

    /// The statement over arrays, one `?` per column of `values` (each bound to an array), for an
    /// engine with `unnest` (PostgreSQL): it answers one row with the number of rows it changed.
    package var arrayStatement: String {
        let all = columns + keys
        let source = "unnest(\(all.map { _ in "?" }.joined(separator: ", "))) AS u(\(all.joined(separator: ", ")))"
        let match = keys.map { "t.\($0) = u.\($0)" }.joined(separator: " AND ")
        let change: String
        switch kind {
        case .insert:
            change = "INSERT INTO \(table) (\(columns.joined(separator: ", "))) OVERRIDING SYSTEM VALUE SELECT * FROM \(source)"
        case .update:
            change = "UPDATE \(table) t SET \(columns.map { "\($0) = u.\($0)" }.joined(separator: ", ")) FROM \(source) WHERE \(match)"
        case .delete:
            change = "DELETE FROM \(table) t USING \(source) WHERE \(match)"
        }
        return "WITH c AS (\(change) RETURNING 1) SELECT count(*) FROM c"
    }
}
