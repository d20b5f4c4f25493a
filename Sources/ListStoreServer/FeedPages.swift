import ListStoreCore

/// The pages of the store feed being read for its event streams (`GET /v1/events?lists=`), shared
/// by the streams reading after the same position: each stream keeps the events of its own lists
/// (`FeedPage.keeping(_:)`), so the streams a commit wakes at one position cost one read, whatever
/// lists each follows.
///
/// ```swift
/// let page = try await feedPages.page(after: position, generation: store.commitGeneration()).keeping(includes)
/// ```
struct FeedPages: Sendable {
    /// What identifies a read: its position, and the commit generation read before it (a read that
    /// started before a commit the store learned of is not one to join after it).
    struct Key: Hashable, Sendable {
        var position: Int
        var generation: UInt64
    }

    /// The most events of one page.
    static let limit = 100

    let store: any ListStoreEngine
    private let reads = SharedReads<Key, FeedPage>()

    init(store: any ListStoreEngine) {
        self.store = store
    }

    /// The page of the feed after `position`, every list's, read once for the streams asking at
    /// `generation` (the store's commit generation read before asking).
    /// - Throws: `StoreError` of the read (`.cursorExpired` for a position the feed no longer holds).
    func page(after position: Int, generation: UInt64) async throws -> FeedPage {
        let store = store
        return try await reads.value(for: Key(position: position, generation: generation)) {
            try await store.feed(after: position, fingerprint: nil, limit: Self.limit, including: { _ in true })
        }
    }
}

extension FeedPage {
    /// The page with the events of the lists `includes` accepts alone; its position and whether
    /// more follows are the page's.
    func keeping(_ includes: (String) -> Bool) -> FeedPage {
        var page = self
        page.events.removeAll { !includes($0.list) }
        return page
    }
}
