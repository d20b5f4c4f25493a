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

    func write(_ whole: CommitRows.WholeSections) throws -> (reservedRows: [Int64], written: Int) {
        var written = 0
        let deleteSectionElements = try _RawStatement(db, "DELETE FROM element WHERE section_id = ?")
        let deleteSection = try _RawStatement(db, "DELETE FROM section WHERE id = ?")
        for row in whole.deletedSectionRows {
            deleteSectionElements.bind(1, row)
            written += try deleteSectionElements.execute()
            deleteSection.bind(1, row)
            try expectOne(try deleteSection.execute(), "section row \(row)")
            written += 1
        }
        guard !whole.insertedSections.isEmpty, whole.failure == nil else { return ([], written) }

        let maxRow = try _RawStatement(db, "SELECT coalesce(max(id), 0) FROM section")
        _ = try maxRow.step()
        let firstRow = maxRow.int64(0) + 1
        maxRow.reset()
        let rows = (0..<Int64(whole.insertedSections.count)).map { firstRow + $0 }
        let insertElement = try _RawStatement(
            db,
            "INSERT INTO element (section_id, position, identifier, content, content_hash) VALUES (?, ?, ?, ?, ?)"
        )
        for (k, t) in whole.insertedSections.enumerated() {
            let positions = whole.elementPositions(ofInserted: k)
            let hashes = whole.elementHashes(ofInserted: k)
            for (e, element) in whole.target[t].elements.enumerated() {
                insertElement.bind(1, rows[k])
                insertElement.bind(2, positions[positions.startIndex + e])
                insertElement.bind(3, text: element.id)
                insertElement.bind(4, textBytes: element.content)
                insertElement.bind(5, hash: hashes[hashes.startIndex + e])
                try insertElement.execute()
                written += 1
            }
        }
        return (rows, written)
    }

    func insertList(_ name: String, createdAt: String) throws -> Int64 {
        let insert = try _RawStatement(
            db,
            "INSERT INTO list (name, head_version, head_digest, base_version, created_at) VALUES (?, 0, '', 0, ?)"
        )
        insert.bind(1, text: name)
        insert.bind(2, text: createdAt)
        try insert.execute()
        return db.lastInsertedRowID
    }

    func write(_ rows: CommitRows, listID: Int64) throws -> Int {
        let deleteElement = try _RawStatement(
            db, "DELETE FROM element WHERE section_id = ? AND position = ?")
        for slot in rows.deletedElements {
            deleteElement.bind(1, slot.section)
            deleteElement.bind(2, slot.position)
            try expectOne(try deleteElement.execute(), "element row")
        }

        let insertSection = try _RawStatement(
            db,
            "INSERT INTO section (id, list_id, position, identifier, content, content_hash) VALUES (?, ?, ?, ?, ?, ?)"
        )
        for section in rows.insertedSections {
            let model = rows.target[section.target].model
            insertSection.bind(1, section.row)
            insertSection.bind(2, listID)
            insertSection.bind(3, section.position)
            insertSection.bind(4, text: model.id)
            insertSection.bind(5, textBytes: model.content)
            insertSection.bind(6, hash: rows.sectionHashes[section.target])
            try insertSection.execute()
        }
        let updateSection = try _RawStatement(
            db, "UPDATE section SET position = ?, content = ?, content_hash = ? WHERE id = ?")
        for section in rows.updatedSections {
            updateSection.bind(1, section.position)
            updateSection.bind(2, textBytes: rows.target[section.target].model.content)
            updateSection.bind(3, hash: rows.sectionHashes[section.target])
            updateSection.bind(4, section.row)
            try expectOne(try updateSection.execute(), "section row \(section.row)")
        }

        let insertElement = try _RawStatement(
            db,
            "INSERT INTO element (section_id, position, identifier, content, content_hash) VALUES (?, ?, ?, ?, ?)"
        )
        for element in rows.insertedElements {
            insertElement.bind(1, element.slot.section)
            insertElement.bind(2, element.slot.position)
            insertElement.bind(3, text: rows.identifier(of: element))
            insertElement.bind(4, textBytes: rows.content(of: element))
            insertElement.bind(5, hash: rows.elementHashes[element.flat])
            try insertElement.execute()
        }
        let updateElement = try _RawStatement(
            db, "UPDATE element SET content = ?, content_hash = ? WHERE section_id = ? AND position = ?")
        for element in rows.updatedElements {
            updateElement.bind(1, textBytes: rows.content(of: element))
            updateElement.bind(2, hash: rows.elementHashes[element.flat])
            updateElement.bind(3, element.slot.section)
            updateElement.bind(4, element.slot.position)
            try expectOne(try updateElement.execute(), "element row")
        }
        let moveElement = try _RawStatement(
            db, "UPDATE element SET section_id = ?, position = ? WHERE section_id = ? AND position = ?")
        let moveAndUpdateElement = try _RawStatement(
            db,
            "UPDATE element SET section_id = ?, position = ?, content = ?, content_hash = ? WHERE section_id = ? AND position = ?"
        )
        for element in rows.movedElements {
            let from = element.from!
            let statement = element.contentChanged ? moveAndUpdateElement : moveElement
            statement.bind(1, element.slot.section)
            statement.bind(2, element.slot.position)
            var k: Int32 = 3
            if element.contentChanged {
                statement.bind(3, textBytes: rows.content(of: element))
                statement.bind(4, hash: rows.elementHashes[element.flat])
                k = 5
            }
            statement.bind(k, from.section)
            statement.bind(k + 1, from.position)
            try expectOne(try statement.execute(), "element row")
        }
        return rows.deletedElements.count + rows.insertedSections.count + rows.updatedSections.count
            + rows.insertedElements.count + rows.updatedElements.count + rows.movedElements.count
    }

    func setHead(
        listID: Int64, version: Int, digest: ListDigest, journalBytes: Int
    ) throws -> (snapshotVersion: Int, bytesSinceSnapshot: Int) {
        let update = try _RawStatement(
            db,
            """
            UPDATE list SET head_version = ?, head_digest = ?, bytes_since_snapshot = bytes_since_snapshot + ? WHERE id = ?
            RETURNING snapshot_version, bytes_since_snapshot
            """)
        update.bind(1, version)
        update.bind(2, text: digest.hex)
        update.bind(3, journalBytes)
        update.bind(4, listID)
        defer { update.reset() }
        guard try update.step() else { throw damaged("list row \(listID) is missing") }
        return (Int(update.int64(0)), Int(update.int64(1)))
    }

    func insertStoredSnapshot(_ snapshot: ListSnapshot, listID: Int64) throws {
        let insert = try _RawStatement(
            db, "INSERT INTO stored_snapshot (list_id, version, snapshot) VALUES (?, ?, ?)")
        insert.bind(1, listID)
        insert.bind(2, snapshot.version)
        insert.bind(3, textBytes: snapshot.documentJSON)
        try insert.execute()
        let mark = try _RawStatement(
            db, "UPDATE list SET snapshot_version = ?, bytes_since_snapshot = 0 WHERE id = ?")
        mark.bind(1, snapshot.version)
        mark.bind(2, listID)
        try mark.execute()
    }

    func insertJournal(
        _ journal: CommitRows.Journal, listID: Int64, stagesJSON: [UInt8], digest: ListDigest
    ) throws {
        let insert = try _RawStatement(
            db,
            """
            INSERT INTO journal (list_id, version, parent_version, committed_at, digest, author, message,
                section_count, element_count, stages) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        insert.bind(1, listID)
        insert.bind(2, journal.version)
        insert.bind(3, journal.parentVersion)
        insert.bind(4, text: journal.committedAt)
        insert.bind(5, text: digest.hex)
        insert.bind(6, optionalText: journal.author)
        insert.bind(7, optionalText: journal.message)
        insert.bind(8, journal.sectionCount)
        insert.bind(9, journal.elementCount)
        insert.bind(10, textBytes: stagesJSON)
        try insert.execute()
    }

    func announce(_ head: StoredHead?, of list: String) throws {
        changedLists.insert(list)
        if let head { newHeads[list] = head }
    }

    // MARK: Internals

    private func expectOne(_ changes: Int, _ what: String) throws {
        guard changes == 1 else { throw damaged("\(what) is missing from the tables") }
    }

    private func damaged(_ what: String) -> StoreError {
        StoreError(.damaged, "the store at \(store.path) is damaged: \(what)")
    }
}
