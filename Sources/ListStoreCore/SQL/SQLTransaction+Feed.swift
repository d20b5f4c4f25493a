// The store feed's rows on both SQL engines.

extension SQLTransaction {
    package func appendFeed(listID: Int64, list: String, version: Int, deleted: Bool) throws {
        // The store row's lock (PostgreSQL's row lock, SQLite's write lock) is held from here until
        // the transaction commits: positions are handed out in the order commits land.
        guard let row = try row("UPDATE store SET feed_position = feed_position + 1 WHERE id = 1 RETURNING feed_position") else {
            throw damaged("it has no identity row")
        }
        try run(
            """
            INSERT INTO feed (position, list_id, list, version, deleted, fingerprint, list_uid)
            VALUES (?, ?, ?, ?, ?, ?, (SELECT uid FROM list WHERE id = ?))
            """,
            [
                .integer(try row.int64(0)), .integer(listID), .text(list), SQLValue(version), SQLValue(deleted ? 1 : 0),
                .integer(FeedEvent.newFingerprint()), .integer(listID),
            ])
    }

    package func feedFingerprint(at position: Int) throws -> Int64? {
        try row("SELECT fingerprint FROM feed WHERE position = ?", [SQLValue(position)])?.optionalInt64(0)
    }

    package func feedSecret() throws -> [UInt8] {
        guard let row = try row("SELECT feed_secret FROM store WHERE id = 1"), let hex = try row.optionalString(0),
            let secret = _Hex.bytes(hex), secret.count >= 16
        else { throw damaged("it has no feed secret") }
        return secret
    }

    package func feedBounds() throws -> (base: Int, last: Int) {
        guard let row = try row("SELECT feed_base, feed_position FROM store WHERE id = 1") else {
            throw damaged("it has no identity row")
        }
        return (try row.int(0), try row.int(1))
    }

    package func feedEvents(after position: Int, limit: Int) throws -> [FeedEvent] {
        try rows(
            """
            SELECT f.position, f.list, f.deleted, f.list_uid, f.fingerprint, \(Self.entryColumns("j."))
            FROM feed f LEFT JOIN journal j ON j.list_id = f.list_id AND j.version = f.version AND f.deleted = 0
            WHERE f.position > ? AND f.deleted < 2 ORDER BY f.position LIMIT ?
            """, [SQLValue(position), SQLValue(limit)]
        ).map { row in
            let list = try row.string(1)
            let entry = try row.int(2) != 0 ? nil : try Self.entry(row, from: 5, of: list)
            var event = FeedEvent(position: try row.int(0), list: list, entry: entry, listID: try row.optionalString(3))
            event.fingerprint = try row.optionalInt64(4)
            return event
        }
    }

    package func feedMoves(after position: Int, limit: Int) throws -> [FeedMove] {
        try rows(
            "SELECT position, list, version, deleted, fingerprint FROM feed WHERE position > ? AND deleted < 2 ORDER BY position LIMIT ?",
            [SQLValue(position), SQLValue(limit)]
        ).map { row in
            FeedMove(
                position: try row.int(0), list: try row.string(1), version: try row.int(3) != 0 ? nil : try row.int(2),
                fingerprint: try row.optionalInt64(4))
        }
    }

    package func forgetFeed(listID: Int64, through version: Int) throws {
        let greatest = dialect == .postgres ? "greatest" : "max"
        try run(
            """
            UPDATE store SET feed_base = \(greatest)(feed_base,
                coalesce((SELECT max(position) FROM feed WHERE list_id = ? AND version <= ? AND deleted = 0), 0))
            WHERE id = 1
            """, [.integer(listID), SQLValue(version)])
        try run("DELETE FROM feed WHERE list_id = ? AND version <= ? AND deleted = 0", [.integer(listID), SQLValue(version)])
        try run("DELETE FROM feed WHERE deleted = 2 AND position <= (SELECT feed_base FROM store WHERE id = 1)", [])
    }

    package func deleteRows(of info: ListRow) throws {
        let id = [SQLValue.integer(info.id)]
        try run("DELETE FROM element WHERE section_id IN (SELECT id FROM section WHERE list_id = ?)", id)
        for table in ["section", "journal", "stored_snapshot", "consumer", "push", "outbox", "replica_source", "deleted_section"] {
            try run("DELETE FROM \(table) WHERE list_id = ?", id)
        }
        // The list's commits stay as rows the feed passes over (a cursor at one is checked by its
        // fingerprint); not the deletions of earlier lists whose row id SQLite gave it again.
        try run("UPDATE feed SET deleted = 2 WHERE list_id = ? AND deleted = 0", id)
        try run("DELETE FROM list WHERE id = ?", id)
    }
}
