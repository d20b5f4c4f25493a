/// One event of the store feed (``ListStoreEngine/feed(after:fingerprint:limit:including:)``): a commit of a list,
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
    /// The identity of the list committed to, or deleted (`ListSummary.id`): a list made anew under
    /// the name of a deleted one has another. `nil` from a source that does not tell (and for events
    /// written before lists had one).
    public var listID: String?
    /// A random number the store drew for this event when it wrote it: with its position, it names
    /// the event in this history of the store alone. A cursor carries it, so that a store restored
    /// from a backup without `advanceEpoch()`, which hands the position out again to another event,
    /// tells the cursor is of its former history. `nil` for events written before events had one,
    /// and from a source that does not tell.
    public var fingerprint: Int64?

    /// Whether the event is the list's deletion.
    public var isDeletion: Bool { entry == nil }

    /// An event. - Complexity: O(1).
    public init(position: Int, list: String, entry: JournalEntry?, listID: String? = nil) {
        self.listID = listID
        self.position = position
        self.list = list
        self.entry = entry
    }
}

extension FeedEvent {
    /// A new event's fingerprint: random, never 0.
    package static func newFingerprint() -> Int64 {
        var random = SystemRandomNumberGenerator()
        while true {
            let value = Int64(bitPattern: random.next())
            if value != 0 { return value }
        }
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
    /// The fingerprint of the event at `position` (see `FeedEvent.fingerprint`), for the cursor that
    /// resumes after it; `nil` when the feed cannot tell (at its start, or an event without one).
    public var fingerprint: Int64?

    /// A page. - Complexity: O(1).
    public init(events: [FeedEvent], position: Int, hasMore: Bool, fingerprint: Int64? = nil) {
        self.fingerprint = fingerprint
        self.events = events
        self.position = position
        self.hasMore = hasMore
    }
}

/// What one event of the store feed did to its list's head, without the entry: the list, and the
/// version it moved to (`nil`: the list was deleted). What a journal server's watcher reads after
/// each commit to wake the requests waiting for those lists, at a cost that follows the commits.
@_spi(FeedCursors)
public struct FeedMove: Sendable, Hashable {
    /// The event's position in the feed.
    public var position: Int
    /// The list's name.
    public var list: String
    /// The version the list moved to; `nil` for a deletion.
    public var version: Int?
    /// The event's fingerprint (see `FeedEvent.fingerprint`): what a cursor at `position` carries.
    public var fingerprint: Int64?

    /// A move. - Complexity: O(1).
    public init(position: Int, list: String, version: Int?, fingerprint: Int64? = nil) {
        self.position = position
        self.list = list
        self.version = version
        self.fingerprint = fingerprint
    }
}
