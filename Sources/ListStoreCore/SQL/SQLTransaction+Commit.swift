import ListDiff
import ListMerge

// What a commit writes, in the rows of both SQL engines: the batches of its section and element
// rows (`SQLBatch`: prepared once and stepped on SQLite, sent over arrays on PostgreSQL), its list
// row, head, stored snapshot and journal entry.

extension SQLTransaction {
    package func write(_ whole: CommitRows.WholeSections) throws -> (reservedRows: [Int64], written: Int) {
        var written = 0
        if !whole.deletedSectionRows.isEmpty {
            let rows = whole.deletedSectionRows.map { [SQLValue.integer($0)] }
            written += try run(Self.batch(.delete(from: "element", where: ["section_id"]), rows))
            try expect(try run(Self.batch(.delete(from: "section", where: ["id"]), rows)), rows.count, "section rows")
            written += rows.count
        }
        guard !whole.insertedSections.isEmpty, whole.failure == nil else { return ([], written) }
        let reserved = try reserveSectionRows(whole.insertedSections.count)
        var elements = Self.elementRows
        for k in whole.insertedSections.indices {
            for element in whole.elements(ofInserted: k) {
                written += try add(
                    [
                        .integer(reserved[k]), .integer(element.position), .utf8(element.item.id), .bytes(element.item.content),
                        .hash(element.hash),
                    ], to: &elements)
            }
        }
        return (reserved, written + (try run(elements)))
    }

    package func insertList(_ name: String, createdAt: String, keepsDeletedSections: Bool) throws -> Int64 {
        guard
            let row = try row(
                "INSERT INTO list (name, head_version, head_digest, base_version, created_at, deleted_sections_kept, uid) VALUES (?, 0, '', 0, ?, ?, ?) RETURNING id",
                [.text(name), .text(createdAt), .integer(keepsDeletedSections ? 1 : 0), .text(ListRow.newUID())])
        else { throw damaged("list '\(name)' was not inserted") }
        return try row.int64(0)
    }

    /// Writes the rest of a commit's rows. A moved element's row is deleted from its old slot and
    /// inserted at its new one, after every vacated slot is free: one statement that moves many
    /// keys could meet a key not vacated yet. The contents of moved elements that the commit does
    /// not bring (a replayed move) are read from their rows first.
    package func write(_ rows: CommitRows, listID: Int64) throws -> Int {
        let kept = try contents(ofElements: rows.movedElements.filter { rows.content(of: $0) == nil }.map { $0.from! }, sections: []).elements
        var vacated = SQLBatch.delete(from: "element", where: ["section_id", "position"])
        var deleted = 0
        for slot in rows.deletedElements + rows.movedElements.map({ $0.from! }) {
            deleted += try add([.integer(slot.section), .integer(slot.position)], to: &vacated)
        }
        try expect(deleted + (try run(vacated)), rows.deletedElements.count + rows.movedElements.count, "element rows")

        var inserted = SQLBatch.insert(into: "section", ["id", "list_id", "position", "identifier", "content", "content_hash"])
        for section in rows.insertedSections {
            let (id, content, hash) = rows.section(section)
            guard let content else { throw damaged("an inserted section brings no content") }
            inserted.append([.integer(section.row), .integer(listID), .integer(section.position), .utf8(id), .bytes(content), .hash(hash)])
        }
        try run(inserted)
        var updated = SQLBatch.update("section", set: ["position", "content", "content_hash"], where: ["id", "list_id"])
        var placed = SQLBatch.update("section", set: ["position"], where: ["id", "list_id"])
        for section in rows.updatedSections {
            let (_, content, hash) = rows.section(section)
            if section.contentChanged {
                guard let content else { throw damaged("a changed section brings no content") }
                updated.append([.integer(section.position), .bytes(content), .hash(hash), .integer(section.row), .integer(listID)])
            } else {
                placed.append([.integer(section.position), .integer(section.row), .integer(listID)])
            }
        }
        try expect(try run(updated) + (try run(placed)), updated.count + placed.count, "section rows")

        var elements = Self.elementRows
        for element in rows.insertedElements + rows.movedElements {
            guard let content = rows.content(of: element) ?? element.from.flatMap({ kept[$0] }) else {
                throw damaged("an element row is missing")
            }
            try add(
                [
                    .integer(element.slot.section), .integer(element.slot.position), .utf8(rows.identifier(of: element)),
                    .bytes(content), .hash(rows.hash(of: element)),
                ], to: &elements)
        }
        try run(elements)
        var changed = SQLBatch.update("element", set: ["content", "content_hash"], where: ["section_id", "position"])
        var contentChanges = 0
        for element in rows.updatedElements {
            guard let content = rows.content(of: element) else { throw damaged("a changed element brings no content") }
            contentChanges += try add(
                [.bytes(content), .hash(rows.hash(of: element)), .integer(element.slot.section), .integer(element.slot.position)],
                to: &changed)
        }
        try expect(contentChanges + (try run(changed)), rows.updatedElements.count, "element rows")
        return rows.deletedElements.count + rows.insertedSections.count + rows.updatedSections.count
            + rows.insertedElements.count + rows.updatedElements.count + rows.movedElements.count
    }

