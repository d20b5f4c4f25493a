// The store feed's rows on both SQL engines.

extension SQLTransaction {
    package func appendFeed(listID: Int64, list: String, version: Int) throws {
        // The store row's lock (PostgreSQL's row lock, SQLite's write lock) is held from here until
        // the transaction commits: positions are handed out in the order commits land.
        guard let row = try row("UPDATE store SET feed_position = feed_position + 1 WHERE id = 1 RETURNING feed_position") else {
            throw damaged("it has no identity row")
        }
        try run(
            "INSERT INTO feed (position, list_id, list, version) VALUES (?, ?, ?, ?)",
            [.integer(try row.int64(0)), .integer(listID), .text(list), SQLValue(version)])
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
            SELECT f.position, f.list, \(Self.entryColumns("j."))
            FROM feed f JOIN journal j ON j.list_id = f.list_id AND j.version = f.version
            WHERE f.position > ? ORDER BY f.position LIMIT ?
            """, [SQLValue(position), SQLValue(limit)]
        ).map { row in
            let list = try row.string(1)
            return FeedEvent(position: try row.int(0), list: list, entry: try Self.entry(row, from: 2, of: list))
        }
    }

    package func forgetFeed(listID: Int64, through version: Int) throws {
        let greatest = dialect == .postgres ? "greatest" : "max"
        try run(
            """
            UPDATE store SET feed_base = \(greatest)(feed_base,
                coalesce((SELECT max(position) FROM feed WHERE list_id = ? AND version <= ?), 0))
            WHERE id = 1
            """, [.integer(listID), SQLValue(version)])
        try run("DELETE FROM feed WHERE list_id = ? AND version <= ?", [.integer(listID), SQLValue(version)])
    }
}
