import ListStoreCore
import ListStoreWire
import Logging
import NIOCore

/// Answers the long polls that `LongPollHandler` takes beneath Hummingbird: a poll behind the head
/// of its list at once, from the page the polls of the same version share (kept, or read once for
/// all of them); a poll at the head when a read of the heads finds the list past it (one read of
/// the page for all the polls woken at that version), or with the empty page when its time is up
/// or the server shuts down. Polls past the head go to the route (see
/// `take(_:deadline:on:answer:)`). The answers of held polls go to their event loop's
/// `LoopDeliveries` (one piece of work per loop), which the loop's `LongPollHandler`s run at the end
/// of each read; the event loops must outlive the fan-out, which keeps each one's deliveries.
///
/// A poll costs an entry in a table while it waits, and nothing of Hummingbird's: at 10,000 long
/// polls woken by each commit, a request through Hummingbird (its task, its middlewares, its
/// writer) cost the server about 50 µs of CPU, and the answers of one commit took longer than the
/// commits were apart (`http-followers-10k`).
///
/// `HeadWatcher` drives it: each read of the heads (`headsRead(_:generation:)`) wakes the polls a
/// head has passed, and its timer ends the others on time (`expire()`). A user's poll rests on the
/// access rules under which its token may read the list: when they change (`accessChanged()`), a
/// poll they no longer allow is answered at once as a new request would be (404 `listNotFound`,
/// or 401 for a token they no longer accept).
///
/// ```swift
/// // on the connection's event loop, a request `LongPollHandler` may take:
/// switch polls.take(key, deadline: deadline, on: loop, answer: answer) {
/// case .answer(let page): write(page)           // a page kept from the same version's read
/// case .held(let id): held = id                // `answer` is called on `loop` later
/// case nil: context.fireChannelRead(data)      // Hummingbird answers it
/// }
/// ```
///
/// Complexity: `take` is O(pages kept); a read of the heads is O(polls held); a page read answers
/// all the polls of its version, O(polls) writes.
final class LongPollFanout: Sendable {
    /// What a poll is answered with.
    enum Answer: Sendable {
        /// 200 with this body (a page of the journal, empty or not).
        case page(ByteBuffer)
        /// The error a read of the page met, answered as the route answers it.
        case error(APIError)
    }

    /// What `take` did with a poll.
    enum Taken {
        /// Answer it now with this page (kept from a read of the same page since the store last
        /// learned of a commit).
        case answer(ByteBuffer)
        /// Held under this id: it is answered later, on its event loop.
        case held(UInt64)
    }

    /// A poll taken and not answered yet.
    private struct Held: Sendable {
        var key: JournalPages.Key
        var deadline: ContinuousClock.Instant
        var loop: any EventLoop
        /// Writes the answer to the poll's connection; called on `loop`.
        var answer: @Sendable (Answer) -> Void
        /// The poll's place among the server's long polls and event streams while it waits (a
        /// poll answered from a read under way holds none, as the route's do not).
        var slot: ConnectionLimiter.Slot?
        /// Whether it waits for a read of its page under way (not for a commit, nor its time).
        var reading = false
        /// The user's token and the generation of the access rules it was taken under (`nil`: the
        /// service token's poll).
        var access: (token: AccessToken, generation: UInt64)?
    }

    private struct State {
        var held: [UInt64: Held] = [:]
        var nextID: UInt64 = 0
        /// The polls waiting for each read of a page under way, and for each read of polls at a
        /// head the store may have moved past (see `check(_:)`).
        var reading: [JournalPages.Key: [UInt64]] = [:]
        var checking: [JournalPages.Key: [UInt64]] = [:]
        /// The heads the last read found, and the store's commit generation before it (`nil`
        /// when the last read failed).
        var heads: [String: Int] = [:]
        var headsGeneration: UInt64?
        var closed = false
        /// How many polls were taken so far (for tests).
        var taken = 0
        var ends = 0
    }

    private let store: any ListStoreEngine
    private let slots: ConnectionLimiter
    private let pages: JournalPages
    private let logger: Logger
    /// The server's state, whose access rules the users' polls rest on.
    private let serverState: ServerState?
    private let state = _Locked(State())
    /// Each event loop's `LoopDeliveries`, which carry the answers to it.
    private let loopDeliveries = _Locked([ObjectIdentifier: LoopDeliveries]())

    /// A fan-out of `pages`' store, each waiting poll holding one of `slots`, reading pages from
    /// `pages` (which the journal route shares); users' polls rest on the access rules of
    /// `serverState`.
    init(pages: JournalPages, slots: ConnectionLimiter, logger: Logger, serverState: ServerState? = nil) {
        self.pages = pages
        store = pages.store
        self.slots = slots
        self.logger = logger
        self.serverState = serverState
    }

