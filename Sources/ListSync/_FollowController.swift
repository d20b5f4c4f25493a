/// The background sync of a model (`ReplicaListModel`, `ReplicaSetModel`) and its pauses, written
/// once for both: at most one follow runs at a time, none while a `sync()` runs (syncs run one after
/// another, and pause the follow, which starts again after them), and only the follow launched last
/// may report its end.
///
/// `launch` starts a follow with the settings of `start(_:)` and a generation; the follow calls
/// `ended(_:failed:)` with that generation when it ends. `onFollowing` hears whether the background
/// sync runs (`true` from `start`, `false` once no follow runs and none should).
@MainActor
final class _FollowController {
    /// How the follow runs, while it should (`start` to `stop`, or until a follow failed).
    private(set) var settings: _FollowSettings?
    private var following: Task<Void, Never>?
    private var generation: UInt64 = 0
    private var syncRunning = false
    /// The last `exclusively` call: the next one waits for it.
    private var lastSync: Task<Void, Never>?
    private let launch: @MainActor (_FollowSettings, UInt64) -> Task<Void, Never>
    private let onFollowing: @MainActor (Bool) -> Void

    init(
        launch: @escaping @MainActor (_FollowSettings, UInt64) -> Task<Void, Never>, onFollowing: @escaping @MainActor (Bool) -> Void
    ) {
        self.launch = launch
        self.onFollowing = onFollowing
    }

    deinit {
        following?.cancel()
    }

    /// The background sync should run with `settings` (new settings apply from its next launch).
    func start(_ settings: _FollowSettings) {
        self.settings = settings
        onFollowing(true)
        settle()
    }

    /// The background sync should stop: the follow is cancelled, and `onFollowing(false)` comes
    /// once it has ended.
    func stop() {
        settings = nil
        following?.cancel()
        settle()
    }

    /// Takes the end of the follow of `generation`: `false` (and nothing changes) when it is not the
    /// one launched last. A failed follow stops the background sync.
    func ended(_ generation: UInt64, failed: Bool) -> Bool {
        guard generation == self.generation else { return false }
        following = nil
        if failed { settings = nil }
        settle()
        return true
    }

    /// Runs `body` (a sync) after the ones called before it, with the follow paused: cancelled and
    /// ended before `body` starts, launched again after it ends if it should run.
    func exclusively<T: Sendable>(_ body: @escaping @MainActor () async -> T) async -> T {
        let previous = lastSync
        let task = Task { @MainActor [weak self] () -> T in
            _ = await previous?.value
            guard let self else { return await body() }
            self.syncRunning = true
            if let running = self.following {
                running.cancel()
                await running.value
            }
            let result = await body()
            self.syncRunning = false
            self.settle()
            return result
        }
        lastSync = Task { _ = await task.value }
        return await withTaskCancellationHandler { await task.value } onCancel: { task.cancel() }
    }

    /// Once no follow and no sync runs: launches the follow if it should run, or reports that it
    /// stopped.
    private func settle() {
        guard following == nil, !syncRunning else { return }
        if let settings {
            generation += 1
            following = launch(settings, generation)
            onFollowing(true)
        } else {
            onFollowing(false)
        }
    }
}
