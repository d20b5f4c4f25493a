import ListStore
import ListStoreWire

/// A source that answers its store feed: every commit of many lists after one cursor (the
/// `GET /v1/changes` and `GET /v1/events?lists=` of a server, or a store of this process). What
/// `ReplicaSet` follows.
///
/// ```swift
/// let source = try HTTPSource("https://lists.example.com", token: token)
/// let page = try await source.changes(of: ListPattern("users/ana/**"), after: nil, limit: 100, wait: .zero)
/// for change in page.changes { print(change.event?.list ?? "-", change.cursor) }
/// ```
public protocol FeedSource: ListSource {
    /// The source's lists that `pattern` names (and, on a server, that the token may read).
    /// - Throws: `SyncError`, `StoreError`.
    func lists(matching pattern: ListPattern) async throws -> [ListSummary]

    /// The events after `cursor` (nil: from the oldest retained) of the lists `pattern` names, at
    /// most `limit`; with `wait`, an answer without events is held until one comes or it passes.
    /// - Throws: `StoreError` `.cursorExpired` for a cursor older than the retained feed;
    ///   `SyncError.resyncRequired` for a cursor of another store or epoch; `SyncError` of the
    ///   transport.
    func changes(of pattern: ListPattern, after cursor: FeedCursor?, limit: Int, wait: Duration) async throws -> FeedChanges

    /// Every event after `cursor` of the lists `pattern` names, then each new one as it lands,
    /// until the task is cancelled or the connection ends (the stream then throws, transiently).
    /// A change without an event moves the cursor past other lists' events.
    func followChanges(of pattern: ListPattern, after cursor: FeedCursor?) -> AsyncThrowingStream<FeedChange, any Error>
}

/// One event of a source's feed, with the cursor just after it; or only a cursor (`event` nil), past
/// events of other lists.
public struct FeedChange: Sendable, Hashable {
    /// The commit or deletion; nil when the source only moved the cursor on.
    public var event: FeedEvent?
    /// Where a follower that applied it resumes.
    public var cursor: FeedCursor

    /// A change as a source answers it.
    public init(event: FeedEvent?, cursor: FeedCursor) {
        self.event = event
        self.cursor = cursor
    }
}

/// A page of a source's feed.
public struct FeedChanges: Sendable, Hashable {
    /// The events, oldest first, each with its cursor.
    public var changes: [FeedChange]
    /// Where the page ends (past other lists' events too).
    public var cursor: FeedCursor
    /// Whether more events follow at once.
    public var hasMore: Bool

    /// A page as a source answers it.
    public init(changes: [FeedChange], cursor: FeedCursor, hasMore: Bool) {
        self.changes = changes
        self.cursor = cursor
        self.hasMore = hasMore
    }
}

extension FeedSource {
    /// Long polls of `changes(of:after:limit:wait:)`, 30 seconds each: what a source without an
    /// event stream follows with.
    public func followChanges(of pattern: ListPattern, after cursor: FeedCursor?) -> AsyncThrowingStream<FeedChange, any Error> {
        pollingChanges(of: pattern, after: cursor, wait: .seconds(30))
    }

    func pollingChanges(of pattern: ListPattern, after start: FeedCursor?, wait: Duration) -> AsyncThrowingStream<FeedChange, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: FeedChange.self)
        let task = Task {
            do {
                var cursor = start
                while !Task.isCancelled {
                    let page = try await changes(of: pattern, after: cursor, limit: 100, wait: wait)
                    for change in page.changes { continuation.yield(change) }
                    if page.changes.isEmpty, page.cursor != cursor { continuation.yield(FeedChange(event: nil, cursor: page.cursor)) }
                    cursor = page.cursor
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }
}

extension LocalSource: FeedSource {
    public func lists(matching pattern: ListPattern) async throws -> [ListSummary] {
        try await store.lists().filter { pattern.matches($0.name) }
    }

    public func changes(of pattern: ListPattern, after cursor: FeedCursor?, limit: Int, wait: Duration) async throws -> FeedChanges {
        let identity = try await store.identity()
        if let cursor, cursor.store != identity {
            throw SyncError.resyncRequired(
                cursor.store.uuid == identity.uuid ? .epochChanged : .differentStore,
                message: "the feed cursor is of store \(cursor.store.uuid) epoch \(cursor.store.epoch), the source is \(identity.uuid) epoch \(identity.epoch)")
        }
        let deadline = ContinuousClock.now + wait
        var generation = store.commitGeneration()
        let point = cursor?.point
        if let cursor, point == nil {
            throw SyncError.resyncRequired(.differentStore, message: "the feed cursor was sealed by a server: \(cursor.place.prefix(16))…")
        }
        var page = try await store.feed(
            after: point?.position, fingerprint: point?.fingerprint, limit: limit, including: { pattern.matches($0) })
        while page.events.isEmpty, !page.hasMore, ContinuousClock.now < deadline, !Task.isCancelled {
            await store.waitForCommit(after: generation, timeout: min(pollInterval, deadline - ContinuousClock.now))
            generation = store.commitGeneration()
            page = try await store.feed(
                after: page.position, fingerprint: page.fingerprint, limit: limit, including: { pattern.matches($0) })
        }
        return FeedChanges(
            changes: page.events.map {
                FeedChange(event: $0, cursor: FeedCursor(store: identity, position: $0.position, fingerprint: $0.fingerprint))
            },
            cursor: FeedCursor(store: identity, position: page.position, fingerprint: page.fingerprint), hasMore: page.hasMore)
    }
}