    /// Takes a poll of the page `key` (its `wait` ending at `deadline`), to be answered on `loop`
    /// with `answer` (once; never after `release(_:)`), or answered now (`Taken.answer`). Returns
    /// `nil` when it is not for this fan-out to take, and the route answers it. A user's poll
    /// gives its token and the generation of the access rules under which it may read the list
    /// (`access`); one whose rules are no longer in force is the route's.
    ///
    /// - A poll behind the list's head (as the last read of the heads found it; a head only
    ///   grows) is answered at once: from the page kept since the store last learned of a commit
    ///   (it may lack a commit of another process the store has not heard of yet; the client's
    ///   next poll gets it), or from a read of the page under way or one it starts.
    /// - A poll at the head waits for a read of the heads that finds the list past it, or for its
    ///   `deadline`, as the route's long polls do. When the store learned of a commit since the
    ///   last read of the heads began, it first reads the page, as the route does before it
    ///   waits (`check(_:)`). (A commit of another process the store has not heard of wakes it at
    ///   the head watcher's next read, within its poll interval: holding a poll makes it read the
    ///   heads that often.)
    /// - A poll past the head, of a list the heads do not hold, at the head when the last read of
    ///   the heads failed (the route reports the store's error), beyond the places for long polls,
    ///   or while the server shuts down, is not taken.
    /// - Complexity: O(pages kept).
    func take(
        _ key: JournalPages.Key, deadline: ContinuousClock.Instant, on loop: any EventLoop,
        access: (token: AccessToken, generation: UInt64)? = nil, answer: @escaping @Sendable (Answer) -> Void
    ) -> Taken? {
        let generation = store.commitGeneration()
        let (taken, start) = state.withLock { state -> (Taken?, Start?) in
            guard !state.closed, let since = key.since, let head = state.heads[key.list], since <= head else { return (nil, nil) }
            if let access, let serverState, serverState.accessGeneration != access.generation { return (nil, nil) }
            let behind = since < head
            if behind, let page = pages.kept(key, generation: generation) {
                state.taken += 1
                return (.answer(page), nil)
            }
            // At a head the store may have moved past: read first, and wait if the page is empty.
            let checking = !behind && state.headsGeneration != generation
            if checking && state.headsGeneration == nil { return (nil, nil) }  // the last read of the heads failed
            var held = Held(key: key, deadline: deadline, loop: loop, answer: answer, slot: nil, reading: behind || checking, access: access)
            if !behind && !checking {
                guard let slot = slots.slot() else { return (nil, nil) }
                held.slot = slot
            }
            state.nextID &+= 1
            state.taken += 1
            state.held[state.nextID] = held
            if behind {
                let first = state.reading[key] == nil
                state.reading[key, default: []].append(state.nextID)
                return (.held(state.nextID), first ? .read : nil)
            }
            if checking {
                let first = state.checking[key] == nil
                state.checking[key, default: []].append(state.nextID)
                return (.held(state.nextID), first ? .check : nil)
            }
            return (.held(state.nextID), nil)
        }
        switch start {
        case .read?: Task { await self.read(key) }
        case .check?: Task { await self.check(key) }
        case nil: break
        }
        return taken
    }

    /// A read `take` starts.
    private enum Start { case read, check }

    /// Reads the page `key` for the polls that came at a head the store may have moved past (see
    /// `take`), as the route reads before it waits: a page that is not empty (or an error) answers
    /// them; after an empty one each takes a place among the long polls (the route's 503 when there
    /// is none) and waits for a commit, or is woken at once if a read of the heads found the list
    /// past it meanwhile, or gets the empty page if the server is shutting down.
    private func check(_ key: JournalPages.Key) async {
        let result: Result<(empty: Bool, body: ByteBuffer), any Error>
        do {
            result = .success(try await pages.page(key, generation: nil))
        } catch {
            result = .failure(error)
        }
        let (polls, ended, wake) = state.withLock { state -> ([Held], [Held], Bool) in
            let ids = state.checking.removeValue(forKey: key) ?? []
            guard case .success(let page) = result, page.empty else {
                return (ids.compactMap { state.held.removeValue(forKey: $0) }, [], false)
            }
            var refused = [Held]()
            var ended = [Held]()
            let passed = (state.heads[key.list] ?? -1) > (key.since ?? .max)
            let readUnderWay = state.reading[key] != nil
            var woken = 0
            for id in ids {
                guard state.held[id] != nil else { continue }
                // As the route: a place to wait first (503 without), then the wait, which ends at
                // once when the heads passed the poll, or the server is shutting down.
                guard let slot = slots.slot() else {
                    if let poll = state.held.removeValue(forKey: id) { refused.append(poll) }
                    continue
                }
                state.held[id]?.slot = slot
                if passed {
                    state.reading[key, default: []].append(id)
                    woken += 1
                } else if state.closed {
                    if let poll = state.held.removeValue(forKey: id) { ended.append(poll) }
                } else {
                    state.held[id]?.reading = false
                }
            }
            return (refused, ended, woken > 0 && !readUnderWay)
        }
        switch result {
        case .success(let page) where !page.empty:
            answer(polls) { _ in .page(page.body) }
        case .success(let page):
            answer(polls) { _ in .error(APIError.noPlaceToWait) }
            answer(ended) { _ in .page(page.body) }
        case .failure(let error):
            let api = APIError.from(error, logger: logger, storeLocation: store.location)
            answer(polls) { _ in .error(api) }
        }
        if wake { await read(key) }
    }

