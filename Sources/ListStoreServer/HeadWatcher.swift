import Foundation
@_spi(FeedCursors) import ListStoreCore

/// The one table of requests that wait for commits: long polls and event streams of a list and of
/// the store feed (RunningAServer.md, “What stays flat as lists and followers grow”). One loop reads
/// the store feed's moves for all of them, after each commit the store learns of and every
/// `pollInterval` while anyone waits, and wakes the waits of the lists that moved; a second loop
/// ends the waits whose time is up, so a slow store does not delay the timeouts. A read the store
/// does not answer is made again within a second, not at the next signal: the signal of the commit
/// it missed was taken. Woken requests share identical reads (`JournalPages`, `EventPages`, `FeedPages`).
final class HeadWatcher: Sendable {
    /// What a wait waits for.
    private enum Target {
        /// The head of a list to pass a version.
        case list(String, after: Int)
        /// A commit to a list `includes` accepts, past a position of the feed.
        case feed(includes: @Sendable (String) -> Bool, after: Int)
    }

    private struct Waiter {
        var target: Target
        var deadline: ContinuousClock.Instant
        /// The generation of the access rules the wait rests on (`nil`: none, the service token's).
        var accessGeneration: UInt64?
        var continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var waiters: [UInt64: Waiter] = [:]
        /// The waits of each list's head, by list.
        var byList: [String: Set<UInt64>] = [:]
        /// The waits of the feed.
        var feed: Set<UInt64> = []
        var nextID: UInt64 = 0
        /// Waits cancelled before they were added to `waiters` (they end at once when they are).
        var cancelled: Set<UInt64> = []
        var closed = false
        /// The version each list moved to since the watcher started, as the feed said (`deleted`
        /// for a deletion): a wait for a version a list already moved past ends at once.
        var heads: [String: Int] = [:]
        /// The feed's position read through (`nil`: not read yet).
        var position: Int?
        /// The store's commit generation read before the last read of the feed.
        var readAt: UInt64?
        /// The last moves read (at most `recentLimit`), and the position after which they are all
        /// there: a feed wait within them is decided at once.
        var recent: [FeedMove] = []
        var recentFrom: Int?
        /// A wait ended at once on moves read before: the loop reads again even if nobody waits.
        var readWanted = false
        /// The loop, resting while nobody waits: the next wait (or `readWanted`, or `close()`) resumes it.
        var resting: CheckedContinuation<Void, Never>?
        /// The loop's task was cancelled (it does not rest again).
        var stopped = false

        /// Whether the loop has a reason to read the feed: somebody waits, or wants a read.
        var readNeeded: Bool { !waiters.isEmpty || readWanted }

        /// Takes the resting loop's continuation, to resume once the lock is let go.
        mutating func wakeLoop() -> CheckedContinuation<Void, Never>? {
            defer { resting = nil }
            return resting
        }

        /// Removes the wait `id` from the table; its continuation.
        mutating func remove(_ id: UInt64) -> CheckedContinuation<Bool, Never>? {
            guard let waiter = waiters.removeValue(forKey: id) else { return nil }
            switch waiter.target {
            case .list(let list, _):
                byList[list]?.remove(id)
                if byList[list]?.isEmpty == true { byList[list] = nil }
            case .feed:
                feed.remove(id)
            }
            return waiter.continuation
        }

        /// Forgets what the feed's reads found: the feed is read through `position` (`nil`: not
        /// read), at `generation`, and nothing of it is kept.
        mutating func forgetMoves(readThrough position: Int?, at generation: UInt64?) {
            self.position = position
            readAt = generation
            heads = [:]
            recent = []
            recentFrom = position
        }
    }

    let store: any ListStoreEngine
    let pollInterval: Duration
    /// The server's state: the access rules users' waits rest on, and the store identity kept.
    let serverState: ServerState?
    private let state = _Locked(State())

    init(store: any ListStoreEngine, pollInterval: Duration, serverState: ServerState? = nil) {
        self.store = store
        self.pollInterval = pollInterval
        self.serverState = serverState
    }

    private func withState<T>(_ body: (inout State) -> T) -> T {
        state.withLock(body)
    }

