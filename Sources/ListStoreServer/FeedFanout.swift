import ListStoreCore
import ListStoreWire
import NIOCore
import NIOHTTPTypes

/// Writes each new page of the store feed to every feed event stream (`GET /v1/events?lists=`) at
/// the feed's head, reading the page once for all of them: each stream's lists (a pattern, and what
/// its token may read) choose which of the page's events it is written, and each event is framed once.
/// A follower costs an entry in a table and a check of its lists per event, not a read of the store.
///
/// As with `EventFanout`, a stream writes its backlog itself, through Hummingbird's writer, then
/// hands itself over with `follow(after:includes:connection:keepAlive:)`, which returns when the
/// stream must take over again: its connection could not take more, a read failed, its keep-alive
/// interval passed with nothing written, or the server is shutting down. Only one of the two writes
/// to a connection at a time, so its events are in order. A user's stream rests on the access rules
/// in force when it checked them: when they change (`accessChanged()`), it is handed back before
/// anything more is written to it, and checks its token again (its lists are checked at once:
/// `FeedFilter` asks the rules in force).
///
/// `HeadWatcher` drives it: each time the store may have a new commit (a commit signal, or its poll
/// interval), `poke()` starts a delivery for the streams waiting at each position; its timer ends
/// the quiet ones (`expire()`).
///
/// ```swift
/// switch await feedFanout.follow(after: position, includes: includes, connection: connection, keepAlive: keepAlive) {
/// case .behind(let at): position = at            // read on from there
/// case .quiet(let at, let fingerprint): position = at; try await writer.write(keepAlive(cursor(at, fingerprint)))
/// case .ended: return
/// }
/// ```
///
/// Complexity: a delivery costs one read of a feed page (at most `pageLimit` events), the framing
/// of its events, and O(events × followers) checks of which follower takes which event, each a
/// look-up once the follower met the event's list (`FeedFilter` keeps its answers): one follower's
/// pattern, however costly within `ListPattern`'s bounds, is matched once per list, not per event.
final class FeedFanout: Sendable {
    /// Why `follow` returned; the stream's connection has every event of its lists up to `position`.
    enum Wake: Sendable, Equatable {
        /// The stream reads on from `position` itself.
        case behind(position: Int)
        /// Nothing was written for the keep-alive interval (`fingerprint`: the event's at `position`).
        case quiet(position: Int, fingerprint: Int64?)
        /// The server is shutting down or the task was cancelled.
        case ended
    }

    /// A page of the feed as events of a stream, each framed once (but for its cursor, which is
    /// each stream's own: a user's is sealed for it).
    struct Page: Sendable {
        /// Each event's list, position and fingerprint, and its frame after the `id:` line
        /// (`event:`, `data:`).
        var frames: [(list: String, position: Int, fingerprint: Int64?, bytes: ByteBuffer)]
        /// Where the page ends (the position a follower is at once written it).
        var position: Int
        /// The fingerprint of the event at `position`.
        var fingerprint: Int64?
        var hasMore: Bool
    }

    /// Writes the cursor a stream's client resumes from, after the event at a position with a
    /// fingerprint (sealed for a user's stream, see `FeedCursorSeal`).
    typealias CursorWriter = @Sendable (_ position: Int, _ fingerprint: Int64?) -> FeedCursor

    private struct Follower: Sendable {
        var id: UInt64
        var position: Int
        var fingerprint: Int64?
        var includes: @Sendable (String) -> Bool
        var cursor: CursorWriter
        var deadline: ContinuousClock.Instant
        var keepAlive: Duration
        /// The generation of the access rules the stream rests on (`nil`: the service token's).
        var accessGeneration: UInt64?
        var connection: EventStreamConnection
        var channel: any Channel { connection.channel }
        var continuation: CheckedContinuation<Wake, Never>

        /// Whether the access rules changed since the stream checked them (`generation`: those in force).
        func isStale(_ generation: UInt64) -> Bool { accessGeneration.map { $0 != generation } ?? false }
    }

    private struct State {
        var waiting: [UInt64: Follower] = [:]
        var nextID: UInt64 = 0
        var cancelled: Set<UInt64> = []
        var closed = false
        var deliveries = 0
        /// The positions whose feed is being read for the streams waiting there, and whether a
        /// poke came meanwhile (read again).
        var checking: [Int: Bool] = [:]
    }

    /// The most events of one page.
    static let pageLimit = 100

    /// What identifies a read of a page: its position, and the commit generation read before it (a
    /// read that started before a commit the store learned of is not one to join after it).
    private struct PageKey: Hashable, Sendable {
        var position: Int
        var generation: UInt64
    }

