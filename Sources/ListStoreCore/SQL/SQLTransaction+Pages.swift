// The rows of paged reads and paged syncs, written once for the SQL engines: a list's head records
// after a cursor, read with bounded queries, and what a replica's paged sync records of itself (its
// pages land as rows of a staging list).
extension SQLTransaction {
    package func headRecords(listID: Int64, after cursor: (section: Int64, element: Int64?)?, limit: Int) throws
        -> [(after: (section: Int64, element: Int64?), record: ListPage.Record)]
    {
        var records: [(after: (section: Int64, element: Int64?), record: ListPage.Record)] = []
        // The rest of the section the cursor is in, then the sections after it, each with its
        // elements: every query bounded by what is left of `limit`.
        var afterSection = cursor?.section ?? .min
        if let cursor {
            if let row = try row("SELECT id FROM section WHERE list_id = ? AND position = ?", [.integer(listID), .integer(cursor.section)]) {
                try appendElements(of: try row.int64(0), section: cursor.section, after: cursor.element, limit: limit, to: &records)
            } else {
                throw StoreError(.versionNotFound, "no record of the list's head is at the cursor '\(ListPage.Cursor(section: cursor.section, element: cursor.element))': its pages are of another version; a paged read starts again at the head")
            }
        }
        while records.count < limit {
            let sections = try rows(
                "SELECT id, position, identifier, content FROM section WHERE list_id = ? AND position > ? ORDER BY position LIMIT ?",
                [.integer(listID), .integer(afterSection), SQLValue(min(limit - records.count, 256))])
            if sections.isEmpty { break }
            for section in sections where records.count < limit {
                let position = try section.int64(1)
                records.append(
                    ((position, nil),
                     ListPage.Record(isSection: true, item: ListItem(id: try section.string(2), content: try section.bytes(3)))))
                try appendElements(of: try section.int64(0), section: position, after: nil, limit: limit, to: &records)
                afterSection = position
            }
        }
        return records
    }

    /// Appends the elements of section row `row` (at `section`) after position `element`, up to `limit` records in all.
    private func appendElements(
        of row: Int64, section: Int64, after element: Int64?, limit: Int, to records: inout [(after: (section: Int64, element: Int64?), record: ListPage.Record)]
    ) throws {
        guard records.count < limit else { return }
        let elements = try rows(
            "SELECT position, identifier, content FROM element WHERE section_id = ? AND position > ? ORDER BY position LIMIT ?",
            [.integer(row), .integer(element ?? .min), SQLValue(limit - records.count)])
        for element in elements {
            records.append(
                ((section, try element.int64(0)),
                 ListPage.Record(isSection: false, item: ListItem(id: try element.string(1), content: try element.bytes(2)))))
        }
    }

    // MARK: Staging

    package func stagedSync(of list: String, locking: Bool) throws -> StagedSync? {
        // SQLite's writing transactions are IMMEDIATE: they hold the store's write lock already.
        let lock = locking && dialect == .postgres ? " FOR UPDATE" : ""
        return try row(
            """
            SELECT store_uuid, store_epoch, source_list, list_uid, version, digest, section_count, element_count, next_cursor,
                records, elements, bytes, reason, started_at, entry_bytes
            FROM staged_sync WHERE list_name = ?\(lock)
            """, [.text(list)]
        ).map { row in
            var sync = StagedSync(
                starting: ListPage(
                    list: try row.string(2), version: try row.int(4), digest: ListDigest(hex: try row.string(5)),
                    listID: try row.optionalString(3), store: StoreIdentity(uuid: try row.string(0), epoch: try row.int(1)),
                    sectionCount: try row.int(6), elementCount: try row.int(7), after: nil, records: [], next: nil),
                reason: try row.string(12), startedAt: try row.string(13))
            sync.next = try row.optionalString(8).map(ListPage.Cursor.init)
            (sync.records, sync.elements, sync.bytes, sync.entryBytes) = (try row.int(9), try row.int(10), try row.int(11), try row.int(14))
            return sync
        }
    }

    package func writeStagedSync(_ sync: StagedSync, of list: String) throws {
        let values: [SQLValue] = [
            .text(list), .text(sync.store.uuid), SQLValue(sync.store.epoch), .text(sync.sourceList), SQLValue(sync.listID),
            SQLValue(sync.version), .text(sync.digest.hex), SQLValue(sync.sectionCount), SQLValue(sync.elementCount),
            SQLValue(sync.next?.description), SQLValue(sync.records), SQLValue(sync.elements), SQLValue(sync.bytes), .text(sync.reason),
            .text(sync.startedAt), SQLValue(sync.entryBytes),
        ]
        try run(
            """
            INSERT INTO staged_sync (list_name, store_uuid, store_epoch, source_list, list_uid, version, digest, section_count,
                element_count, next_cursor, records, elements, bytes, reason, started_at, entry_bytes)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (list_name) DO UPDATE SET store_uuid = excluded.store_uuid, store_epoch = excluded.store_epoch,
                source_list = excluded.source_list, list_uid = excluded.list_uid, version = excluded.version,
                digest = excluded.digest, section_count = excluded.section_count, element_count = excluded.element_count,
                next_cursor = excluded.next_cursor, records = excluded.records, elements = excluded.elements,
                bytes = excluded.bytes, reason = excluded.reason, started_at = excluded.started_at,
                entry_bytes = excluded.entry_bytes
            """, values)
    }

    package func deleteStagedSync(of list: String) throws {
        try run("DELETE FROM staged_sync WHERE list_name = ?", [.text(list)])
    }

    package func listID(named name: String) throws -> Int64? {
        try row("SELECT id FROM list WHERE name = ?", [.text(name)]).map { try $0.int64(0) }
    }

    package func renameList(_ listID: Int64, to name: String) throws {
        try run("UPDATE list SET name = ? WHERE id = ?", [.text(name), .integer(listID)])
    }

    package func moveSections(of listID: Int64, to target: Int64) throws {
        try run("UPDATE section SET list_id = ? WHERE list_id = ?", [.integer(target), .integer(listID)])
    }

    package func lastSection(listID: Int64) throws -> (row: Int64, id: String, elements: Int)? {
        try row(
            """
            SELECT s.id, s.identifier, (SELECT count(*) FROM element e WHERE e.section_id = s.id) FROM section s
            WHERE s.list_id = ? ORDER BY s.position DESC LIMIT 1
            """, [.integer(listID)]
        ).map { (try $0.int64(0), try $0.string(1), try $0.int(2)) }
    }
}
