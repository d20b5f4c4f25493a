import ListStore

/// The commits of a source list after a version, read ahead by a task of their own
/// (`ListSource.commits(of:after:pageSize:wait:)`: from a server, its event stream) and kept until
/// a follower takes them: how `Replica.follow` waits for the source's next commit, and gets it
/// without asking again.
///
/// ```swift
/// let feed = _CommitFeed(source, list: "inbox", after: 41, identity: identity, pageSize: 100, wait: .seconds(30))
/// if let entries = try await feed.entries(after: 41, timeout: .seconds(30)) { … }   // 42, 43, …
/// ```
final class _CommitFeed: Sendable {
    /// The source store's identity when the feed started.
    let identity: StoreIdentity
    private let state = _Locked(State())
    private let reader: Task<Void, Never>

    private struct State {
        var entries: [JournalEntry] = []
        var failure: (any Error)?
        var ended = false
        var waiting: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter = 0
    }

    /// A feed of `list`'s commits after `version` in `source` (whose identity is `identity`).
    init(_ source: some ListSource, list: String, after version: Int, identity: StoreIdentity, pageSize: Int, wait: Duration) {
        self.identity = identity
        let state = state
        reader = Task {
            var failure: (any Error)?
            do {
                for try await entry in source.commits(of: list, after: version, pageSize: pageSize, wait: wait) {
                    let waiting = state.withLock { state in
                        state.entries.append(entry)
                        defer { state.waiting = [:] }
                        return state.waiting.values
                    }
                    for continuation in waiting { continuation.resume() }
                }
            } catch {
                failure = error
            }
            let waiting = state.withLock { state in
                state.ended = true
                state.failure = failure
                defer { state.waiting = [:] }
                return state.waiting.values
            }
            for continuation in waiting { continuation.resume() }
        }
    }

    deinit {
        reader.cancel()
    }

    /// Whether the feed ended without a failure left to report (it was cancelled, or its source's
    /// stream ended): a follower starts another. A failure is thrown by `entries(after:timeout:)`.
    var hasEnded: Bool { state.withLock { $0.ended && $0.entries.isEmpty && $0.failure == nil } }

    /// The entries read after `version` (those up to it are dropped), waiting up to `timeout` for one;
    /// `nil` when none came.
    /// - Throws: why the feed ended, once its entries are taken.
    func entries(after version: Int, timeout: Duration) async throws -> [JournalEntry]? {
        let deadline = ContinuousClock.now + timeout
        while true {
            let (taken, failure, ended) = state.withLock { state -> ([JournalEntry], (any Error)?, Bool) in
                state.entries.removeAll { $0.version <= version }
                defer { state.entries = [] }
                return (state.entries, state.failure, state.ended)
            }
            if !taken.isEmpty { return taken }
            if let failure {
                state.withLock { $0.failure = nil }  // reported once; the feed has ended
                throw failure
            }
            if ended || Task.isCancelled || ContinuousClock.now >= deadline { return nil }
            await waitForEntries(until: deadline)
        }
    }

    /// Returns when an entry comes or the feed ends, at `deadline`, or when the task is cancelled.
    private func waitForEntries(until deadline: ContinuousClock.Instant) async {
        let id = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        let wake: @Sendable () -> Void = { [state] in state.withLock { $0.waiting.removeValue(forKey: id) }?.resume() }
        let timer = Task {
            try? await Task.sleep(until: deadline)
            wake()
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> Bool in
                    guard state.entries.isEmpty, !state.ended, !Task.isCancelled, ContinuousClock.now < deadline else { return true }
                    state.waiting[id] = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            wake()
        }
        timer.cancel()
    }
}
