import GRDB
import ListJSON
import ListMerge

extension Store {
    /// The lists of the store, by name.
    ///
    /// - Throws: `StoreError` `.storeNotFound`, `.damaged`, `.io`.
    /// - Complexity: O(lists).
    public func lists() throws -> [ListSummary] {
        try reading { try $0.lists() }
    }

    /// One list's summary: head version and digest, counts, oldest retained version.
    ///
    /// - Throws: `StoreError` `.listNotFound`, `.storeNotFound`, `.damaged`, `.io`.
    /// - Complexity: O(1).
    public func summary(of list: String) throws -> ListSummary {
        try reading { try $0.summary(of: list) }
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
        try reading { try $0.snapshot(of: list, at: version) }
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
        try reading { try $0.journal(of: list, after: version, limit: limit, maxBytes: maxBytes) }
    }

    /// One minimal staged changeset from `version` to `otherVersion` (default: the head), both in the
    /// list's retained history.
    ///
    /// - Throws: as `snapshot(of:at:)`.
    /// - Complexity: that of two `snapshot(of:at:)` calls plus one diff.
    public func changeset(of list: String, from version: Int, to otherVersion: Int? = nil) throws
        -> (from: ListSnapshot, to: ListSnapshot, changeset: ListChangeset)
    {
        try reading { try $0.changeset(of: list, from: version, to: otherVersion) }
    }
}

extension Store {
    /// `lists()`, read off the cooperative thread pool (GRDB's async access).
    public func lists() async throws -> [ListSummary] {
        try await reading { try $0.lists() }
    }

    /// `summary(of:)`, read off the cooperative thread pool.
    public func summary(of list: String) async throws -> ListSummary {
        try await reading { try $0.summary(of: list) }
    }

    /// `snapshot(of:at:)`, read off the cooperative thread pool.
    public func snapshot(of list: String, at version: Int? = nil) async throws -> ListSnapshot {
        try await reading { try $0.snapshot(of: list, at: version) }
    }

    /// `journal(of:after:limit:maxBytes:)`, read off the cooperative thread pool.
    public func journal(
        of list: String, after version: Int? = nil, limit: Int = 100, maxBytes: Int = .max
    ) async throws -> JournalPage {
        try await reading { try $0.journal(of: list, after: version, limit: limit, maxBytes: maxBytes) }
    }

    /// `changeset(of:from:to:)`, read and diffed off the cooperative thread pool.
    public func changeset(of list: String, from version: Int, to otherVersion: Int? = nil) async throws
        -> (from: ListSnapshot, to: ListSnapshot, changeset: ListChangeset)
    {
        try await reading { try $0.changeset(of: list, from: version, to: otherVersion) }
    }

    package func _snapshotCountingReads(of list: String, at version: Int?) async throws -> (snapshot: ListSnapshot, entriesRead: Int) {
        try await reading { try $0.snapshot(of: try $0.listRow(list, locking: false), at: version) }
    }
}
