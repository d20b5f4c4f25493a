import HTTPTypes
import ListStoreCore
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// Writes each new page of a list's journal to every event stream at the head of the list, once:
/// one read of the page, shared by the streams, and one task per event loop that writes the page's
/// buffer to each of its connections, instead of a task woken, a read asked for and a write handed
/// to the event loop per stream.
///
/// An event stream reads and writes its backlog itself (through Hummingbird's writer, which waits
/// while the connection cannot take more), then hands itself over with `follow(_:after:channel:)`
/// and is suspended while the fan-out writes to its connection. `follow` returns when the stream
/// must take over again: the fan-out found its connection unable to take more (or closed), a read
/// failed, the keep-alive interval passed with nothing to write, or the server is shutting down.
/// While a stream is followed, only the fan-out writes to its connection, and while it is not,
/// only the stream does, so the events of a stream are written in order. A user's stream rests on
/// the access rules under which its token may read the list: when they change (`accessChanged()`),
/// it is handed back before anything more is written to it, and checks its access again.
///
/// `HeadWatcher` drives it: each read of the heads (`headsRead(_:)`) starts a delivery for the
/// streams a head has passed, and its timer ends the quiet ones (`expire()`).
///
/// ```swift
/// switch await fanout.follow("inbox", after: cursor, channel: context.channel) {
/// case .behind(let version): cursor = version        // read on from there
/// case .quiet(let version): cursor = version; try await writer.write(keepAlive)
/// case .ended: return
/// }
/// ```
///
/// Complexity: a delivery costs one read of the journal page and O(streams) writes; a read of the
/// heads costs O(streams followed).
final class EventFanout: Sendable {
    /// Why `follow` returned; the stream's connection has every event up to `cursor`.
    enum Wake: Sendable, Equatable {
        /// The stream reads on from `cursor` itself: its connection could not take more, a read
        /// failed (the stream reads again and reports it), or the head was already past it.
        case behind(cursor: Int)
        /// Nothing was written for the keep-alive interval: the stream writes a keep-alive and
        /// follows again.
        case quiet(cursor: Int)
        /// The server is shutting down or the task was cancelled.
        case ended
    }

    /// What identifies a page of events (the byte budget is the server's).
    struct PageKey: Hashable, Sendable {
        var list: String
        var since: Int?
        var limit: Int
    }

    /// A stream handed over.
    private struct Follower: Sendable {
        var id: UInt64
        var list: String
        var cursor: Int
        var deadline: ContinuousClock.Instant
        var keepAlive: Duration
        var maxBytes: Int
        /// The identity of the list the stream follows (`nil`: unknown).
        var listID: String?
        /// The generation of the access rules the stream rests on (`nil`: the service token's).
        var accessGeneration: UInt64?
        var connection: EventStreamConnection
        var channel: any Channel { connection.channel }
        var continuation: CheckedContinuation<Wake, Never>

        /// Whether the access rules changed since the stream checked them (`generation`: those in force).
        func isStale(_ generation: UInt64) -> Bool { accessGeneration.map { $0 != generation } ?? false }
    }

    private struct State {
        /// The streams waiting for the head of their list to pass their cursor (not those a
        /// delivery holds).
        var waiting: [UInt64: Follower] = [:]
        var nextID: UInt64 = 0
        /// Streams cancelled while a delivery held them (they end when it hands them back).
        var cancelled: Set<UInt64> = []
        var closed = false
        /// The deliveries under way (their followers are in none of the other fields).
        var deliveries = 0
        /// The heads the last read found.
        var heads: [String: Int] = [:]
        /// How many times a stream was handed back (for tests).
        var handedBack = 0
        /// The event streams of lists open now, followed or not.
        var streams = 0
    }

    /// The pages of events being read, shared by the deliveries and the streams reading at the
    /// same version, and the last 16 that were not empty (up to 1 MiB each) for a second or until
    /// the store learns of a commit (see `SharedReads`).
    let pages = SharedReads<PageKey, EventPage>(keeping: 16, for: .seconds(1)) {
        $0.lastVersion != nil && $0.events.readableBytes <= 1 << 20
    }
    /// The most events of one page.
    static let pageLimit = 100

    private let store: any ListStoreEngine
    private let serverState: ServerState
    private let state = _Locked(State())

    init(store: any ListStoreEngine, state: ServerState) {
        self.store = store
        serverState = state
    }

    /// The page of events of `list` after `version` (at most `maxBytes` of stages, at least one
    /// entry), shared with the reads of the same page under way (and, with `generation`, kept ones).
    /// - Throws: `StoreError` of the read.
    func page(of list: String, after version: Int?, maxBytes maxPageBytes: Int, generation: UInt64? = nil) async throws -> EventPage {
        let store = store
        return try await pages.value(for: PageKey(list: list, since: version, limit: Self.pageLimit), generation: generation) {
            EventPage(try await store.journal(of: list, after: version, limit: Self.pageLimit, maxBytes: maxPageBytes))
        }
    }

