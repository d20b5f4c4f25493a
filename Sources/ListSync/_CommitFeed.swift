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
    /// Moves (under `signalKey`) when an entry comes or the feed ends.
    private let signal = CommitSignal()

    private struct State {
        var entries: [JournalEntry] = []
        var failure: (any Error)?
        var ended = false
    }

    /// A feed of `list`'s commits after `version` in `source` (whose identity is `identity`).
    init(_ source: some ListSource, list: String, after version: Int, identity: StoreIdentity, pageSize: Int, wait: Duration) {
        self.identity = identity
        let (state, signal) = (state, signal)
        reader = Task {
            var failure: (any Error)?
            do {
                for try await entry in source.commits(of: list, after: version, pageSize: pageSize, wait: wait) {
                    state.withLock { $0.entries.append(entry) }
                    signal.notify(path: Self.signalKey)
                }
            } catch {
                failure = error
            }
            state.withLock { state in
                state.ended = true
                state.failure = failure
            }
            signal.notify(path: Self.signalKey)
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
            // Read before the state: an entry that comes after the state is read moves it.
            let generation = signal.generation(of: Self.signalKey)
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
            let now = ContinuousClock.now
            if ended || Task.isCancelled || now >= deadline { return nil }
            await signal.wait(path: Self.signalKey, unlessGenerationIsNot: generation, timeout: deadline - now)
        }
    }

    /// The one key of the feed's own signal.
    private static let signalKey = "/commit-feed"
}
