// The store feed: every commit of every list, at store-wide positions given in commit order.

extension StoreTransaction {
    /// The events after `position` (`nil`: from the oldest retained) of the lists `including`
    /// accepts, oldest first: at most `limit`, reading at most `limit` × 8 events past `position`
    /// (at least 256) in all, so that a page of a few lists in a busy store stays bounded.
    ///
    /// - Throws: `StoreError` `.cursorExpired` for a position older than the feed's base (a list's
    ///   journal was pruned past it) or past its last position; `.invalidArgument` for a negative
    ///   limit.
    /// - Complexity: O(events read).
    package func feedPage(after position: Int?, limit: Int, including: (String) -> Bool) throws -> FeedPage {
        guard limit >= 0 else { throw StoreError(.invalidArgument, "a feed page's limit must not be negative, not \(limit)") }
        let (base, last) = try feedBounds()
        let start = position ?? base
        guard start >= base, start <= last else {
            throw StoreError(
                .cursorExpired,
                start < base
                    ? "feed position \(start) is older than the feed this store retains (from \(base) on): read the lists anew"
                    : "feed position \(start) is past the feed's last position (\(last)): it is of another store, or of this one before a restore")
        }
        var page = FeedPage(events: [], position: start, hasMore: false)
        var budget = max(limit * 8, 256)
        while page.events.count < limit, budget > 0, page.position < last {
            let read = try feedEvents(after: page.position, limit: min(budget, 256))
            guard !read.isEmpty else {
                // The rest up to the last position was forgotten (pruned).
                page.position = last
                break
            }
            budget -= read.count
            for event in read {
                page.position = event.position
                if including(event.list) {
                    page.events.append(event)
                    if page.events.count == limit { break }
                }
            }
        }
        page.hasMore = page.position < last
        return page
    }

    /// Deletes `list` (every row of it) and records its deletion in the store feed; the name may
    /// then be used again by a new list, whose versions start at 1. Returns the version it had.
    /// - Throws: `StoreError` `.listNotFound`.
    /// - Complexity: O(rows of the list).
    package func deleteList(_ list: String) throws -> Int {
        let info = try listRow(list, locking: true)
        try deleteRows(of: info)
        try appendFeed(listID: info.id, list: list, version: info.headVersion, deleted: true)
        try announce(nil, of: list)
        return info.headVersion
    }
}