    /// Hands the event stream on `channel`, whose connection has every event of `list` up to
    /// `cursor`, to the fan-out until it must take over again (see `Wake`): after `keepAlive` with
    /// nothing written, it is `.quiet`; pages are read with `maxBytes` (see `page(of:after:maxBytes:)`).
    /// Returns `.behind` at once when the last read of the heads found the list past `cursor`, or
    /// when the access rules in force are no longer of `accessGeneration`, the generation the
    /// stream of a user's token rests on (`nil` for the service token's). A stream is handed back
    /// `.behind` when a read of the heads finds its list gone or behind it (deleted, or made
    /// again), and a delivery does not write the page of another list than `listID` to it: the
    /// stream reads, and ends.
    func follow(
        _ list: String, after cursor: Int, connection: EventStreamConnection, keepAlive: Duration, maxBytes: Int, listID: String? = nil,
        accessGeneration: UInt64? = nil
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
                    if (state.heads[list] ?? -1) > cursor { return .behind(cursor: cursor) }
                    if let accessGeneration, serverState.accessGeneration != accessGeneration { return .behind(cursor: cursor) }
                    state.waiting[id] = Follower(
                        id: id, list: list, cursor: cursor, deadline: deadline, keepAlive: keepAlive, maxBytes: maxBytes, listID: listID,
                        accessGeneration: accessGeneration, connection: connection, continuation: continuation)
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

    /// Whether any stream is followed, waiting or held by a delivery (the heads are read only while
    /// someone waits, and a commit that lands during a delivery must be read for it to go on).
    var isFollowing: Bool { state.withLock { !$0.waiting.isEmpty || $0.deliveries > 0 } }

    /// Whether `close()` was called (and `open()` not since).
    var isClosed: Bool { state.withLock { $0.closed } }

    /// Counts an event stream of a list from its start (`streamOpened()`) to its end
    /// (`streamClosed()`): while any is open, every commit's heads are read (see `HeadWatcher`).
    func streamOpened() { state.withLock { $0.streams += 1 } }

    /// See `streamOpened()`.
    func streamClosed() { state.withLock { $0.streams -= 1 } }

    /// Whether an event stream of a list is open, followed or not.
    var hasStreams: Bool { state.withLock { $0.streams > 0 } }

    /// How many streams wait for a commit (not those a delivery holds).
    var waitingCount: Int { state.withLock { $0.waiting.count } }

    /// How many times a `follow` returned `.behind` or `.quiet` so far (for tests).
    var handedBackCount: Int { state.withLock { $0.handedBack } }

    /// Whether the heads say that the list a stream follows at `cursor` is no longer the one it
    /// started with: the list is gone (deleted), or its head is behind the stream (deleted and
    /// made again), as a read of the heads found them.
    private static func replaced(_ list: String, _ cursor: Int, _ heads: [String: Int]) -> Bool {
        (heads[list] ?? -1) < cursor
    }

    /// Takes the heads a read found: starts a delivery for the streams of each version a head
    /// passed, and hands back those whose list is gone or behind them (see `replaced`).
    func headsRead(_ heads: [String: Int]) {
        let (groups, replaced) = state.withLock { state -> ([PageKey: [Follower]], [Follower]) in
            state.heads = heads
            let replaced = state.waiting.values.filter { Self.replaced($0.list, $0.cursor, heads) }
            for follower in replaced { state.waiting[follower.id] = nil }
            var groups = [PageKey: [Follower]]()
            for follower in state.waiting.values where (heads[follower.list] ?? -1) > follower.cursor {
                groups[PageKey(list: follower.list, since: follower.cursor, limit: Self.pageLimit), default: []].append(follower)
            }
            for followers in groups.values {
                for follower in followers { state.waiting[follower.id] = nil }
            }
            state.deliveries += groups.count
            return (groups, replaced)
        }
        for follower in replaced { handBack([follower], .behind(cursor: follower.cursor)) }
        for (key, followers) in groups {
            Task { await self.deliver(key.list, after: key.since ?? 0, maxBytes: followers[0].maxBytes, to: followers) }
        }
    }

    /// Writes the pages after `start` to `followers` until they reach the head, then hands them
    /// back to `waiting` (or to their streams, see `Wake`).
    private func deliver(_ list: String, after start: Int, maxBytes: Int, to delivered: [Follower]) async {
        defer { state.withLock { $0.deliveries -= 1 } }
        var cursor = start
        var followers = delivered
        // Empty pages read in a row: a read joined while it was under way may have started before
        // the commit that the heads show.
        var emptyReads = 0
        while !followers.isEmpty {
            let page: EventPage
            do {
                page = try await self.page(of: list, after: cursor, maxBytes: maxBytes, generation: store.commitGeneration())
            } catch {
                // Each stream reads again and reports what it finds.
                handBack(followers, .behind(cursor: cursor))
                return
            }
            guard let last = page.lastVersion else {
                // Nothing after the cursor: read again while the heads say there is (a few times;
                // then the next read of the heads brings them back).
                emptyReads += 1
                followers = requeue(followers, at: cursor, goOnPastHead: emptyReads < 3, wrote: false)
                continue
            }
            emptyReads = 0
            // A stream of another list of that name (deleted and made again) reads, and ends.
            let other = followers.filter { follower in follower.listID.map { page.listID != nil && $0 != page.listID } ?? false }
            if !other.isEmpty {
                handBack(other, .behind(cursor: cursor))
                followers.removeAll { follower in other.contains { $0.id == follower.id } }
            }
            followers = await write(page.events, to: followers, cursor: cursor)
            cursor = last
            if !page.hasMore { followers = requeue(followers, at: cursor, goOnPastHead: true, wrote: true) }
        }
    }

    /// Writes `events` to each follower's connection from its event loop; returns those written
    /// to, and hands the others (a connection closed or unable to take more, or a stream whose
    /// access rules changed since it checked them) back to their streams at `cursor`.
    private func write(_ events: ByteBuffer, to all: [Follower], cursor: Int) async -> [Follower] {
        // Read after the page: a stream whose rules changed gets nothing more until it checks them.
        let generation = serverState.accessGeneration
        let followers = all.filter { !$0.isStale(generation) }
        handBack(all.filter { $0.isStale(generation) }, .behind(cursor: cursor))
        let part = HTTPResponsePart.body(events)
        var chunk = ByteBuffer()
        chunk.reserveCapacity(events.readableBytes + 16)
        chunk.writeString(String(events.readableBytes, radix: 16))
        chunk.writeStaticString("\r\n")
        chunk.writeImmutableBuffer(events)
        chunk.writeStaticString("\r\n")
        let framed = chunk
        var byLoop = [ObjectIdentifier: [Follower]]()
        for follower in followers { byLoop[ObjectIdentifier(follower.channel.eventLoop), default: []].append(follower) }
        let writes = byLoop.values.map { group in
            (group, group[0].channel.eventLoop.submit { () -> [Follower] in
                var written = [Follower]()
                var declined = [Follower]()
                written.reserveCapacity(group.count)
                for follower in group {
                    if follower.channel.isActive && follower.channel.isWritable {
                        follower.connection.write(part, chunk: framed)
                        written.append(follower)
                    } else {
                        declined.append(follower)
                    }
                }
                self.handBack(declined, .behind(cursor: cursor))
                return written
            })
        }
        var written = [Follower]()
        for (group, write) in writes {
            do {
                written += try await write.get()
            } catch {
                // The event loop refused the task (NIO's loops of a running server do not shut
                // down; a loop that did would drop the task and this wait would not end).
                handBack(group, .behind(cursor: cursor))
            }
        }
        serverState.addEventBytes(events.readableBytes * written.count)
        return written
    }

    /// Hands `followers`, whose connections have every event up to `cursor`, back to `waiting`;
    /// returns those to deliver to at once (`goOnPastHead` and the last read of the heads found
    /// their list past `cursor`). Ends the cancelled ones, and all on shutdown. Their keep-alive
    /// interval starts again when the delivery `wrote` to them.
    private func requeue(_ followers: [Follower], at cursor: Int, goOnPastHead: Bool, wrote: Bool) -> [Follower] {
        let now = ContinuousClock.now
        let generation = serverState.accessGeneration
        let (goOn, ended, stale) = state.withLock { state -> ([Follower], [Follower], [Follower]) in
            guard !state.closed else { return ([], followers, []) }
            var goOn = [Follower]()
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
                follower.cursor = cursor
                if wrote { follower.deadline = now + follower.keepAlive }
                if goOnPastHead && (state.heads[follower.list] ?? -1) > cursor {
                    goOn.append(follower)
                } else {
                    state.waiting[follower.id] = follower
                }
            }
            return (goOn, ended, stale)
        }
        for follower in ended { follower.continuation.resume(returning: .ended) }
        handBack(stale, .behind(cursor: cursor))
        return goOn
    }

