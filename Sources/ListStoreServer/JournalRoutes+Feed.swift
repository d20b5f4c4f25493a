import Hummingbird
import HTTPTypes
@_spi(FeedCursors) import ListStoreCore
import ListStoreWire
import NIOCore

// The store feed's routes: `GET /v1/changes` (long polls) and `GET /v1/events?lists=` (an event
// stream), the commits of many lists after one cursor.

extension JournalRoutes {
    /// What a feed request asks for: its lists, and where it starts.
    struct FeedQuery: Sendable {
        /// The lists the request follows: those the pattern matches that the token may read, under
        /// the access rules in force when asked (rules read again apply at once).
        var filter: FeedFilter
        /// Whether a list is one the request follows (`filter`'s answer).
        var includes: @Sendable (String) -> Bool { { [filter] in filter.includes($0) } }
        /// The position after which it reads (nil: from the oldest retained).
        var position: Int?
        /// The fingerprint of the event at `position`, as the cursor said (`nil`: not checked).
        var fingerprint: Int64?
        /// The store it reads (the cursors it answers are of it).
        var identity: StoreIdentity
        /// Whether its cursors are sealed (a user's: see `FeedCursorSeal`).
        var sealed: Bool
        /// What seals and opens them.
        var seal: FeedCursorSeal

        /// The cursor to answer at `position`, whose event has `fingerprint`.
        func cursor(at position: Int, fingerprint: Int64?) -> FeedCursor {
            seal.cursor(at: position, fingerprint: fingerprint, store: identity, sealed: sealed)
        }

        /// The pages a user's request reads past other lists' events before it answers without
        /// events (at most this × 8 × its limit events: one request's work stays bounded).
        static let pagesPastOthers = 32

        /// The page of the feed after `position`; for a user (sealed cursors), read on past pages
        /// without events of its lists, at most `pagesPastOthers` of them, so that its answer tells
        /// nothing of other lists (nor does its sealed cursor). Refused as `reading(_:)` refuses.
        func read(after position: Int?, fingerprint: Int64?, store: any ListStoreEngine, limit: Int) async throws -> FeedPage {
            try await reading {
                var page = try await store.feed(after: position, fingerprint: fingerprint, limit: limit, including: includes)
                var pages = 0
                while sealed, page.events.isEmpty, page.hasMore, pages < Self.pagesPastOthers {
                    page = try await store.feed(after: page.position, fingerprint: page.fingerprint, limit: limit, including: includes)
                    pages += 1
                }
                return page
            }
        }

        /// What an answer says of `hasMore`: for a user, only that its page is full (more of its
        /// own may follow), never that other lists' events lie ahead.
        func hasMore(_ page: FeedPage, limit: Int) -> Bool {
            sealed ? page.hasMore && page.events.count >= limit : page.hasMore
        }

        /// Runs a read of the feed at the request's cursor; for a user, a cursor that cannot be
        /// followed is refused with a message that names no feed position.
        func reading<T>(_ body: () async throws -> T) async throws -> T {
            do {
                return try await body()
            } catch {
                throw sealed ? FeedCursorSeal.forUser(error) : error
            }
        }
    }

    /// The seal of the store's feed cursors, read from the store once (every server of one store
    /// reads the same secret).
    func feedSeal() async throws -> FeedCursorSeal {
        if let seal = state.feedCursorSeal { return seal }
        let seal = FeedCursorSeal(secret: try await store.feedSecret())
        state.feedCursorSeal = seal
        return seal
    }