    /// Reads the heads and ends the waits on time until cancelled or `close()`; ends every wait when
    /// it returns.
    func run() async {
        defer { close() }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.readHeads() }
            group.addTask { await self.endWaitsOnTime() }
            await group.next()
            group.cancelAll()
        }
    }

    /// The version `heads` holds for a deleted list.
    static let deleted = -1

    /// The most moves one read of the feed takes (it reads on while there are more).
    static let movesPerRead = 1_000

    /// The most recent moves kept for the feed's waits (`State.recent`).
    static let recentLimit = 4_096

    /// How long nobody waits before what the feed's reads found is forgotten. Waits come and go (a
    /// stream waits again a moment after a commit), and while the moves are kept the next read wakes
    /// only the waits they pass; the first read after forgetting wakes every wait.
    static let forgetAfter: Duration = .seconds(1)

    /// Reads the feed while anyone waits, and wakes the waits its moves end. While nobody waits it
    /// rests; the next wait wakes it, and it reads before it waits for a signal, since the signals
    /// of commits made while it rested are gone.
    private func readHeads() async {
        var identityReadAt: ContinuousClock.Instant?
        var retryAfter = Self.firstRetry
        while !Task.isCancelled, !isClosed {
            let generation = store.commitGeneration()
            let waiting = withState { state in
                defer { state.readWanted = false }
                return state.readNeeded
            }
            guard waiting else {
                retryAfter = Self.firstRetry
                let since = ContinuousClock.now
                await rest()
                // After a long quiet, forgotten: the next read would take every move since.
                if ContinuousClock.now - since >= Self.forgetAfter { withState { $0.forgetMoves(readThrough: nil, at: nil) } }
                continue
            }
            // The store's epoch, at most once a second while requests wait: `advance-epoch` ends
            // the event streams (they tell their clients to resync).
            if identityReadAt.map({ ContinuousClock.now - $0 >= .seconds(1) }) ?? true {
                identityReadAt = .now
                await readIdentity()
            }
            if await readFeed(generation: generation) {
                retryAfter = Self.firstRetry
                await store.waitForCommit(after: generation, timeout: pollInterval)
            } else {
                // What the store holds past the position read is not read yet (a commit's signal
                // may be taken): the feed is read again soon, whatever comes.
                await store.waitForCommit(after: generation, timeout: min(pollInterval, retryAfter))
                retryAfter = min(retryAfter * 2, Self.lastRetry)
            }
        }
    }

    /// The first wait before the feed is read again after a failed read (doubling up to `lastRetry`).
    static let firstRetry: Duration = .milliseconds(50)
    /// The longest wait before the feed is read again after reads the store did not answer.
    static let lastRetry: Duration = .seconds(1)

    /// Returns when a wait is added or a read wanted, when the watcher closes, or when the task is
    /// cancelled; at once if one of them came already.
    private func rest() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let rests = withState { state -> Bool in
                    guard !state.readNeeded, !state.closed, !state.stopped else { return false }
                    state.resting = continuation
                    return true
                }
                if !rests { continuation.resume() }
            }
        } onCancel: {
            withState { state in
                state.stopped = true
                return state.wakeLoop()
            }?.resume()
        }
    }

    /// Whether the loop rests because nobody waits (for tests).
    var isResting: Bool { withState { $0.resting != nil } }

    /// Reads the feed's moves past the position read through, and takes them (`movesRead`);
    /// `false` when the store did not answer (the waits are left as they are).
    private func readFeed(generation: UInt64) async -> Bool {
        let start = withState { $0.position }
        var position = start
        var moves = [FeedMove]()
        while true {
            guard let read = try? await store.feedMoves(after: position, limit: Self.movesPerRead) else { return false }
            guard let at = position, read.last >= at else {
                // The first read, or a feed that went back (the store restored): from its end on.
                // The waits read again (a commit may have landed between their read and this one).
                endAll(returning: true)
                withState { $0.forgetMoves(readThrough: read.last, at: generation) }
                return true
            }
            moves += read.moves
            position = read.moves.last?.position ?? at
            if read.moves.count < Self.movesPerRead { break }
        }
        movesRead(moves, through: position, generation: generation)
        return true
    }

    /// Takes the moves a read found after commit generation `generation`, and wakes the waits they end.
    /// - Complexity: O(moves + waits of the lists that moved + feed waits).
    private func movesRead(_ moves: [FeedMove], through position: Int?, generation: UInt64) {
        let woken = withState { state -> [CheckedContinuation<Bool, Never>] in
            state.position = position
            state.readAt = generation
            guard !moves.isEmpty else { return [] }
            state.recent += moves
            if state.recent.count > 2 * Self.recentLimit {
                let dropped = state.recent.count - Self.recentLimit
                state.recentFrom = state.recent[dropped - 1].position
                state.recent.removeFirst(dropped)
            }
            var moved = [String: Int]()
            for move in moves { moved[move.list] = move.version ?? Self.deleted }
            var ids = [UInt64]()
            for (list, version) in moved {
                state.heads[list] = version
                for id in state.byList[list] ?? [] {
                    guard case .list(_, let after)? = state.waiters[id]?.target, version != after else { continue }
                    ids.append(id)
                }
            }
            for id in state.feed {
                guard case .feed(let includes, let after)? = state.waiters[id]?.target else { continue }
                if moves.contains(where: { $0.position > after && includes($0.list) }) { ids.append(id) }
            }
            return ids.compactMap { state.remove($0) }
        }
        for continuation in woken { continuation.resume(returning: true) }
    }

    /// Reads the store's identity; when its epoch changed, wakes every wait, whose request finds
    /// it changed (`ServerState.storeIdentity`) and ends.
    private func readIdentity() async {
        guard let serverState else { return }
        serverState.countIdentityRead()
        guard let identity = try? await store.identity() else { return }
        let known = serverState.storeIdentity
        serverState.storeIdentity = identity
        if let known, known != identity {
            withState { $0.forgetMoves(readThrough: nil, at: nil) }
            endAll(returning: true)
        }
    }

    /// Ends each wait at its deadline (at most `pollInterval` late).
    private func endWaitsOnTime() async {
        while !Task.isCancelled, !isClosed {
            try? await Task.sleep(for: expire())
        }
    }

    /// Ends the waits whose deadline has passed; returns how long until the next deadline
    /// (`pollInterval` when none is sooner).
    private func expire() -> Duration {
        let now = ContinuousClock.now
        let (expired, next) = withState { state -> ([CheckedContinuation<Bool, Never>], ContinuousClock.Instant?) in
            var next: ContinuousClock.Instant?
            var ids = [UInt64]()
            for (id, waiter) in state.waiters {
                if waiter.deadline <= now {
                    ids.append(id)
                } else if next.map({ waiter.deadline < $0 }) ?? true {
                    next = waiter.deadline
                }
            }
            return (ids.compactMap { state.remove($0) }, next)
        }
        for continuation in expired { continuation.resume(returning: false) }
        // A tick of `pollInterval` at most, never less than a tenth of it: a scan of every wait
        // costs O(waits), and deadlines a few milliseconds apart must not make it run each time.
        guard let next else { return pollInterval }
        return min(pollInterval, max(pollInterval / 10, next - now))
    }

    /// Returns `true` as soon as the feed says `list` moved to another version than `version`;
    /// `false` after `timeout`, on cancellation or `close()`, when the client hangs up (`hangUp`),
    /// or when the access rules in force are no longer of generation `accessGeneration` (the caller
    /// checks its access again).
    func wait(for list: String, after version: Int, timeout: Duration, accessGeneration: UInt64? = nil, hangUp: HangUpWatch? = nil) async -> Bool {
        await waiting(for: .list(list, after: version), timeout: timeout, accessGeneration: accessGeneration, hangUp: hangUp) { state in
            // A move the feed already showed passed it (a commit that landed after the caller read).
            state.heads[list].map { $0 > version } ?? false
        }
    }

    /// Returns `true` as soon as a list `includes` accepts moved past the feed position `position`
    /// (at once when the moves already read show one); `false` as
    /// `wait(for:after:timeout:accessGeneration:hangUp:)` does.
    func waitForFeed(
        includes: @escaping @Sendable (String) -> Bool, after position: Int, timeout: Duration, accessGeneration: UInt64? = nil,
        hangUp: HangUpWatch? = nil
    ) async -> Bool {
        await waiting(for: .feed(includes: includes, after: position), timeout: timeout, accessGeneration: accessGeneration, hangUp: hangUp) { state in
            guard let read = state.position, position < read else { return false }
            // Moves past the caller's position that are no longer kept: it reads again.
            guard let from = state.recentFrom, position >= from else { return true }
            return state.recent.contains { $0.position > position && includes($0.list) }
        }
    }

    /// Where a feed stream at `position` may move its cursor without reading: the last position read
    /// and its fingerprint, when the moves kept since hold none of its lists; `nil` when they do not tell.
    /// - Complexity: O(moves kept past `position`).
    func feedPosition(after position: Int, includes: (String) -> Bool) -> (position: Int, fingerprint: Int64?)? {
        withState { state in
            guard let read = state.position, read > position, let from = state.recentFrom, position >= from,
                let last = state.recent.last, last.position == read,
                !state.recent.contains(where: { $0.position > position && includes($0.list) })
            else { return nil }
            return (read, last.fingerprint)
        }
    }

    /// Adds a wait for `target` until `timeout`, unless `passed` says the last read of the feed
    /// already passed it (`true` at once).
    private func waiting(
        for target: Target, timeout: Duration, accessGeneration: UInt64?, hangUp: HangUpWatch?, passed: @escaping (State) -> Bool
    ) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        let id = withState { state -> UInt64 in
            state.nextID &+= 1
            return state.nextID
        }
        defer {
            hangUp?.clear()
            withState { _ = $0.cancelled.remove(id) }
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let (added, loop) = withState { state -> (Bool?, CheckedContinuation<Void, Never>?) in
                    guard !state.closed, !state.cancelled.contains(id) else { return (false, nil) }
                    // The rules changed since the caller checked them.
                    if let accessGeneration, let current = serverState?.accessGeneration, current != accessGeneration { return (false, nil) }
                    if passed(state) {
                        state.readWanted = true
                        return (true, state.wakeLoop())
                    }
                    state.waiters[id] = Waiter(target: target, deadline: deadline, accessGeneration: accessGeneration, continuation: continuation)
                    switch target {
                    case .list(let list, _): state.byList[list, default: []].insert(id)
                    case .feed: state.feed.insert(id)
                    }
                    return (nil, state.wakeLoop())
                }
                loop?.resume()
                if let added { return continuation.resume(returning: added) }
                // A client that hangs up takes its wait out of the table.
                hangUp?.onClose { [self] in end(id) }
            }
        } onCancel: {
            let continuation = withState { state in
                let continuation = state.remove(id)
                if continuation == nil { state.cancelled.insert(id) }
                return continuation
            }
            continuation?.resume(returning: false)
        }
    }

    /// Ends the wait `id` (`false`), if it is in the table.
    private func end(_ id: UInt64) {
        withState { $0.remove(id) }?.resume(returning: false)
    }

    /// Ends the waits that rest on access rules other than those in force now (they return
    /// `false`, and their callers check their access again): the access file was read again.
    /// - Complexity: O(waits).
    func accessChanged() {
        guard let current = serverState?.accessGeneration else { return }
        let stale = withState { state -> [CheckedContinuation<Bool, Never>] in
            let ids = state.waiters.filter { $0.value.accessGeneration.map { $0 != current } ?? false }.map(\.key)
            return ids.compactMap { state.remove($0) }
        }
        for continuation in stale { continuation.resume(returning: false) }
    }

    /// Ends every wait, returning `woken`.
    private func endAll(returning woken: Bool) {
        let all = withState { state -> [CheckedContinuation<Bool, Never>] in
            let all = state.waiters.values.map(\.continuation)
            state.waiters = [:]
            state.byList = [:]
            state.feed = []
            return all
        }
        for continuation in all { continuation.resume(returning: woken) }
    }

    /// Ends every wait now and every later one at once (the server is shutting down).
    func close() {
        withState { state in
            state.closed = true
            return state.wakeLoop()
        }?.resume()
        endAll(returning: false)
    }

    /// Whether `close()` was called.
    var isClosed: Bool { withState { $0.closed } }

    /// How many requests wait (long polls, and event streams at the heads).
    var waitingCount: Int { withState { $0.waiters.count } }
}