    package func contents(ofElements slots: [CommitRows.Slot], sections: [Int64]) throws
        -> (elements: [CommitRows.Slot: [UInt8]], sections: [Int64: [UInt8]])
    {
        var found: (elements: [CommitRows.Slot: [UInt8]], sections: [Int64: [UInt8]]) = ([:], [:])
        found.elements.reserveCapacity(slots.count)
        // Terms joined by OR, each a lookup in the (section_id, position) key on both engines.
        try inRuns(of: slots) { chunk, _ in
            let terms = Array(repeating: "(section_id = ? AND position = ?)", count: chunk.count).joined(separator: " OR ")
            for row in try self.rows(
                "SELECT section_id, position, content FROM element WHERE \(terms)",
                chunk.flatMap { [.integer($0.section), .integer($0.position)] })
            {
                found.elements[CommitRows.Slot(section: try row.int64(0), position: try row.int64(1))] = try row.bytes(2)
            }
        }
        try inRuns(of: sections) { chunk, marks in
            for row in try self.rows("SELECT id, content FROM section WHERE id IN (\(marks))", chunk.map { .integer($0) }) {
                found.sections[try row.int64(0)] = try row.bytes(1)
            }
        }
        return found
    }

    package func setHead(
        listID: Int64, version: Int, digest: ListDigest, journalBytes: Int
    ) throws -> (snapshotVersion: Int, bytesSinceSnapshot: Int) {
        guard
            let row = try row(
                """
                UPDATE list SET head_version = ?, head_digest = ?, bytes_since_snapshot = bytes_since_snapshot + ? WHERE id = ?
                RETURNING snapshot_version, bytes_since_snapshot
                """, [SQLValue(version), .text(digest.hex), SQLValue(journalBytes), .integer(listID)])
        else { throw damaged("list row \(listID) is missing") }
        return (try row.int(0), try row.int(1))
    }

    package func insertStoredSnapshot(document: [UInt8], version: Int, listID: Int64) throws {
        try run(
            "INSERT INTO stored_snapshot (list_id, version, snapshot) VALUES (?, ?, ?)",
            [.integer(listID), SQLValue(version), .bytes(document)])
        try storedSnapshotIsNewest(version: version, listID: listID)
    }

    /// Records the stored snapshot at `version` as the list's newest.
    package func storedSnapshotIsNewest(version: Int, listID: Int64) throws {
        try run("UPDATE list SET snapshot_version = ?, bytes_since_snapshot = 0 WHERE id = ?", [SQLValue(version), .integer(listID)])
    }