    /// The pages being read, shared by the checks and deliveries at the same position and generation.
    private let pages = SharedReads<PageKey, Page>()
    private let store: any ListStoreEngine
    private let serverState: ServerState
    private let state = _Locked(State())

    init(store: any ListStoreEngine, state: ServerState) {
        self.store = store
        serverState = state
    }

    /// `event` as an event of a stream: `id:` the cursor after it (`cursor`), `event: commit` or
    /// `deleted`, `data:` `{"entry":{…},"list":…}` or `{"deleted":true,"list":…}`.
    /// - Complexity: O(size of the entry).
    static func frame(_ event: FeedEvent, cursor: FeedCursor) -> ByteBuffer {
        var bytes = ByteBuffer(string: "id: \(cursor)\n")
        bytes.writeImmutableBuffer(body(event))
        return bytes
    }

    /// `event`'s frame after its `id:` line.
    static func body(_ event: FeedEvent) -> ByteBuffer {
        var bytes = ByteBuffer()
        bytes.writeString("event: \(event.isDeletion ? "deleted" : "commit")\ndata: ")
        bytes.writeBytes(WireDocument.feedEvent(event))
        bytes.writeString("\n\n")
        return bytes
    }

    /// A keep-alive that also moves the client's cursor (`Last-Event-ID`) to `cursor`: events of
    /// other lists passed it, and a client that reconnects need not read them again. A user's is
    /// sealed anew each time, so that it looks the same whether or not other lists moved.
    static func keepAlive(_ cursor: FeedCursor) -> ByteBuffer {
        ByteBuffer(string: ": keep-alive\nid: \(cursor)\n\n")
    }

