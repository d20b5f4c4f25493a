import Foundation
import GRDB
import ListDiff
import ListMerge

/// The SQLite driver of the store's logic (`SQLTransaction`): its steps run in place, inside the
/// caller's `IMMEDIATE` transaction on GRDB's writer connection, with prepared statements.
final class SQLiteTransaction: SQLTransaction {
    let store: Store
    let db: Database
    /// The heads this transaction wrote, kept by the store once it commits.
    private(set) var newHeads: [String: StoredHead] = [:]
    /// The lists this transaction changed (their heads, or what readers keep of them).
    private(set) var changedLists: Set<String> = []

    init(_ store: Store, _ db: Database) {
        self.store = store
        self.db = db
    }

    var location: String { store.path }

    /// What the store keeps of a committed transaction: the heads it wrote, and whether it changed
    /// a list.
    struct Outcome: Sendable {
        var newHeads: [String: StoredHead]
        var changed: Bool
    }

    var outcome: Outcome { Outcome(newHeads: newHeads, changed: !changedLists.isEmpty) }

    // MARK: Statements

    var dialect: SQLDialect { .sqlite }

    func rows(_ sql: String, _ arguments: [SQLValue]) throws -> [SQLRow] {
        let statement = try _RawStatement(db, sql)
        statement.bind(arguments)
        defer { statement.reset() }
        var rows: [SQLRow] = []
        while try statement.step() { rows.append(SQLRow(statement.values(), location: location)) }
        return rows
    }

    @discardableResult
    func run(_ sql: String, _ arguments: [SQLValue]) throws -> Int {
        let statement = try _RawStatement(db, sql)
        statement.bind(arguments)
        return try statement.execute()
    }

    /// Steps the batch's statement, prepared once, for each row.
    @discardableResult
    func run(_ batch: SQLBatch) throws -> Int {
        guard batch.count > 0 else { return 0 }
        let statement = try _RawStatement(db, batch.rowStatement)
        var changed = 0
        for row in 0..<batch.count {
            for (column, values) in batch.values.enumerated() { statement.bind(Int32(column + 1), values[row]) }
            changed += try statement.execute()
        }
        return changed
    }

    func clientIDForLocalChanges() throws -> String { try clientIDOfThisFile() }

    // MARK: Lists

    func headSections(of info: ListRow) throws -> [ListSection] {
        try store.currentHead(db, list: info.name).sections
    }

    func head(of info: ListRow) throws -> StoredHead {
        try store.loadHead(db, listID: info.id, version: info.headVersion, digest: info.headDigest)
    }

    // MARK: Commits

    func lockedHead(of list: String) throws -> StoredHead {
        // The transaction is IMMEDIATE: it holds the store's write lock already.
        try store.currentHead(db, list: list)
    }

    func announce(_ head: StoredHead?, of list: String) throws {
        changedLists.insert(list)
        if let head { newHeads[list] = head }
    }
}
