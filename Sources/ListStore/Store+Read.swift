import GRDB
import ListJSON
import ListMerge

extension Store {
    /// The lists of the store, by name.
    ///
    /// - Throws: `StoreError` `.storeNotFound`, `.damaged`, `.io`.
    /// - Complexity: O(lists).
    public func lists() throws -> [ListSummary] {
        try summaries(of: nil)
    }

    /// One list's summary: head version and digest, counts, oldest retained version.
    ///
    /// - Throws: `StoreError` `.listNotFound`, `.storeNotFound`, `.damaged`, `.io`.
    /// - Complexity: O(1).
    public func summary(of list: String) throws -> ListSummary {
        guard let summary = try summaries(of: list).first else {
            throw StoreError(.listNotFound, "no list named '\(list)' in \(path)")
        }
        return summary
    }

    private func summaries(of list: String?) throws -> [ListSummary] {
        let pool = try existingPool()
        return try Store.mapErrors(path: path) {
            try pool.read { db in
                let statement = try _RawStatement(
                    db, """
                        SELECT l.name, l.head_version, l.head_digest, l.base_version,
                            COALESCE(j.section_count, (SELECT COUNT(*) FROM section s WHERE s.list_id = l.id)),
                            COALESCE(j.element_count, (SELECT COUNT(*) FROM section s JOIN element e ON e.section_id = s.id
                                WHERE s.list_id = l.id))
                        FROM list l LEFT JOIN journal j ON j.list_id = l.id AND j.version = l.head_version
                        WHERE ?1 IS NULL OR l.name = ?1
                        ORDER BY l.name
                        """)
                statement.bind(1, optionalText: list)
                var lists: [ListSummary] = []
                while try statement.step() {
                    lists.append(ListSummary(
                        name: statement.string(0), version: Int(statement.int64(1)), digest: ListDigest(hex: statement.string(2)),
                        sectionCount: Int(statement.int64(4)), elementCount: Int(statement.int64(5)),
                        baseVersion: Int(statement.int64(3))))
                }
                statement.reset()
                return lists
            }
        }
    }

    /// A version of `list`: the head, or with `version`, any version still in its history (time
    /// travel: the nearest snapshot the store keeps at or before `version`, the base's or one kept for
    /// time travel, plus the journal replayed from it up to `version`).
    ///
    /// ```swift
    /// let now = try store.snapshot(of: "inbox")
    /// let then = try store.snapshot(of: "inbox", at: now.version - 3)
    /// ```
    /// - Throws: `StoreError` `.storeNotFound`, `.listNotFound`, `.versionNotFound`, `.damaged`, `.io`.
    /// - Complexity: O(n) for the head; for an older version, O(n) plus the replay of at most 128
    ///   journal entries (fewer when they hold about a snapshot's size of stages), each O(its
    ///   operations + the elements of the sections it touches), for versions committed by a release
    ///   that stores snapshots (older history replays from the base). See <doc:HistoryAndRetention#Time-travel>.
    public func snapshot(of list: String, at version: Int? = nil) throws -> ListSnapshot {
        let pool = try existingPool()
        return try Store.mapErrors(path: path) {
            try pool.read { db in try snapshot(db, list: list, at: version) }
        }
    }

    /// `snapshot(of:at:)`, and how many journal entries it read.
    package func _snapshotCountingReads(of list: String, at version: Int?) throws -> (snapshot: ListSnapshot, entriesRead: Int) {
        let pool = try existingPool()
        return try Store.mapErrors(path: path) {
            try pool.read { db in
                var read = 0
                let snapshot = try snapshot(db, list: list, at: version, entriesRead: &read)
                return (snapshot, read)
            }
        }
    }

    func snapshot(_ db: Database, list: String, at version: Int?) throws -> ListSnapshot {
        var read = 0
        return try snapshot(db, list: list, at: version, entriesRead: &read)
    }

    func snapshot(_ db: Database, list: String, at version: Int?, entriesRead: inout Int) throws -> ListSnapshot {
        let transaction = SQLiteTransaction(self, db)
        let (snapshot, read) = try transaction.snapshot(of: try listInfo(db, list: list), at: version)
        entriesRead += read
        return snapshot
    }

