import Foundation
import ListStoreCore

/// Wakes the requests that wait for a list to pass a version (long polls and event streams): one
/// loop reads the heads for all of them, at once after a commit the store learns of (this process's,
/// on PostgreSQL other servers' through `NOTIFY`, on a Linux SQLite file other processes' through
/// inotify) and every `pollInterval` for the others, so a
/// thousand waiting clients cost one query. A second loop ends the waits whose time is up, so a wait
/// costs an entry in a table, not a task and a timer of its own (a woken long poll would otherwise
/// leave its timer running for the rest of its `wait`), and a store slow to answer does not delay
/// the timeouts.
final class HeadWatcher: Sendable {
    private struct Waiter {
        var list: String
        var after: Int
        var deadline: ContinuousClock.Instant
        /// The generation of the access rules the wait rests on (`nil`: none, the service token's).
        var accessGeneration: UInt64?
        var continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var waiters: [UInt64: Waiter] = [:]
        var nextID: UInt64 = 0
        /// Waits cancelled before they were added to `waiters` (they end at once when they are).
        var cancelled: Set<UInt64> = []
        var closed = false
        /// The heads the last read found: a wait for a version they are already past ends at once.
        var heads: [String: Int] = [:]
    }

    let store: any ListStoreEngine
    let pollInterval: Duration
    /// The event streams at the heads, written to from each read of the heads.
    let fanout: EventFanout?
    /// The feed event streams at the feed's head, written to when the store may have a new commit.
    let feedFanout: FeedFanout?
    /// The long polls taken beneath Hummingbird, woken from each read of the heads.
    let longPolls: LongPollFanout?
    /// The server's state, whose access rules the waits of users' tokens rest on.
    let serverState: ServerState?
    private let state = _Locked(State())

    init(
        store: any ListStoreEngine, pollInterval: Duration, fanout: EventFanout? = nil, feedFanout: FeedFanout? = nil,
        longPolls: LongPollFanout? = nil, serverState: ServerState? = nil
    ) {
        self.store = store
        self.pollInterval = pollInterval
        self.fanout = fanout
        self.feedFanout = feedFanout
        self.longPolls = longPolls
        self.serverState = serverState
    }

    private func withState<T>(_ body: (inout State) -> T) -> T {
        state.withLock(body)
    }

