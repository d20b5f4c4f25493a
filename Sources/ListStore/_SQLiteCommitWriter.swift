import GRDB
import ListDiff

/// Writes a commit's rows (`CommitRows`) into SQLite inside the caller's transaction.
enum _SQLiteCommitWriter {
    /// Deletes the rows of sections that leave and inserts the element rows of sections that come
    /// whole, under section row ids reserved here (their section rows come with the rest).
    /// - Returns: the reserved row ids, one per `whole.insertedSections`.
    static func write(_ whole: CommitRows.WholeSections, _ db: Database, path: String) throws -> [Int64] {
        let deleteSectionElements = try _RawStatement(db, "DELETE FROM element WHERE section_id = ?")
        let deleteSection = try _RawStatement(db, "DELETE FROM section WHERE id = ?")
        for row in whole.deletedSectionRows {
            deleteSectionElements.bind(1, row)
            try deleteSectionElements.execute()
            deleteSection.bind(1, row)
            try expectOne(try deleteSection.execute(), "section row \(row)", path: path)
        }
        guard !whole.insertedSections.isEmpty, whole.failure == nil else { return [] }

        let maxRow = try _RawStatement(db, "SELECT coalesce(max(id), 0) FROM section")
        _ = try maxRow.step()
        let firstRow = maxRow.int64(0) + 1
        maxRow.reset()
        let rows = (0..<Int64(whole.insertedSections.count)).map { firstRow + $0 }
        let insertElement = try _RawStatement(
            db, "INSERT INTO element (section_id, position, identifier, content, content_hash) VALUES (?, ?, ?, ?, ?)")
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
            }
        }
        return rows
    }

    /// Writes the rest of the commit: element deletes, section rows, element rows, the list row and
    /// the journal entry. Returns the new head.
    static func write(_ rows: CommitRows, _ db: Database, head: StoredHead, path: String) throws -> StoredHead {
        let journal = rows.journal
        var listID = head.listID
        if head.version == 0 {
            try Store.validateNewListName(journal.list)
            let insert = try _RawStatement(
                db, "INSERT INTO list (name, head_version, head_digest, base_version, created_at) VALUES (?, 0, '', 0, ?)")
            insert.bind(1, text: journal.list)
            insert.bind(2, text: journal.committedAt)
            try insert.execute()
            listID = db.lastInsertedRowID
        }

        let deleteElement = try _RawStatement(db, "DELETE FROM element WHERE section_id = ? AND position = ?")
        for slot in rows.deletedElements {
            deleteElement.bind(1, slot.section)
            deleteElement.bind(2, slot.position)
            try expectOne(try deleteElement.execute(), "element row", path: path)
        }

        let insertSection = try _RawStatement(
            db, "INSERT INTO section (id, list_id, position, identifier, content, content_hash) VALUES (?, ?, ?, ?, ?, ?)")
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
            try expectOne(try updateSection.execute(), "section row \(section.row)", path: path)
        }

        let insertElement = try _RawStatement(
            db, "INSERT INTO element (section_id, position, identifier, content, content_hash) VALUES (?, ?, ?, ?, ?)")
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
            try expectOne(try updateElement.execute(), "element row", path: path)
        }
        let moveElement = try _RawStatement(
            db, "UPDATE element SET section_id = ?, position = ? WHERE section_id = ? AND position = ?")
        let moveAndUpdateElement = try _RawStatement(
            db,
            "UPDATE element SET section_id = ?, position = ?, content = ?, content_hash = ? WHERE section_id = ? AND position = ?")
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
            try expectOne(try statement.execute(), "element row", path: path)
        }

        let digest = journal.digest
        let stagesJSON = journal.stagesJSON
        let update = try _RawStatement(
            db, """
                UPDATE list SET head_version = ?, head_digest = ?, bytes_since_snapshot = bytes_since_snapshot + ? WHERE id = ?
                RETURNING snapshot_version, bytes_since_snapshot
                """)
        update.bind(1, journal.version)
        update.bind(2, text: digest.hex)
        update.bind(3, stagesJSON.count)
        update.bind(4, listID)
        guard try update.step() else {
            update.reset()
            try expectOne(0, "list \(journal.list)", path: path)
            return rows.head(listID: listID)
        }
        let (pointVersion, bytesSince) = (Int(update.int64(0)), Int(update.int64(1)))
        update.reset()
        if _StoredSnapshotPolicy.isDue(
            version: journal.version, pointVersion: pointVersion, bytesSince: bytesSince, elementCount: journal.elementCount)
        {
            try writeStoredSnapshot(rows, db, listID: listID)
        }
        let insertJournal = try _RawStatement(
            db, """
                INSERT INTO journal (list_id, version, parent_version, committed_at, digest, author, message,
                    section_count, element_count, stages) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
        insertJournal.bind(1, listID)
        insertJournal.bind(2, journal.version)
        insertJournal.bind(3, journal.parentVersion)
        insertJournal.bind(4, text: journal.committedAt)
        insertJournal.bind(5, text: digest.hex)
        insertJournal.bind(6, optionalText: journal.author)
        insertJournal.bind(7, optionalText: journal.message)
        insertJournal.bind(8, journal.sectionCount)
        insertJournal.bind(9, journal.elementCount)
        insertJournal.bind(10, textBytes: stagesJSON)
        try insertJournal.execute()
        return rows.head(listID: listID)
    }

    /// Stores the snapshot at the commit's version as the list's newest stored snapshot.
    private static func writeStoredSnapshot(_ rows: CommitRows, _ db: Database, listID: Int64) throws {
        let journal = rows.journal
        let snapshot = ListSnapshot(list: journal.list, version: journal.version, digest: journal.digest, sections: rows.target)
        let insert = try _RawStatement(db, "INSERT INTO stored_snapshot (list_id, version, snapshot) VALUES (?, ?, ?)")
        insert.bind(1, listID)
        insert.bind(2, journal.version)
        insert.bind(3, textBytes: snapshot.documentJSON)
        try insert.execute()
        let mark = try _RawStatement(db, "UPDATE list SET snapshot_version = ?, bytes_since_snapshot = 0 WHERE id = ?")
        mark.bind(1, journal.version)
        mark.bind(2, listID)
        try mark.execute()
    }

    private static func expectOne(_ changes: Int, _ what: String, path: String) throws {
        guard changes == 1 else {
            throw StoreError(.damaged, "the store at \(path) is damaged: \(what) is missing from the tables")
        }
    }
}