    /// The `lists` pattern and the cursor (`since`, or `lastEventID` when a stream resumes) of a
    /// feed request.
    /// - Throws: `APIError` 400 for a missing or malformed pattern (one beyond `ListPattern`'s
    ///   bounds among them) or cursor, 409 `cursorMismatch` for a cursor of another store or epoch.
    func feedQuery(_ request: Request, _ context: ServerRequestContext, lastEventID: String? = nil) async throws -> FeedQuery {
        let query = request.uri.queryParameters
        guard let text = query["lists"].map(String.init), !text.isEmpty else {
            throw APIError.invalidArgument("'lists' is required: a pattern of list names ('**' for all)")
        }
        let pattern: ListPattern
        do {
            pattern = try ListPattern(text)
        } catch {
            throw APIError.invalidArgument("'lists' is not a pattern of list names: \(error)")
        }
        guard pattern.claimNames.isEmpty else { throw APIError.invalidArgument("'lists' must not name claims ({…}): \(text)") }
        let identity = try await store.identity()
        let (state, token) = (state, Self.userToken(context))
        let seal = try await feedSeal()
        var point: (position: Int, fingerprint: Int64?)?
        // Both are checked, though a reconnecting client's Last-Event-ID wins.
        let asked = try query["since"].map { try FeedCursor(parsing: String($0)) }
        if let cursor = try lastEventID.map({ try FeedCursor(parsing: $0) }) ?? asked {
            guard cursor.store == identity else {
                throw APIError(
                    .conflict, "cursorMismatch",
                    "the cursor is of another store, or of this one before it was restored (epoch \(cursor.store.epoch), now \(identity.epoch)): follow again from the start, reading the lists anew")
            }
            // A user's cursors are sealed: one that is not was not this server's to them.
            point = try seal.open(cursor, sealedOnly: token != nil)
        }
        return FeedQuery(
            filter: FeedFilter(pattern: pattern, token: token, state: state), position: point?.position, fingerprint: point?.fingerprint,
            identity: identity, sealed: token != nil, seal: seal)
    }

    /// The store feed (`GET /v1/changes`): the commits of the lists `lists` (a pattern) names that
    /// the token may read, after the cursor `since` (default: from the oldest retained); with
    /// `wait`, an answer without events is held until one of those lists gets a commit. Lists
    /// created, or made readable, meanwhile are in it from their first commit on.
    func changes(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let query = request.uri.queryParameters
        let feed = try await feedQuery(request, context)
        let limit = try Self.integer(query["limit"], "limit") ?? 100
        guard limit >= 1, limit <= configuration.maxLimit else {
            throw APIError.invalidArgument("'limit' must be from 1 to \(configuration.maxLimit)")
        }
        let wait = try Self.integer(query["wait"], "wait") ?? 0
        guard wait >= 0, Duration.seconds(wait) <= configuration.maxWait else {
            throw APIError.invalidArgument("'wait' must be from 0 to \(configuration.maxWait.components.seconds) seconds")
        }
        var page = try await feed.read(after: feed.position, fingerprint: feed.fingerprint, store: store, limit: limit)
        if wait > 0, page.events.isEmpty, !page.hasMore {
            let slot = try streamSlot()
            defer { withExtendedLifetime(slot) {} }
            // A user's long poll ends when its token does: the client asks again with a fresh one.
            let deadline = ContinuousClock.now + min(Duration.seconds(wait), Self.lifetime(of: context) ?? .seconds(wait))
            let hangUp = HangUpWatch(context.channel)
            let (watcher, includes, user) = (watcher, feed.includes, Self.userToken(context) != nil)
            // A token the access rules no longer accept (read again meanwhile) gets its answer now.
            while page.events.isEmpty, !page.hasMore, ContinuousClock.now < deadline, !feed.filter.isRefused {
                let (seen, timeout, generation) = (page.position, deadline - ContinuousClock.now, user ? state.accessGeneration : nil)
                // A client that hangs up ends its wait, and frees its place, at once.
                let woken = await watcher.waitForFeed(includes: includes, after: seen, timeout: timeout, accessGeneration: generation, hangUp: hangUp)
                if hangUp.isClosed { break }
                if !woken {
                    if watcher.isClosed || Task.isCancelled { break }
                    continue
                }
                page = try await feed.read(after: page.position, fingerprint: page.fingerprint, store: store, limit: limit)
            }
            if feed.filter.isRefused { throw AccessMiddleware.unauthorized("the token is no longer accepted", invalidToken: true) }
        }
        return Self.json(
            WireDocument.changes(
                page.events, cursor: feed.cursor(at: page.position, fingerprint: page.fingerprint), hasMore: feed.hasMore(page, limit: limit),
                cursorAfter: { feed.cursor(at: $0.position, fingerprint: $0.fingerprint) }))
    }