    /// Reads the heads while anyone waits, and ends the waits whose time is up, until the task is
    /// cancelled or `close()` is called; ends every wait when it returns. The two run apart, so a
    /// store that is slow to answer does not hold back the waits' timeouts.
    func run() async {
        defer { close() }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.readHeads() }
            group.addTask { await self.endWaitsOnTime() }
            await group.next()
            group.cancelAll()
        }
    }

    /// Reads the heads at once after a commit the store learns of, and every `pollInterval`,
    /// while anyone waits; wakes the waits they pass.
    ///
    /// A commit the store learns of is read while an event stream of a list is open, even when no
    /// one waits at that moment: event streams handed back to their own tasks (a connection that
    /// could not take more) are not counted as waiting, and when one follows again the fan-out must
    /// already know the head it may be behind, since the store tells of each commit only once. (The
    /// heads are every list's: in a store of 100,000 lists a read that the feed's followers do not
    /// need.) The feed's followers are poked first, before that read.
    private func readHeads() async {
        var readAt: UInt64?
        var identityReadAt: ContinuousClock.Instant?
        while !Task.isCancelled, !isClosed {
            let generation = store.commitGeneration()
            // The store's epoch, at most once a second while streams are open: `advance-epoch`
            // ends them (they tell their clients to resync).
            if fanout?.hasStreams == true || (feedFanout?.waitingCount ?? 0) > 0, identityReadAt.map({ ContinuousClock.now - $0 >= .seconds(1) }) ?? true {
                identityReadAt = .now
                await readIdentity()
            }
            // The feed's followers read the feed themselves, once for all of them.
            feedFanout?.poke()
            let waiting = withState { !$0.waiters.isEmpty } || fanout?.isFollowing == true || longPolls?.isWaiting == true
            let reads = waiting || (generation != readAt && fanout?.hasStreams == true)
            let lists = reads ? try? await store.lists() : nil
            // A store that does not answer leaves the polls at the heads to the route, which reports it.
            if reads && lists == nil { longPolls?.headsUnknown() }
            if let lists {
                readAt = generation
                let heads = Dictionary(lists.map { ($0.name, $0.version) }, uniquingKeysWith: { a, _ in a })
                let woken = withState { state -> [CheckedContinuation<Bool, Never>] in
                    let ids = state.waiters.filter { entry in
                        Self.ends(waitFor: entry.value.list, after: entry.value.after, heads: heads, lastHeads: state.heads)
                    }.map(\.key)
                    state.heads = heads
                    return ids.compactMap { state.waiters.removeValue(forKey: $0)?.continuation }
                }
                for continuation in woken { continuation.resume(returning: true) }
                fanout?.headsRead(heads)
                longPolls?.headsRead(heads, generation: generation)
            }
            await store.waitForCommit(after: generation, timeout: pollInterval)
        }
    }

    /// Reads the store's identity; when its epoch changed, hands every stream back to it, which
    /// ends.
    private func readIdentity() async {
        guard let serverState else { return }
        serverState.countIdentityRead()
        guard let identity = try? await store.identity() else { return }
        let known = serverState.storeIdentity
        serverState.storeIdentity = identity
        if let known, known != identity {
            fanout?.epochChanged()
            feedFanout?.epochChanged()
        }
    }

    /// Ends each wait at its deadline (at most `pollInterval` late).
    private func endWaitsOnTime() async {
        while !Task.isCancelled, !isClosed {
            try? await Task.sleep(
                for: min(
                    pollInterval, expire(), fanout?.expire() ?? pollInterval, feedFanout?.expire() ?? pollInterval,
                    longPolls?.expire() ?? pollInterval))
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
            return (ids.compactMap { state.waiters.removeValue(forKey: $0)?.continuation }, next)
        }
        for continuation in expired { continuation.resume(returning: false) }
        guard let next else { return pollInterval }
        return max(.milliseconds(1), next - now)
    }

    /// Whether a read of the heads that found `heads`, after one that found `lastHeads`, ends a
    /// wait for `list` to pass `version`: the list's head is past it, or the list is gone (the last
    /// read found it and this one does not: it was deleted, and the request reads it again to
    /// answer so). The rule of the route's long polls and of `LongPollFanout`'s.
    /// - Complexity: O(1).
    static func ends(waitFor list: String, after version: Int, heads: [String: Int], lastHeads: [String: Int]) -> Bool {
        heads[list].map { $0 > version } ?? (lastHeads[list] != nil)
    }

    /// Returns `true` as soon as the head of `list` is past `version`, or the list is deleted
    /// (seen by the next read of the heads), `false` after `timeout` (ended by `run()`, at most
    /// `pollInterval` late), when the task is cancelled or the watcher closes, and, for a wait
    /// that rests on the access rules of generation `accessGeneration`, as soon as the rules in
    /// force are of another (`accessChanged()`): the caller checks its access again.
    func wait(for list: String, after version: Int, timeout: Duration, accessGeneration: UInt64? = nil) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        let id = withState { state -> UInt64 in
            state.nextID &+= 1
            return state.nextID
        }
        defer { withState { _ = $0.cancelled.remove(id) } }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let added = withState { state -> Bool? in
                    guard !state.closed, !state.cancelled.contains(id) else { return false }
                    // The rules changed since the caller checked them.
                    if let accessGeneration, let current = serverState?.accessGeneration, current != accessGeneration { return false }
                    // A commit the last read saw already passed it (it landed after the caller read).
                    if (state.heads[list] ?? -1) > version { return true }
                    state.waiters[id] = Waiter(
                        list: list, after: version, deadline: deadline, accessGeneration: accessGeneration, continuation: continuation)
                    return nil
                }
                if let added { continuation.resume(returning: added) }
            }
        } onCancel: {
            let waiter = withState { state in
                let waiter = state.waiters.removeValue(forKey: id)
                if waiter == nil { state.cancelled.insert(id) }
                return waiter
            }
            waiter?.continuation.resume(returning: false)
        }
    }

    /// Ends the waits that rest on access rules other than those in force now (they return
    /// `false`, and their callers check their access again): the access file was read again.
    /// - Complexity: O(waits).
    func accessChanged() {
        guard let current = serverState?.accessGeneration else { return }
        let stale = withState { state -> [CheckedContinuation<Bool, Never>] in
            let ids = state.waiters.filter { $0.value.accessGeneration.map { $0 != current } ?? false }.map(\.key)
            return ids.compactMap { state.waiters.removeValue(forKey: $0)?.continuation }
        }
        for continuation in stale { continuation.resume(returning: false) }
    }

    /// Ends every wait now and every later one at once (the server is shutting down).
    func close() {
        fanout?.close()
        feedFanout?.close()
        longPolls?.close()
        let all = withState { state -> [CheckedContinuation<Bool, Never>] in
            state.closed = true
            defer { state.waiters = [:] }
            return state.waiters.values.map(\.continuation)
        }
        for continuation in all { continuation.resume(returning: false) }
    }

    /// Whether `close()` was called.
    var isClosed: Bool { withState { $0.closed } }

    /// How many requests wait (long polls, and event streams written through their writers).
    var waitingCount: Int { withState { $0.waiters.count } }
}