    /// Hands the streams whose keep-alive interval passed back to them; returns how long until
    /// the next one's (nil when none waits).
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
        for follower in quiet { handBack([follower], .quiet(cursor: follower.cursor)) }
        return next.map { max(.milliseconds(1), $0 - now) }
    }

    /// Resumes `followers`' streams with `wake` (`.behind` or `.quiet`).
    private func handBack(_ followers: [Follower], _ wake: Wake) {
        guard !followers.isEmpty else { return }
        state.withLock { $0.handedBack += followers.count }
        for follower in followers { follower.continuation.resume(returning: wake) }
    }

    /// Hands every waiting stream back to it, which finds the store's epoch changed and ends
    /// (see `ServerState.storeIdentity`).
    func epochChanged() {
        let all = state.withLock { state -> [Follower] in
            let all = Array(state.waiting.values)
            state.waiting.removeAll()
            return all
        }
        for follower in all { handBack([follower], .behind(cursor: follower.cursor)) }
    }

    /// Hands the waiting streams whose access rules changed back to them, which check their access
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
        for follower in stale { follower.continuation.resume(returning: .behind(cursor: follower.cursor)) }
    }

    /// Follows streams again after `close()` (a server run again).
    func open() {
        state.withLock { state in
            state.closed = false
            state.heads = [:]
        }
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
