// The store feed: every commit of every list, at store-wide positions given in commit order.

extension StoreTransaction {
    /// The events after `position` (`nil`: from the oldest retained) of the lists `including`
    /// accepts, oldest first: at most `limit`, reading at most `limit` × 8 events past `position`
    /// (at least 256) in all, so that a page of a few lists in a busy store stays bounded.
    ///
    /// With `fingerprint` (the one a cursor at `position` carries), the event the feed holds at
    /// `position` must have it: a store restored from a backup without `advanceEpoch()` hands
    /// positions out again to other events, and a cursor of its former history is told apart.
    ///
    /// - Throws: `StoreError` `.cursorExpired` for a position older than the feed's base (a list's
    ///   journal was pruned past it) or past its last position; `.cursorOfAnotherHistory` for one
    ///   whose event is not the cursor's; `.invalidArgument` for a negative limit.
    /// - Complexity: O(events read).
    package func feedPage(after position: Int?, fingerprint: Int64? = nil, limit: Int, including: (String) -> Bool) throws -> FeedPage {
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
        if let fingerprint, let start = position, start > base, let held = try feedFingerprint(at: start), held != fingerprint {
            throw StoreError(
                .cursorOfAnotherHistory,
                "feed position \(start) holds another event than the cursor's: the cursor is of another history of this store (restored from a backup without advance-epoch): read the lists anew")
        }
        var page = FeedPage(events: [], position: start, hasMore: false, fingerprint: position == nil ? nil : fingerprint)
        var budget = max(limit * 8, 256)
        while page.events.count < limit, budget > 0, page.position < last {
            let read = try feedEvents(after: page.position, limit: min(budget, 256))
            guard !read.isEmpty else {
                // The rest up to the last position was forgotten (pruned), or is of deleted lists.
                page.position = last
                page.fingerprint = try feedFingerprint(at: last)
                break
            }
            budget -= read.count
            for event in read {
                page.position = event.position
                page.fingerprint = event.fingerprint
                if including(event.list) {
                    page.events.append(event)
                    if page.events.count == limit { break }
                }
            }
        }
        page.hasMore = page.position < last
        if let position, page.position == position, page.fingerprint == nil {
            // Nothing read past the start: its fingerprint is still the cursor's to carry.
            page.fingerprint = try feedFingerprint(at: position)
        }
        return page
    }

    /// Deletes `list` (every row of it) and records its deletion in the store feed; the name may
    /// then be used again by a new list, whose versions start at 1. Returns the version it had.
    /// Unless `discardingPending`, a replica list with local changes (pending, or pushed and not
    /// yet confirmed) is refused with `.pendingChanges`.
    /// - Throws: `StoreError` `.listNotFound`, `.pendingChanges`.
    /// - Complexity: O(rows of the list).
    package func deleteList(_ list: String, discardingPending: Bool) throws -> Int {
        let info = try listRow(list, locking: true)
        if !discardingPending {
            let (pending, pushed) = try outboxCounts(listID: info.id)
            let count = pending + pushed
            if count > 0 {
                throw StoreError(
                    .pendingChanges,
                    "list '\(list)' has \(count) local change\(count == 1 ? "" : "s") its source does not hold yet: push "
                        + "\(count == 1 ? "it" : "them") first, or delete with --discard-pending to lose \(count == 1 ? "it" : "them")")
            }
        }
        // The deletion's event names the list's identity (read from its row: written first).
        try appendFeed(listID: info.id, list: list, version: info.headVersion, deleted: true)
        try releaseBlobs(listID: info.id)
        try deleteRows(of: info)
        try announce(nil, of: list)
        return info.headVersion
    }
}