    /// The store feed as Server-Sent Events (`GET /v1/events?lists=`): `id:` the cursor after the
    /// event, `event: commit` or `deleted`, `data:` the event; from `since` or the `Last-Event-ID` a
    /// reconnecting client sends; a keep-alive every interval of silence, which also carries the
    /// cursor past other lists' events. One stream however many lists it follows: it reads the feed
    /// (the reads at one position shared by every stream, `FeedPages`) and waits at its head in the
    /// watcher's table for a commit of one of its lists.
    func feedEvents(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let feed = try await feedQuery(request, context, lastEventID: request.headers[.lastEventID])
        let slot = try streamSlot()
        // Errors before the stream starts get a status (a cursor expired); the first page, read
        // for that, is the stream's first.
        let engine = store
        let first = try await feed.reading {
            try await engine.feed(after: feed.position, fingerprint: feed.fingerprint, limit: FeedPages.limit, including: feed.includes)
        }
        let (store, watcher, feedPages, includes, filter, logger, state) = (store, watcher, feedPages, feed.includes, feed.filter, context.logger, state)
        let cursor = { @Sendable (position: Int, fingerprint: Int64?) in feed.cursor(at: position, fingerprint: fingerprint) }
        /// A page as what the stream writes: each event framed with the cursor after it.
        let events = { @Sendable (page: FeedPage, at: FeedStreamCursor) -> EventStream<FeedStreamCursor>.Read in
            var bytes = ByteBuffer()
            for event in page.events { bytes.writeImmutableBuffer(Self.feedFrame(event, cursor: cursor(event.position, event.fingerprint))) }
            let fingerprint = page.position != at.position ? page.fingerprint : at.fingerprint
            return .events(bytes, after: FeedStreamCursor(position: page.position, fingerprint: fingerprint), hasMore: page.hasMore)
        }
        // A user's stream rests on the access rules in force: its lists are checked under the rules
        // in force (`filter`), and it ends when they no longer accept its token.
        let user = Self.userToken(context) != nil
        let start = FeedStreamCursor(position: first.position, fingerprint: first.fingerprint)
        let stream = EventStream<FeedStreamCursor>(
            first: events(first, start), start: start,
            read: { at in
                let readAt = store.commitGeneration()
                do {
                    return events(try await feedPages.page(after: at.position, generation: readAt).keeping(includes), at)
                } catch {
                    let error = feed.sealed ? FeedCursorSeal.forUser(error) : error
                    let api = APIError.from(error, logger: logger, storeLocation: store.location)
                    return .end(Self.errorEvent(code: api.code, message: api.message))
                }
            },
            wait: { at, timeout, generation, hangUp in
                await watcher.waitForFeed(includes: includes, after: at.position, timeout: timeout, accessGeneration: generation, hangUp: hangUp)
            },
            keepAlive: { at in
                // Past other lists' events, as far as the watcher read, so a reconnect need not read them.
                let moved = watcher.feedPosition(after: at.position, includes: includes)
                    .map { FeedStreamCursor(position: $0.position, fingerprint: $0.fingerprint) } ?? at
                return (Self.feedKeepAlive(cursor(moved.position, moved.fingerprint)), moved)
            },
            access: { filter.isRefused ? .refused : .allowed(user ? state.accessGeneration : nil) })
        // A user's stream ends when its token expires; the client reconnects with a fresh token
        // and resumes from its Last-Event-ID.
        return stream.response(
            channel: context.channel, slot: slot, watcher: watcher, state: state, identity: feed.identity,
            keepAliveInterval: configuration.keepAliveInterval, expiry: Self.lifetime(of: context).map { ContinuousClock.now + $0 })
    }

    /// Where a feed stream is: the position its client has every event up to, and the fingerprint
    /// of the event there.
    struct FeedStreamCursor: Sendable {
        var position: Int
        var fingerprint: Int64?
    }

    /// `event` as an event of a feed stream: `id:` the cursor after it (`cursor`), `event: commit`
    /// or `deleted`, `data:` `{"entry":{…},"list":…}` or `{"deleted":true,"list":…}`.
    /// - Complexity: O(size of the entry).
    static func feedFrame(_ event: FeedEvent, cursor: FeedCursor) -> ByteBuffer {
        var bytes = ByteBuffer(string: "id: \(cursor)\nevent: \(event.isDeletion ? "deleted" : "commit")\ndata: ")
        bytes.writeBytes(WireDocument.feedEvent(event))
        bytes.writeString("\n\n")
        return bytes
    }

    /// A keep-alive of a feed stream that also moves the client's cursor (`Last-Event-ID`) to
    /// `cursor`: events of other lists passed it, and a client that reconnects need not read them
    /// again. A user's is sealed anew each time, so that it looks the same whether or not other
    /// lists moved.
    static func feedKeepAlive(_ cursor: FeedCursor) -> ByteBuffer {
        ByteBuffer(string: ": keep-alive\nid: \(cursor)\n\n")
    }
}