    /// Forgets the poll `id` (its connection closed): it is not answered, and its place is free.
    /// - Complexity: O(1).
    func release(_ id: UInt64) {
        _ = state.withLock { $0.held.removeValue(forKey: id) }
    }

    /// Whether any poll waits for a commit (the heads are read only while someone waits).
    var isWaiting: Bool { state.withLock { !$0.held.isEmpty } }

    /// How many polls are held now (waiting, or answered from a read under way).
    var heldCount: Int { state.withLock { $0.held.count } }

    /// Whether a poll at a head the last read of the heads found would be held: that read did
    /// not fail, and the store learned of no commit since it began (for tests).
    var headsAreCurrent: Bool {
        let generation = store.commitGeneration()
        return state.withLock { $0.headsGeneration == generation }
    }

    /// The head of `list` the last read of the heads found (for tests).
    func knownHead(of list: String) -> Int? {
        state.withLock { $0.heads[list] }
    }

    /// How many polls were taken since the server started (for tests).
    var takenCount: Int { state.withLock { $0.taken } }

    /// Counts a graceful shutdown or an end of input a connection's handler saw (for tests).
    func noteEnd() { state.withLock { $0.ends += 1 } }

    /// How many graceful shutdowns and ends of input the connections' handlers saw (for tests).
    var endCount: Int { state.withLock { $0.ends } }

    /// How many event loops have had connections that may take polls: one `LoopDeliveries` each
    /// (for tests).
    var loopCount: Int { loopDeliveries.withLock { $0.count } }

    /// Takes the heads a read found, begun at the store's commit generation `generation`: wakes
    /// the polls whose list's head is past their version, or whose list is gone, as the route's
    /// long polls are woken (`HeadWatcher.ends(waitFor:after:heads:lastHeads:)`), one read of the
    /// page for those that wait on the same page.
    func headsRead(_ heads: [String: Int], generation: UInt64) {
        let reads = state.withLock { state -> [JournalPages.Key] in
            var reads = [JournalPages.Key]()
            // A poll whose list was deleted reads it too, and the read answers so (404).
            for (id, held) in state.held where !held.reading
                && HeadWatcher.ends(waitFor: held.key.list, after: held.key.since ?? .max, heads: heads, lastHeads: state.heads)
            {
                state.held[id]?.reading = true
                if state.reading[held.key] == nil { reads.append(held.key) }
                state.reading[held.key, default: []].append(id)
            }
            state.heads = heads
            state.headsGeneration = generation
            return reads
        }
        for key in reads {
            Task { await self.read(key) }
        }
    }

    /// Takes a read of the heads that failed: polls at the heads go to the route until a read
    /// succeeds.
    func headsUnknown() {
        state.withLock { $0.headsGeneration = nil }
    }

    /// Reads the page `key` once and answers the polls waiting for it with it (or with the read's
    /// error), those that joined while it was read too. Every such poll is behind the head, so an
    /// empty page is a read that began before the commit (one it joined): it reads again, a few
    /// times, as the route reads again once the heads are past its version.
    private func read(_ key: JournalPages.Key) async {
        var answer = Answer.error(.internal)
        for attempt in 0..<3 {
            do {
                let (empty, body) = try await pages.page(key, generation: attempt == 0 ? store.commitGeneration() : nil)
                answer = .page(body)
                if !empty { break }
            } catch {
                answer = .error(APIError.from(error, logger: logger, storeLocation: store.location))
                break
            }
        }
        let polls = state.withLock { state -> [Held] in
            (state.reading.removeValue(forKey: key) ?? []).compactMap { state.held.removeValue(forKey: $0) }
        }
        let final = answer
        self.answer(polls) { _ in final }
    }

    /// The deliveries to `loop`, which its `LongPollHandler`s run at the end of each read.
    func deliveries(to loop: any EventLoop) -> LoopDeliveries {
        loopDeliveries.withLock { all in
            if let known = all[ObjectIdentifier(loop)] { return known }
            let made = LoopDeliveries(loop: loop)
            all[ObjectIdentifier(loop)] = made
            return made
        }
    }

