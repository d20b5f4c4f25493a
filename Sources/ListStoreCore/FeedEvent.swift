/// One event of the store feed (``ListStoreEngine/feed(after:limit:including:)``): a commit of a list,
/// or its deletion, at its store-wide position.
///
/// ```swift
/// for event in try await store.feed(after: cursor).events {
///     if let entry = event.entry { print(event.position, event.list, entry.version) } else { print(event.list, "deleted") }
/// }
/// ```
public struct FeedEvent: Sendable, Hashable {
    /// The event's place in the store feed: positions grow in the order commits land, across every
    /// list of the store.
    public var position: Int
    /// The list committed to, or deleted.
    public var list: String
    /// The commit's journal entry; `nil` when the list was deleted (its name may then be used again
    /// by a new list, whose versions start at 1).
    public var entry: JournalEntry?

    /// Whether the event is the list's deletion.
    public var isDeletion: Bool { entry == nil }

    /// An event. - Complexity: O(1).
    public init(position: Int, list: String, entry: JournalEntry?) {
        self.position = position
        self.list = list
        self.entry = entry
    }
}

/// A page of the store feed: its events, the position to read on after, and whether more follow.
///
/// ```swift
/// var cursor = 0
/// repeat {
///     let page = try await store.feed(after: cursor)
///     for event in page.events { apply(event) }
///     cursor = page.position
/// } while page.hasMore
/// ```
public struct FeedPage: Sendable, Hashable {
    /// The events after the position asked for, oldest first (only those of the lists asked for).
    public var events: [FeedEvent]
    /// The position the page reaches: read on after it. It may pass events of lists not asked for,
    /// so it is not always the last event's.
    public var position: Int
    /// Whether the feed holds events past `position` already.
    public var hasMore: Bool

    /// A page. - Complexity: O(1).
    public init(events: [FeedEvent], position: Int, hasMore: Bool) {
        self.events = events
        self.position = position
        self.hasMore = hasMore
    }
}