    /// Journal entries of `list` after `version` (default: from the oldest retained one), oldest
    /// first, at most `limit` of them and, with `maxBytes`, only as many as fit in that many bytes of
    /// stages JSON (`JournalEntry.stagesJSON`) — but always at least one, so that a reader paging
    /// with `hasMore` makes progress even past an entry larger than the budget.
    ///
    /// ```swift
    /// var cursor = 0
    /// repeat {
    ///     let page = try store.journal(of: "inbox", after: cursor, limit: 100, maxBytes: 8 << 20)
    ///     for entry in page.entries { /* … */ cursor = entry.version }
    /// } while page.hasMore
    /// ```
    /// - Parameters:
    ///   - list: the list's name.
    ///   - version: the version after which entries are returned (`nil`: from the oldest retained).
    ///   - limit: the most entries returned (0 answers only `hasMore`).
    ///   - maxBytes: the byte budget of the page's stages (default: no budget). Entries are read
    ///     only once they are known to fit, so the memory a page takes follows the budget.
    /// - Throws: `StoreError` `.storeNotFound`, `.listNotFound`, `.versionNotFound` (a version older
    ///   than the retained history, or after the head), `.damaged`, `.io`.
    /// - Complexity: O(size of the entries returned); with a budget, one more pass over the sizes of
    ///   at most `limit + 1` entries (and no entry past the page is read).
    public func journal(of list: String, after version: Int? = nil, limit: Int = 100, maxBytes: Int = .max) throws -> JournalPage {
        let pool = try existingPool()
        return try Store.mapErrors(path: path) {
            try pool.read { db in try SQLiteTransaction(self, db).journal(of: list, after: version, limit: limit, maxBytes: maxBytes) }
        }
    }

    /// One minimal staged changeset from `version` to `otherVersion` (default: the head), both in the
    /// list's retained history.
    ///
    /// - Throws: as `snapshot(of:at:)`.
    /// - Complexity: that of two `snapshot(of:at:)` calls plus one diff.
    public func changeset(of list: String, from version: Int, to otherVersion: Int? = nil) throws
        -> (from: ListSnapshot, to: ListSnapshot, changeset: ListChangeset)
    {
        let pool = try existingPool()
        return try Store.mapErrors(path: path) {
            try pool.read { db in
                let from = try snapshot(db, list: list, at: version)
                let to = try snapshot(db, list: list, at: otherVersion)
                return (from, to, ListChangeset(source: from.sections, target: to.sections))
            }
        }
    }

    // MARK: Internals

    func listInfo(_ db: Database, list: String) throws -> ListRow {
        let statement = try _RawStatement(
            db, "SELECT id, head_version, head_digest, base_version, base_snapshot FROM list WHERE name = ?")
        statement.bind(1, text: list)
        defer { statement.reset() }
        guard try statement.step() else {
            throw StoreError(.listNotFound, "no list named '\(list)' in \(path)")
        }
        return ListRow(
            id: statement.int64(0), name: list, headVersion: Int(statement.int64(1)),
            headDigest: ListDigest(hex: statement.string(2)), baseVersion: Int(statement.int64(3)),
            baseSnapshot: statement.isNull(4) ? nil : statement.bytes(4))
    }

    /// Journal rows with `version` in `after+1 ... through`, oldest first.
    func entries(_ db: Database, info: ListRow, after: Int, through: Int, limit: Int = Int.max) throws -> [JournalEntry] {
        let statement = try _RawStatement(
            db, """
                SELECT version, parent_version, committed_at, digest, author, message, section_count, element_count, stages,
                    push_client, push_seq, conflicts
                FROM journal WHERE list_id = ? AND version > ? AND version <= ? ORDER BY version LIMIT ?
                """)
        statement.bind(1, info.id)
        statement.bind(2, after)
        statement.bind(3, through)
        statement.bind(4, Int64(min(limit, Int(Int64.max))))
        defer { statement.reset() }
        var entries: [JournalEntry] = []
        while try statement.step() {
            entries.append(JournalEntry(
                list: info.name, version: Int(statement.int64(0)), parentVersion: Int(statement.int64(1)),
                committedAt: statement.string(2), digest: ListDigest(hex: statement.string(3)),
                author: statement.optionalString(4), message: statement.optionalString(5),
                sectionCount: Int(statement.int64(6)), elementCount: Int(statement.int64(7)), stagesJSON: statement.bytes(8),
                pushID: statement.optionalString(9).map { PushID(client: $0, seq: Int(statement.int64(10))) },
                conflicts: statement.isNull(11) ? [] : try Conflict.storedReport(statement.bytes(11), of: "version \(statement.int64(0)) of list '\(info.name)'")))
        }
        return entries
    }
}
