import ListDiff
import ListJSON
import ListMerge
import ListStoreCore
import PostgresNIO

extension PostgresStore {
    /// The lists of the store, by name (in byte order of their UTF-8, as `Store`).
    ///
    /// ```swift
    /// for list in try await store.lists() { print(list.name, list.version) }
    /// ```
    /// - Throws: `StoreError` `.damaged`, `.io`; `CancellationError` when the task is cancelled
    ///   before the read starts.
    /// - Complexity: O(lists), one round trip.
    public func lists() async throws -> [ListSummary] {
        try await summaries(of: nil)
    }

    /// One list's summary: head version and digest, counts, oldest retained version.
    ///
    /// ```swift
    /// let head = try await store.summary(of: "inbox").version
    /// ```
    /// - Throws: `StoreError` `.listNotFound`, `.damaged`, `.io`; `CancellationError` when the task
    ///   is cancelled before the read starts.
    /// - Complexity: O(1), one round trip.
    public func summary(of list: String) async throws -> ListSummary {
        try _Names.checkFindable(list, in: location)
        guard let summary = try await summaries(of: list).first else {
            throw StoreError.listNotFound(list, in: location)
        }
        return summary
    }

    /// The summaries (`SQLTransaction.summaries(of:)`'s rows) in one prepared statement on
    /// the event loop, without a transaction: a journal server reads the heads this way after every
    /// commit and every poll interval while anyone waits, so it stays one round trip.
    private func summaries(of list: String?) async throws -> [ListSummary] {
        try await withConnection { connection in
            var lists: [ListSummary] = []
            for try await row in try await connection.execute(_PostgresStatements.Summaries(name: list), logger: logger) {
                lists.append(
                    ListSummary(
                        name: row.0, version: row.1, digest: ListDigest(hex: row.2), sectionCount: row.4, elementCount: row.5,
                        baseVersion: row.3))
            }
            return lists
        }
    }

    /// Journal entries of `list` after `version` (default: from the oldest retained one), oldest
    /// first, at most `limit` of them and, with `maxBytes`, only as many as fit in that many bytes of
    /// stages JSON (but at least one), as `Store.journal(of:after:limit:maxBytes:)`.
    ///
    /// ```swift
    /// var cursor = 0
    /// repeat {
    ///     let page = try await store.journal(of: "inbox", after: cursor, limit: 100, maxBytes: 8 << 20)
    ///     for entry in page.entries { /* … */ cursor = entry.version }
    /// } while page.hasMore
    /// ```
    /// - Parameters:
    ///   - limit: the most entries returned (0 answers only `hasMore`).
    ///   - maxBytes: the byte budget of the page's stages (default: no budget). Entries are read
    ///     only once they are known to fit.
    /// - Throws: `StoreError` `.listNotFound`, `.versionNotFound` (a version older than the retained
    ///   history, or after the head), `.damaged`, `.io`; `CancellationError` when the task is
    ///   cancelled before the read starts.
    /// - Complexity: O(size of the entries returned); with a budget, one more pass over the sizes of
    ///   at most `limit + 1` entries.
    public func journal(
        of list: String, after version: Int? = nil, limit: Int = 100, maxBytes: Int = .max
    ) async throws -> JournalPage {
        try await transaction(.readOnly) { connection in
            let info = try await listInfo(connection, list: list)
            let version = version ?? info.baseVersion
            try info.checkRetained(version)
            let limit = max(0, limit)
            if maxBytes < .max, limit > 0 {
                // Count the entries that fit by their sizes alone (one row past `limit` tells
                // whether more follow), then read only those.
                let sizes = _PostgresStatements.EntrySizes(range: .init(
                    listID: info.id, after: version, through: info.headVersion, limit: min(limit, Int(Int64.max) - 1) + 1))
                var (fitting, bytes, hasMore) = (0, 0, false)
                for try await size in try await connection.execute(sizes, logger: logger) {
                    bytes += size
                    if fitting == limit || (fitting > 0 && bytes > maxBytes) {
                        hasMore = true
                        break
                    }
                    fitting += 1
                }
                let entries = try await entries(connection, info: info, after: version, through: info.headVersion, limit: fitting)
                return JournalPage(entries: entries, hasMore: hasMore)
            }
            var entries = try await entries(
                connection, info: info, after: version, through: info.headVersion, limit: min(limit, Int.max - 1) + 1)
            let hasMore = entries.count > limit
            if hasMore { entries.removeLast() }
            return JournalPage(entries: entries, hasMore: hasMore)
        }
    }

    // MARK: Internals

    /// The row of `list`; with `locking`, its lock is taken for the rest of the transaction too: the
    /// writers of a list (commits, pruning, consumers) take turns on it.
    /// - Throws: `StoreError` `.listNotFound`.
    func listInfo(_ connection: PostgresConnection, list: String, locking: Bool = false) async throws -> ListRow {
        try _Names.checkFindable(list, in: location)
        let rows = locking
            ? try await connection.execute(_PostgresStatements.LockedListInfo(name: list), logger: logger)
            : try await connection.execute(_PostgresStatements.ListInfo(name: list), logger: logger)
        for try await row in rows {
            return ListRow(
                id: row.0, name: list, headVersion: row.1, headDigest: ListDigest(hex: row.2), baseVersion: row.3,
                baseSnapshot: row.4.map { Array($0.readableBytesView) })
        }
        throw StoreError.listNotFound(list, in: location)
    }

    /// Journal entries of the list `info` names with a version in `after+1 ... through`, oldest first.
    func entries(
        _ connection: PostgresConnection, info: ListRow, after: Int, through: Int, limit: Int = Int(Int64.max)
    ) async throws -> [JournalEntry] {
        let statement = _PostgresStatements.Entries(range: .init(listID: info.id, after: after, through: through, limit: limit))
        var entries: [JournalEntry] = []
        for try await row in try await connection.execute(statement, logger: logger) {
            let (version, parent, committedAt, digest, author, message, sectionCount, elementCount, stages, pushClient, pushSeq, conflicts) = row
            entries.append(JournalEntry(
                list: info.name, version: version, parentVersion: parent, committedAt: committedAt, digest: ListDigest(hex: digest),
                author: author, message: message, sectionCount: sectionCount, elementCount: elementCount,
                stagesJSON: Array(stages.readableBytesView),
                pushID: pushClient.map { PushID(client: $0, seq: pushSeq ?? 0) },
                conflicts: try conflicts.map { try Conflict.storedReport(Array($0.readableBytesView), of: "version \(version) of list '\(info.name)'") } ?? []))
        }
        return entries
    }

    /// The UTF-8 text of a BYTEA identifier.
    static func string(_ bytes: ByteBuffer) -> String {
        String(decoding: bytes.readableBytesView, as: UTF8.self)
    }
}