    /// Answers each of `polls` with `answer(poll)`, handed to its event loop's deliveries in one
    /// piece of work per loop.
    private func answer(_ polls: [Held], with answer: @escaping @Sendable (Held) -> Answer) {
        var byLoop = [ObjectIdentifier: [Held]]()
        for poll in polls { byLoop[ObjectIdentifier(poll.loop), default: []].append(poll) }
        for group in byLoop.values {
            deliveries(to: group[0].loop).post {
                for poll in group { poll.answer(answer(poll)) }
            }
        }
    }

    /// The answer of a poll of `list` that no commit woke: the empty page, as the route reads it.
    static func emptyPage(of list: String) -> ByteBuffer {
        ByteBuffer(bytes: WireDocument.journal(JournalPage(entries: [], hasMore: false), list: list))
    }

    /// Answers `polls` with the empty page of each one's list, made once per list.
    private func answerEmpty(_ polls: [Held]) {
        var pages = [String: ByteBuffer]()
        for poll in polls where pages[poll.key.list] == nil { pages[poll.key.list] = Self.emptyPage(of: poll.key.list) }
        let made = pages
        answer(polls) { .page(made[$0.key.list]!) }
    }

    /// Answers the waiting polls whose time is up with the empty page; returns how long until the
    /// next one's (`nil` when none waits).
    func expire() -> Duration? {
        let now = ContinuousClock.now
        let (due, next) = state.withLock { state -> ([Held], ContinuousClock.Instant?) in
            var due = [UInt64]()
            var next: ContinuousClock.Instant?
            for (id, held) in state.held where !held.reading {
                if held.deadline <= now {
                    due.append(id)
                } else if next.map({ held.deadline < $0 }) ?? true {
                    next = held.deadline
                }
            }
            return (due.compactMap { state.held.removeValue(forKey: $0) }, next)
        }
        answerEmpty(due)
        return next.map { max(.milliseconds(1), $0 - now) }
    }

    /// Answers at once the users' polls that the access rules now in force no longer allow, as a
    /// new request would be answered (see `JournalRoutes.refusal(of:on:needing:under:storeLocation:)`),
    /// whether they wait or a read of their page is under way; the others rest on the new rules
    /// from now on: the access file was read again.
    /// - Complexity: O(polls held), a check of each user's poll against the rules.
    func accessChanged() {
        guard let serverState else { return }
        let (access, generation) = serverState.accessInForce
        let location = store.location
        // The polls to check, then their answers found outside the lock (once per token and list:
        // many polls share them), then those still held are answered or rest on the new rules.
        let stale = state.withLock { state in
            state.held.compactMap { id, held in held.access.flatMap { $0.generation != generation ? (id, $0.token, held.key.list) : nil } }
        }
        struct Reading: Hashable {
            var token: AccessToken
            var list: String
        }
        var refusals = [Reading: APIError?]()
        for (_, token, list) in stale where refusals[Reading(token: token, list: list)] == nil {
            refusals[Reading(token: token, list: list)] = .some(
                JournalRoutes.refusal(of: token, on: list, needing: .read, under: access, storeLocation: location))
        }
        let refused = state.withLock { state -> [(Held, APIError)] in
            var refused = [(Held, APIError)]()
            for (id, token, list) in stale {
                guard let held = state.held[id], held.access?.generation != generation else { continue }
                if let refusal = refusals[Reading(token: token, list: list)] ?? nil {
                    state.held[id] = nil
                    refused.append((held, refusal))
                } else {
                    state.held[id]?.access = (token, generation)
                }
            }
            return refused
        }
        var byLoop = [ObjectIdentifier: [(Held, APIError)]]()
        for poll in refused { byLoop[ObjectIdentifier(poll.0.loop), default: []].append(poll) }
        for group in byLoop.values {
            deliveries(to: group[0].0.loop).post {
                for (poll, refusal) in group { poll.answer(.error(refusal)) }
            }
        }
    }

    /// Takes polls again after `close()` (a server run again), from the next read of the heads.
    func open() {
        state.withLock { state in
            state.closed = false
            state.heads = [:]
            state.headsGeneration = nil
        }
    }

    /// Answers every waiting poll with the empty page, and takes no more (the server is shutting
    /// down: Hummingbird answers the later ones, as it answers any request then). Polls answered
    /// from a read under way get its page.
    func close() {
        let all = state.withLock { state -> [Held] in
            state.closed = true
            let waiting = state.held.filter { !$0.value.reading }
            for id in waiting.keys { state.held[id] = nil }
            return Array(waiting.values)
        }
        answerEmpty(all)
    }
}
