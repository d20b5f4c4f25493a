import ListStoreCore
import ListStoreWire
import Logging
import NIOCore

/// Answers the long polls that `LongPollHandler` takes beneath Hummingbird: a poll behind the head
/// of its list at once, from the page the polls of the same version share (kept, or read once for
/// all of them); a poll at the head when a read of the heads finds the list past it (one read of
/// the page for all the polls woken at that version, one task per event loop to answer them), or
/// with the empty page when its time is up or the server shuts down.
///
/// A poll costs an entry in a table while it waits, and nothing of Hummingbird's: at 10,000 long
/// polls woken by each commit, a request through Hummingbird (its task, its middlewares, its
/// writer) cost the server about 50 µs of CPU, and the answers of one commit took longer than the
/// commits were apart (`http-followers-10k`).
///
/// `HeadWatcher` drives it: each read of the heads (`headsRead(_:)`) wakes the polls a head has
/// passed, and its timer ends the others on time (`expire()`).
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
    }

    private struct State {
        var held: [UInt64: Held] = [:]
        var nextID: UInt64 = 0
        /// The polls waiting for each read of a page under way.
        var reading: [JournalPages.Key: [UInt64]] = [:]
        /// The heads the last read found.
        var heads: [String: Int] = [:]
        var closed = false
        /// How many polls were taken so far (for tests).
        var taken = 0
    }

    private let store: any ListStoreEngine
    private let slots: ConnectionLimiter
    private let pages: JournalPages
    private let logger: Logger
    private let state = _Locked(State())

    /// A fan-out of `pages`' store, each waiting poll holding one of `slots`, reading pages from
    /// `pages` (which the journal route shares).
    init(pages: JournalPages, slots: ConnectionLimiter, logger: Logger) {
        self.pages = pages
        store = pages.store
        self.slots = slots
        self.logger = logger
    }

    /// Takes a poll of the page `key` (its `wait` ending at `deadline`), to be answered on `loop`
    /// with `answer` (once; never after `release(_:)`), or answered now (`Taken.answer`). Returns
    /// `nil` when it is not for this fan-out to take: the last read of the heads did not find the
    /// list, every place for long polls is taken (the route answers 503), or the server is
    /// shutting down.
    ///
    /// A poll behind the list's head as the last read of the heads found it is answered at once:
    /// from the page kept, or from a read of it under way, or from a read it starts. A poll at or
    /// past that head waits, until a read of the heads finds the list's head elsewhere than its
    /// version, or until `deadline`. The heads may be older than a commit or than the poll's
    /// version (the client read a page after the last read of the heads): holding a poll makes
    /// the head watcher read the heads within its poll interval (at once when the store learned
    /// of a commit), and that read wakes it if the head is not at its version, as it wakes the
    /// long polls the route holds. A version past the list's head is so answered after that
    /// read, with the route's error.
    /// - Complexity: O(pages kept).
    func take(
        _ key: JournalPages.Key, deadline: ContinuousClock.Instant, on loop: any EventLoop,
        answer: @escaping @Sendable (Answer) -> Void
    ) -> Taken? {
        let generation = store.commitGeneration()
        let (taken, startRead) = state.withLock { state -> (Taken?, Bool) in
            guard !state.closed, let since = key.since, let head = state.heads[key.list] else { return (nil, false) }
            let behind = since < head
            if behind, let page = pages.kept(key, generation: generation) { return (.answer(page), false) }
            var held = Held(key: key, deadline: deadline, loop: loop, answer: answer, slot: nil, reading: behind)
            if !behind {
                guard let slot = slots.slot() else { return (nil, false) }
                held.slot = slot
            }
            state.nextID &+= 1
            state.taken += 1
            state.held[state.nextID] = held
            guard behind else { return (.held(state.nextID), false) }
            let first = state.reading[key] == nil
            state.reading[key, default: []].append(state.nextID)
            return (.held(state.nextID), first)
        }
        if startRead { Task { await self.read(key) } }
        return taken
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

    /// How many polls were taken since the server started (for tests).
    var takenCount: Int { state.withLock { $0.taken } }

    /// Takes the heads a read found: wakes the polls whose list's head is elsewhere than their
    /// version (past it, or gone: the route's read tells what), one read of the page for those
    /// that wait on the same page.
    func headsRead(_ heads: [String: Int]) {
        let reads = state.withLock { state -> [JournalPages.Key] in
            state.heads = heads
            var reads = [JournalPages.Key]()
            for (id, held) in state.held where !held.reading && heads[held.key.list] != held.key.since {
                state.held[id]?.reading = true
                state.held[id]?.slot = nil
                if state.reading[held.key] == nil { reads.append(held.key) }
                state.reading[held.key, default: []].append(id)
            }
            return reads
        }
        for key in reads {
            Task { await self.read(key) }
        }
    }

    /// Reads the page `key` once and answers the polls waiting for it with it (or with the read's
    /// error), those that joined while it was read too.
    private func read(_ key: JournalPages.Key) async {
        let answer: Answer
        do {
            answer = .page(try await pages.page(key, generation: store.commitGeneration()).body)
        } catch {
            answer = .error(APIError.from(error, logger: logger, storeLocation: store.location))
        }
        let polls = state.withLock { state -> [Held] in
            (state.reading.removeValue(forKey: key) ?? []).compactMap { state.held.removeValue(forKey: $0) }
        }
        Self.answer(polls) { _ in answer }
    }

    /// Answers each of `polls` with `answer(poll)`, from one task per event loop.
    private static func answer(_ polls: [Held], with answer: @escaping @Sendable (Held) -> Answer) {
        var byLoop = [ObjectIdentifier: [Held]]()
        for poll in polls { byLoop[ObjectIdentifier(poll.loop), default: []].append(poll) }
        for group in byLoop.values {
            group[0].loop.execute {
                for poll in group { poll.answer(answer(poll)) }
            }
        }
    }

    /// The answer of a poll of `list` that no commit woke: the empty page, as the route reads it.
    static func emptyPage(of list: String) -> ByteBuffer {
        ByteBuffer(bytes: WireDocument.journal(JournalPage(entries: [], hasMore: false), list: list))
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
        Self.answer(due) { .page(Self.emptyPage(of: $0.key.list)) }
        return next.map { max(.milliseconds(1), $0 - now) }
    }

    /// Takes polls again after `close()` (a server run again), from the next read of the heads.
    func open() {
        state.withLock { state in
            state.closed = false
            state.heads = [:]
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
        Self.answer(all) { .page(Self.emptyPage(of: $0.key.list)) }
    }
}