    /// Hands the stream on `connection`, whose client has every event of its lists (those
    /// `includes` accepts) up to `position`, to the fan-out until it must take over again. `readAt`
    /// is the store's commit generation before the stream's last read: when a commit landed since,
    /// it returns `.behind` at once (the poke of that commit may have come before the stream waited),
    /// as when the access rules in force are no longer of `accessGeneration`, the generation the
    /// stream of a user's token rests on (`nil` for the service token's).
    func follow(
        after position: Int, fingerprint: Int64?, includes: @escaping @Sendable (String) -> Bool, cursor: @escaping CursorWriter,
        connection: EventStreamConnection, keepAlive: Duration, readAt: UInt64, accessGeneration: UInt64? = nil
    ) async -> Wake {
        let id = state.withLock { state -> UInt64 in
            state.nextID &+= 1
            return state.nextID
        }
        defer { state.withLock { _ = $0.cancelled.remove(id) } }
        let deadline = ContinuousClock.now + keepAlive
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Wake, Never>) in
                let wake = state.withLock { state -> Wake? in
                    guard !state.closed, !state.cancelled.contains(id) else { return .ended }
                    if store.commitGeneration() != readAt { return .behind(position: position) }
                    if let accessGeneration, serverState.accessGeneration != accessGeneration { return .behind(position: position) }
                    state.waiting[id] = Follower(
                        id: id, position: position, fingerprint: fingerprint, includes: includes, cursor: cursor, deadline: deadline,
                        keepAlive: keepAlive, accessGeneration: accessGeneration, connection: connection, continuation: continuation)
                    return nil
                }
                if let wake { continuation.resume(returning: wake) }
            }
        } onCancel: {
            let follower = state.withLock { state in
                let follower = state.waiting.removeValue(forKey: id)
                if follower == nil { state.cancelled.insert(id) }
                return follower
            }
            follower?.continuation.resume(returning: .ended)
        }
    }

    /// How many streams wait at the head (not those a delivery holds).
    var waitingCount: Int { state.withLock { $0.waiting.count } }

    /// Whether `close()` was called (and `open()` not since).
    var isClosed: Bool { state.withLock { $0.closed } }

    /// Starts a delivery for the streams waiting at each position: the store may have new commits.
    func poke() {
        let positions = state.withLock { state -> [Int] in
            var start: [Int] = []
            for position in Set(state.waiting.values.map(\.position)) {
                if state.checking[position] != nil {
                    state.checking[position] = true  // read again when the check under way ends
                } else {
                    state.checking[position] = false
                    start.append(position)
                }
            }
            return start
        }
        for position in positions {
            Task { await self.check(after: position) }
        }
    }

    /// Reads the feed after `start` and, when it has new events, delivers them to the streams
    /// waiting at `start`; the streams are not touched when nothing is new (a poke after a commit
    /// of another store, or of the poll interval).
    private func check(after start: Int) async {
        while true {
            let generation = store.commitGeneration()
            let read: Page
            do {
                read = try await self.page(after: start, generation: generation)
            } catch {
                // The streams read themselves and report what they find (a cursor expired).
                let followers = state.withLock { state -> [Follower] in
                    let taken = state.waiting.values.filter { $0.position == start }
                    for follower in taken { state.waiting[follower.id] = nil }
                    return taken
                }
                handBack(followers, .behind(position: start))
                state.withLock { _ = $0.checking.removeValue(forKey: start) }
                return
            }
            if read.position > start {
                let followers = state.withLock { state -> [Follower] in
                    let taken = state.waiting.values.filter { $0.position == start }
                    for follower in taken { state.waiting[follower.id] = nil }
                    state.deliveries += 1
                    return taken
                }
                await deliver(after: start, to: followers, first: read, readAt: generation)
            } else if store.commitGeneration() != generation {
                continue  // a commit landed during the read: it may not be in it
            }
            let again = state.withLock { state -> Bool in
                if state.checking[start] == true {
                    state.checking[start] = false
                    return true
                }
                state.checking[start] = nil
                return false
            }
            if !again { return }
        }
    }

    /// Writes the pages after `start` (the first already read, after the commit generation `readAt`)
    /// to `followers` until they reach the feed's head, then hands them back to `waiting` (or to
    /// their streams, see `Wake`).
    private func deliver(after start: Int, to delivered: [Follower], first: Page, readAt: UInt64) async {
        defer { state.withLock { $0.deliveries -= 1 } }
        var position = start
        var followers = delivered
        var emptyReads = 0
        var read: Page? = first
        while !followers.isEmpty {
            let generation = read == nil ? store.commitGeneration() : readAt
            let page: Page
            do {
                if let first = read {
                    page = first
                    read = nil
                } else {
                    page = try await self.page(after: position, generation: generation)
                }
            } catch {
                // Each stream reads again and reports what it finds (a cursor expired meanwhile).
                handBack(followers, .behind(position: position))
                return
            }
            guard page.position > position else {
                // Nothing new. A commit the store learned of during the read may not be in it: read
                // again (a few times; then the next poke brings them back).
                emptyReads += 1
                let again = emptyReads < 3 && store.commitGeneration() != generation
                followers = requeue(followers, at: position, fingerprint: nil, goOn: again)
                continue
            }
            emptyReads = 0
            followers = await write(page, to: followers, from: position)
            position = page.position
            // At the head: read on when a commit landed since the read began (its poke found these
            // streams held by this delivery).
            if !page.hasMore {
                followers = requeue(followers, at: position, fingerprint: page.fingerprint, goOn: store.commitGeneration() != generation)
            }
        }
    }

    /// The feed page after `position`, every list's events, framed.
    private func page(after position: Int, generation: UInt64) async throws -> Page {
        let store = store
        return try await pages.value(for: PageKey(position: position, generation: generation)) {
            let page = try await store.feed(after: position, fingerprint: nil, limit: Self.pageLimit, including: { _ in true })
            return Page(
                frames: page.events.map { ($0.list, $0.position, $0.fingerprint, Self.body($0)) }, position: page.position,
                fingerprint: page.fingerprint, hasMore: page.hasMore)
        }
    }

    /// Writes to each follower the events of `page` it takes, from its connection's event loop;
    /// returns those that are now at the page's end, and hands the others (a connection closed or
    /// unable to take more, or a stream whose access rules changed since it checked them) back to
    /// their streams at `start`.
    private func write(_ page: Page, to followers: [Follower], from start: Int) async -> [Follower] {
        var byLoop = [ObjectIdentifier: [(Follower, ByteBuffer)]]()
        var moved = [Follower]()
        let generation = serverState.accessGeneration
        handBack(followers.filter { $0.isStale(generation) }, .behind(position: start))
        for follower in followers where !follower.isStale(generation) {
            var bytes = ByteBuffer()
            for frame in page.frames where follower.includes(frame.list) {
                bytes.writeString("id: \(follower.cursor(frame.position, frame.fingerprint))\n")
                bytes.writeImmutableBuffer(frame.bytes)
            }
            if bytes.readableBytes == 0 {
                moved.append(follower)
            } else {
                byLoop[ObjectIdentifier(follower.channel.eventLoop), default: []].append((follower, bytes))
            }
        }
        let now = ContinuousClock.now
        let writes = byLoop.values.map { group in
            (group.map(\.0), group[0].0.channel.eventLoop.submit { () -> ([Follower], Int) in
                var written = [Follower]()
                var declined = [Follower]()
                var bytesWritten = 0
                for (follower, bytes) in group {
                    if follower.channel.isActive && follower.channel.isWritable {
                        var chunk = ByteBuffer()
                        chunk.reserveCapacity(bytes.readableBytes + 16)
                        chunk.writeString(String(bytes.readableBytes, radix: 16))
                        chunk.writeStaticString("\r\n")
                        chunk.writeImmutableBuffer(bytes)
                        chunk.writeStaticString("\r\n")
                        follower.connection.write(.body(bytes), chunk: chunk)
                        // Its keep-alive interval starts again (not a stream's that was passed events).
                        var follower = follower
                        follower.deadline = now + follower.keepAlive
                        written.append(follower)
                        bytesWritten += bytes.readableBytes
                    } else {
                        declined.append(follower)
                    }
                }
                self.handBack(declined, .behind(position: start))
                return (written, bytesWritten)
            })
        }
        for (group, write) in writes {
            do {
                let (written, bytes) = try await write.get()
                moved += written
                serverState.addEventBytes(bytes)
            } catch {
                handBack(group, .behind(position: start))
            }
        }
        return moved
    }

    /// Hands `followers`, now at `position`, back to `waiting`; returns them instead when `goOn`
    /// (the delivery reads again). Ends the cancelled ones, and all on shutdown.
    private func requeue(_ followers: [Follower], at position: Int, fingerprint: Int64?, goOn: Bool) -> [Follower] {
        let generation = serverState.accessGeneration
        let (kept, ended, stale) = state.withLock { state -> ([Follower], [Follower], [Follower]) in
            guard !state.closed else { return ([], followers, []) }
            var kept = [Follower]()
            var ended = [Follower]()
            var stale = [Follower]()
            for var follower in followers {
                if state.cancelled.contains(follower.id) {
                    ended.append(follower)
                    continue
                }
                if follower.isStale(generation) {
                    stale.append(follower)
                    continue
                }
                if follower.position != position { follower.fingerprint = fingerprint }
                follower.position = position
                if goOn { kept.append(follower) } else { state.waiting[follower.id] = follower }
            }
            return (kept, ended, stale)
        }
        for follower in ended { follower.continuation.resume(returning: .ended) }
        handBack(stale, .behind(position: position))
        return kept
    }

    /// Hands the streams whose keep-alive interval passed back to them; returns how long until the
    /// next one's (nil when none waits).
    func expire() -> Duration? {
        let now = ContinuousClock.now
        let (quiet, next) = state.withLock { state -> ([Follower], ContinuousClock.Instant?) in
            var quiet = [Follower]()
            var next: ContinuousClock.Instant?
            for follower in state.waiting.values {
                if follower.deadline <= now {
                    quiet.append(follower)
                } else if next.map({ follower.deadline < $0 }) ?? true {
                    next = follower.deadline
                }
            }
            for follower in quiet { state.waiting[follower.id] = nil }
            return (quiet, next)
        }
        for follower in quiet {
            follower.continuation.resume(returning: .quiet(position: follower.position, fingerprint: follower.fingerprint))
        }
        return next.map { max(.milliseconds(1), $0 - now) }
    }

    private func handBack(_ followers: [Follower], _ wake: Wake) {
        for follower in followers { follower.continuation.resume(returning: wake) }
    }

    /// Hands the waiting streams whose access rules changed back to them, which check their token
    /// again (a delivery hands back those it holds before it writes to them): the access file was
    /// read again.
    /// - Complexity: O(streams waiting).
    func accessChanged() {
        let generation = serverState.accessGeneration
        let stale = state.withLock { state -> [Follower] in
            let stale = state.waiting.values.filter { $0.isStale(generation) }
            for follower in stale { state.waiting[follower.id] = nil }
            return stale
        }
        for follower in stale { follower.continuation.resume(returning: .behind(position: follower.position)) }
    }

    /// Hands every waiting stream back to it, which finds the store's epoch changed and ends
    /// (see `ServerState.storeIdentity`).
    func epochChanged() {
        let all = state.withLock { state -> [Follower] in
            let all = Array(state.waiting.values)
            state.waiting.removeAll()
            return all
        }
        for follower in all { follower.continuation.resume(returning: .behind(position: follower.position)) }
    }

    /// Follows streams again after `close()` (a server run again).
    func open() {
        state.withLock { $0.closed = false }
    }

    /// Ends every stream followed now, those a delivery holds when it hands them back, and every
    /// later `follow` at once (the server is shutting down).
    func close() {
        let all = state.withLock { state -> [Follower] in
            state.closed = true
            defer { state.waiting = [:] }
            return Array(state.waiting.values)
        }
        for follower in all { follower.continuation.resume(returning: .ended) }
    }
}
