// Paged reads that stay at their version while commits land (ListStoreCore's article "Lists of Any
// Size"), for drivers that can keep a state of the store (`_PinnedVersions`).
extension StoreDriver {
    /// `page(of:at:after:maxBytes:)` for a driver that keeps pins: a page of a version pinned is
    /// read in its pin while the list of that name is still the one pinned (a list deleted since,
    /// or deleted and made again, is read at the head: `listNotFound`, or the new list's page);
    /// a first page of a list larger than one page pins the state it is read in
    /// (once per version: `pin()` makes one, where the first page is read again only when the head
    /// has moved on meanwhile, or the list was made again); everything else is read at the head.
    /// - Throws: as `page(of:at:after:maxBytes:)`; what `pin()` throws.
    /// - Complexity: that of a page, plus a read of the list's row at the head for a page of a
    ///   version a pin is kept for, and a pin made for the first page of a version not pinned yet.
    package func page<Pin>(
        of list: String, at version: Int?, after cursor: ListPage.Cursor?, maxBytes: Int, pins: _PinnedVersions<Pin>,
        pin: @Sendable () async throws -> Pin,
        reading: @Sendable (Pin, @escaping @Sendable (any StoreTransaction) throws -> ListPage) async throws -> ListPage
    ) async throws -> ListPage {
        if let version, pins.holds(list, at: version),
            let current = try? await run(.read, { try $0.steps.listRow(list, locking: false).uid }),
            let kept = pins.pin(of: list, at: version, listID: current)
        {
            return try await reading(kept) { try $0.page(of: list, at: version, after: cursor, maxBytes: maxBytes) }
        }
        let page = try await run(.read) { try $0.steps.page(of: list, at: version, after: cursor, maxBytes: maxBytes) }
        guard cursor == nil, version == nil, page.next != nil else { return page }
        if pins.pin(of: list, at: page.version, listID: page.listID) != nil { return page }
        // The state pinned is the page's version unless a commit landed meanwhile: then its first
        // page is read again there.
        let made = try await pin()
        let pinned = try await reading(made) { steps in
            let row = try steps.listRow(list, locking: false)
            return row.headVersion == page.version && row.uid == page.listID
                ? page : try steps.page(of: list, at: nil, after: nil, maxBytes: maxBytes)
        }
        if pinned.next != nil { _ = pins.keep(made, of: list, at: pinned.version, listID: pinned.listID) }
        return pinned
    }
}