    package func insertJournal(
        _ journal: CommitRows.Journal, listID: Int64, stagesJSON: [UInt8], digest: ListDigest
    ) throws {
        if dialect == .postgres {
            for (what, text) in [("author", journal.author), ("message", journal.message)] where text?.utf8.contains(0) == true {
                throw StoreError(.invalidArgument, "a commit's \(what) must not contain U+0000 (PostgreSQL text cannot hold it)")
            }
        }
        try run(
            """
            INSERT INTO journal (list_id, version, parent_version, committed_at, digest, author, message,
                section_count, element_count, stages) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .integer(listID), SQLValue(journal.version), SQLValue(journal.parentVersion), .text(journal.committedAt),
                .text(digest.hex), SQLValue(journal.author), SQLValue(journal.message), SQLValue(journal.sectionCount),
                SQLValue(journal.elementCount), .bytes(stagesJSON),
            ])
    }

    package func insertCopiedRecords(_ records: [CopiedRecord], listID: Int64, section: Int64?) throws -> [Int64] {
        let made = try reserveSectionRows(records.count(where: \.isSection))
        var reserved = made[...]
        var sections = SQLBatch.insert(into: "section", ["id", "list_id", "position", "identifier", "content", "content_hash"])
        var elements = Self.elementRows
        var section = section
        for record in records {
            if record.isSection {
                let row = reserved.removeFirst()
                sections.append([.integer(row), .integer(listID), .integer(record.position), .utf8(record.item.id), .bytes(record.item.content), .hash(record.hash)])
                section = row
            } else {
                guard let section else { throw damaged("a copied element comes before any section") }
                // Section rows go first: an element row names its section's.
                if sections.count > 0 { try run(sections); sections.removeAll() }
                try add([.integer(section), .integer(record.position), .utf8(record.item.id), .bytes(record.item.content), .hash(record.hash)], to: &elements)
            }
        }
        try run(sections)
        try run(elements)
        return made
    }

    // MARK: Internals

    /// The element rows a commit inserts.
    private static var elementRows: SQLBatch {
        .insert(into: "element", ["section_id", "position", "identifier", "content", "content_hash"])
    }

    /// Adds `row` to `batch`, and runs the batch once it holds `SQLBatch.rowsPerRun` rows; how many
    /// rows that run changed.
    @discardableResult
    private func add(_ row: [SQLValue], to batch: inout SQLBatch) throws -> Int {
        batch.append(row)
        guard batch.count == SQLBatch.rowsPerRun else { return 0 }
        defer { batch.removeAll() }
        return try run(batch)
    }

    private static func batch(_ batch: SQLBatch, _ rows: [[SQLValue]]) -> SQLBatch {
        var batch = batch
        for row in rows { batch.append(row) }
        return batch
    }

    /// Reserves `count` new section row ids: PostgreSQL takes them from the table's sequence, which
    /// other writers share; SQLite's writer holds the store's lock, and takes those after the
    /// largest. None for a `count` of 0.
    package func reserveSectionRows(_ count: Int) throws -> [Int64] {
        guard count > 0 else { return [] }
        switch dialect {
        case .sqlite:
            let largest = try row("SELECT coalesce(max(id), 0) FROM section")?.int64(0) ?? 0
            return (1...Int64(count)).map { largest + $0 }
        case .postgres:
            let reserved = try rows(
                "SELECT nextval(pg_get_serial_sequence('section', 'id')) FROM generate_series(1, ?)", [SQLValue(count)]
            ).map { try $0.int64(0) }
            guard reserved.count == count else {
                throw damaged("the section id sequence gave \(reserved.count) ids, not \(count)")
            }
            return reserved
        }
    }

    /// Throws `.damaged` unless a statement changed the rows it had to.
    private func expect(_ count: Int, _ wanted: Int, _ what: String) throws {
        guard count == wanted else { throw damaged("\(wanted) \(what) to write, \(count) found") }
    }

    package func damaged(_ what: String) -> StoreError {
        StoreError(.damaged, "the store at \(location) is damaged: \(what)")
    }
}
