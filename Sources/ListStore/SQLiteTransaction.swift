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

    // MARK: Lists and heads

    func headSections(listID: Int64) throws -> [ListSection] {
        var sections: [ListSection] = []
        var rows: [Int64] = []
        let sectionRows = try _RawStatement(db, "SELECT id, identifier, content FROM section WHERE list_id = ? ORDER BY position")
        sectionRows.bind(1, listID)
        defer { sectionRows.reset() }
        while try sectionRows.step() {
            rows.append(sectionRows.int64(0))
            sections.append(ListSection(model: ListItem(id: sectionRows.string(1), content: sectionRows.bytes(2)), elements: []))
        }
        let elements = try _RawStatement(db, "SELECT identifier, content FROM element WHERE section_id = ? ORDER BY position")
        for (s, row) in rows.enumerated() {
            elements.bind(1, row)
            defer { elements.reset() }
            while try elements.step() {
                sections[s].elements.append(ListItem(id: elements.string(0), content: elements.bytes(1)))
            }
        }
        return sections
    }

    func head(of info: ListRow) throws -> StoredHead {
        try loadHead(listID: info.id, version: info.headVersion, digest: info.headDigest)
    }

    func lockedHead(of list: String) throws -> StoredHead {
        try lockedHead(of: list, elementsOf: { nil })
    }

    /// The head of `list` as of this transaction (a writing one is `IMMEDIATE`: it holds the
    /// store's write lock already): the store's kept head while the list's row still names it,
    /// otherwise read from the rows: whole, and kept; or, when `sections` names some (a replayed
    /// entry's), the elements of only those, and not kept (nor is the head kept before it, which is
    /// not this version). `.empty` for a list with no version.
    func lockedHead(of list: String, elementsOf sections: () throws -> Set<Int>?) throws -> StoredHead {
        guard let row = try row("SELECT id, head_version, head_digest FROM list WHERE name = ?", [.text(list)]) else { return .empty }
        let (listID, version) = (try row.int64(0), try row.int(1))
        if let kept = store.state.withLock({ $0.heads[list] }), kept.listID == listID, kept.version == version { return kept }
        let only = try sections()
        let head = try loadHead(listID: listID, version: version, digest: ListDigest(hex: try row.string(2)), elementsOf: only)
        store.state.withLock { $0.heads[list] = only == nil ? head : nil }
        return head
    }

    var keepsElementRecords: Bool { true }

    func keptElementRecords(section row: Int64) throws -> [UInt8]? {
        let statement = try _RawStatement(db, "SELECT element_records FROM section WHERE id = ? AND element_records IS NOT NULL")
        statement.bind(1, row)
        defer { statement.reset() }
        return try statement.step() ? statement.bytes(0) : nil
    }

    func keepElementRecords(_ records: [UInt8], section row: Int64) throws {
        let statement = try _RawStatement(db, "UPDATE section SET element_records = ? WHERE id = ?")
        statement.bind(1, blob: records)
        statement.bind(2, row)
        try statement.execute()
    }

    func forgetElementRecords(sections rows: [Int64]) throws {
        // Rows that keep none are not written.
        try inRuns(of: rows) { chunk, marks in
            try run("UPDATE section SET element_records = NULL WHERE element_records IS NOT NULL AND id IN (\(marks))", chunk.map { .integer($0) })
        }
    }

    func elementItems(section row: Int64) throws -> [HeadItem] {
        let elements = try _RawStatement(db, "SELECT identifier, content_hash FROM element WHERE section_id = ? ORDER BY position")
        elements.bind(1, row)
        defer { elements.reset() }
        var items: [HeadItem] = []
        while try elements.step() {
            guard let hash = elements.hash(1) else { throw damaged("an element in section \(row) has no valid content hash") }
            items.append(HeadItem(id: elements.string(0), hash: hash))
        }
        return items
    }

    /// Reads the head rows of a list (ids, hashes and positions, not contents), through the
    /// statements' columns (no row values made).
    /// - Throws: `.damaged` when a stored hash is not 32 bytes.
    private func loadHead(listID: Int64, version: Int, digest: ListDigest, elementsOf only: Set<Int>? = nil) throws -> StoredHead {
        var head = StoredHead.empty
        (head.listID, head.version, head.digest) = (listID, version, digest)
        let sections = try _RawStatement(
            db, "SELECT id, position, identifier, content_hash FROM section WHERE list_id = ? ORDER BY position")
        sections.bind(1, listID)
        defer { sections.reset() }
        while try sections.step() {
            head.sectionRows.append(sections.int64(0))
            head.sectionPositions.append(sections.int64(1))
            guard let hash = sections.hash(3) else { throw damaged("section \(sections.int64(0)) has no valid content hash") }
            head.sections.append(HeadSection(model: HeadItem(id: sections.string(2), hash: hash), elements: []))
        }
        let elements = try _RawStatement(
            db, "SELECT position, identifier, content_hash FROM element WHERE section_id = ? ORDER BY position")
        for (s, row) in head.sectionRows.enumerated() {
            if let only, !only.contains(s) {
                head.unloadedSections.insert(s)
                continue
            }
            elements.bind(1, row)
            defer { elements.reset() }
            while try elements.step() {
                head.elementPositions.append(elements.int64(0))
                guard let hash = elements.hash(2) else { throw damaged("an element in section \(row) has no valid content hash") }
                head.sections[s].elements.append(HeadItem(id: elements.string(1), hash: hash))
            }
        }
        return head
    }

    func announce(_ head: StoredHead?, of list: String) throws {
        changedLists.insert(list)
        if let head { newHeads[list] = head }
    }
}
