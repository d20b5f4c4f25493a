extension StoreDriver {
    /// The store feed: every commit of every list of the store (or of the lists `including`
    /// accepts), oldest first, each at a store-wide position, after `position` (default: from the
    /// oldest the store retains). Positions grow in the order commits land, on every engine and
    /// with writers in several processes, so a follower that reads on after each page's
    /// `position` gets every commit once, and never one out of its list's order.
    ///
    /// ```swift
    /// var cursor = 0
    /// while true {
    ///     let page = try await store.feed(after: cursor, including: { $0.hasPrefix("users/ana/") })
    ///     for event in page.events { print(event.list, event.entry.version) }
    ///     cursor = page.position
    ///     if !page.hasMore { await store.waitForCommit(after: seen, timeout: .seconds(30)) }
    /// }
    /// ```
    ///
    /// Pruning a list's journal forgets its events: a position older than the feed's base then
    /// throws `.cursorExpired`, and the follower reads the lists it keeps anew (their snapshots),
    /// then follows on from the feed's position at that time.
    ///
    /// - Parameters:
    ///   - position: the position read last (`nil` or 0 at first).
    ///   - fingerprint: the fingerprint of the event at `position`, as the page that reached it
    ///     said (`FeedPage.fingerprint`): a store restored from a backup without `advanceEpoch()`
    ///     tells a position of its former history (`.cursorOfAnotherHistory`). `nil`: not checked.
    ///   - limit: the most events returned (default 100).
    ///   - including: which lists' events to return; the page's `position` passes the others.
    /// - Throws: `StoreError` `.cursorExpired` (older than the retained feed, or past its end: of
    ///   another store, or of this one before a restore), `.invalidArgument` (a negative limit),
    ///   `.storeNotFound`, `.damaged`, `.io`.
    /// - Complexity: O(events read): at most `limit` × 8 (at least 256) past `position`.
    public func feed(
        after position: Int? = nil, fingerprint: Int64? = nil, limit: Int = 100,
        including: @escaping @Sendable (String) -> Bool = { _ in true }
    ) async throws -> FeedPage {
        try await run(.read) { try $0.steps.feedPage(after: position, fingerprint: fingerprint, limit: limit, including: including) }
    }

    @_spi(FeedCursors) public func feedMoves(after position: Int?, limit: Int) async throws -> (moves: [FeedMove], last: Int) {
        try await run(.read) { transaction in
            let last = try transaction.steps.feedBounds().last
            return (try position.map { try transaction.steps.feedMoves(after: $0, limit: limit) } ?? [], last)
        }
    }

    @_spi(FeedCursors) public func feedSecret() async throws -> [UInt8] {
        try await run(.read) { try $0.steps.feedSecret() }
    }

    /// Deletes `list`: its rows, head, journal, stored snapshots, consumers, recorded pushes,
    /// replica position and outbox go in one transaction, and the store feed records the deletion
    /// (a ``FeedEvent`` without an entry). The name may then be used again by a new list, whose
    /// versions start at 1; a follower of the feed gets the deletion before the new list's commits.
    /// A replica list whose local changes its source does not hold yet is refused
    /// (`.pendingChanges`, naming how many: nothing is deleted) unless `discardingPending`.
    ///
    /// ```swift
    /// let last = try await store.deleteList("users/ana/old", discardingPending: false)   // the version it had
    /// ```
    /// - Returns: the version the list had.
    /// - Throws: `StoreError` `.listNotFound`, `.pendingChanges`, `.storeNotFound`, `.damaged`, `.io`.
    /// - Complexity: O(rows of the list).
    @discardableResult
    public func deleteList(_ list: String, discardingPending: Bool) async throws -> Int {
        try await run(.write) { try $0.steps.deleteList(list, discardingPending: discardingPending) }
    }
}
