import Foundation
import ListMerge
import ListStore
import Observation

/// A replica set as an observable model for an app: the names of the set's lists, one
/// ``ReplicaListModel`` per list (its sections, and its staged changesets as transitions), and a
/// background sync of the whole set over one connection.
///
/// ```swift
/// let set = try ReplicaSet(store: try Store(path: "ana.liststore"), lists: "users/ana/**")
/// let model = ReplicaSetModel(set: set, source: try HTTPSource(url, tokenProvider: signIn.token))
/// model.start()                                   // push and pull every list in the background
/// List(model.lists, id: \.self) { name in NavigationLink(name) { ListView(model: model.model(for: name)) } }
/// ```
///
/// `start(retrying:localPollInterval:)` follows the set (`ReplicaSet.follow(from:pushing:…)`) off
/// the main actor: each local edit made through a list's model is pushed, each change of the source
/// is applied as it lands, and the list models the change concerns publish it (their
/// `transitions()`). Lists created at the source appear in `lists`; deleted ones leave it, with the
/// local changes they held in `status.lastConflicts` (`listDeleted`). A list's model does not sync
/// by itself: the set does it for all of them.
///
/// The model never touches SQLite on the main actor: it reads the store and syncs off it. A new
/// model has no lists until it has read them, which it starts doing at once (`status.isLoaded`).
///
/// Needs the Observation framework: macOS 14, iOS 17 and later on Apple platforms (not built on
/// this project's Linux CI for Apple platforms; it is on Linux).
@available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
@MainActor @Observable
public final class ReplicaSetModel {
    /// Where the set stands.
    public struct Status: Sendable {
        /// Whether the background sync runs.
        public var isFollowing = false
        /// Whether the source could not be reached at the last attempt (it is retried).
        public var isOffline = false
        /// The last error of a sync, cleared by the next one that succeeds.
        public var lastError: (any Error)?
        /// The local changes dropped with lists deleted at the source, by list (see
        /// `ReplicaSetPosition.lastConflicts`).
        public var lastConflicts: [String: [Conflict]] = [:]
        /// Whether the model has read the set's lists from the store (`lists` is empty before).
        public var isLoaded = false
        /// When the source was last reached successfully: the end of the last `sync()` that
        /// succeeded, or of the last change the background sync applied.
        public var lastSync: Date?
        /// The copy in pages under way, of the list it names (a list's first sync or resync):
        /// `ProgressView(value: status.progress?.fractionCompleted ?? 0)`; `nil` when none is.
        public var progress: SyncProgress?

        /// A status before anything happened.
        public init() {}
    }

    /// The replica set.
    public let set: ReplicaSet<Store>
    /// The source it syncs with.
    public let source: any FeedSource
    /// The names of the set's lists in the replica store, in code point order.
    public private(set) var lists: [String]
    /// Syncing, offline, the last error, and the conflicts of deleted lists (read at each change).
    public private(set) var status = Status()

    @ObservationIgnored private var models: [String: ReplicaListModel] = [:]
    /// The refreshes started, and the one whose lists are shown.
    @ObservationIgnored private var refreshes: UInt64 = 0
    @ObservationIgnored private var shownRefresh: UInt64 = 0
    /// The background sync and its pauses: one follow at a time, none during a `sync()` (the same
    /// controller as `ReplicaListModel`'s).
    @ObservationIgnored private var follow: _FollowController!
    /// Progress reports numbered as they are made (off the main actor), and the last shown or
    /// passed: a report that hops to the main actor late is not shown over a newer state.
    @ObservationIgnored private let progressReports = _Locked(UInt64(0))
    @ObservationIgnored private var progressShown: UInt64 = 0

    /// A model of `set`, syncing with `source`. It reads the set's lists off the main actor at once
    /// (`status.isLoaded`; `await refresh()` waits for it).
    /// - Complexity: O(1) here; the lists are read in the background, O(lists of the store).
    public init(set: ReplicaSet<Store>, source: any FeedSource) {
        self.set = set
        self.source = source
        lists = []
        follow = _FollowController(
            launch: { [weak self] settings, generation in self?.launchFollow(settings, generation) ?? Task {} },
            onFollowing: { [weak self] following in
                if let self, self.status.isFollowing != following { self.status.isFollowing = following }
            })
        Task { [weak self] in await self?.refresh() }
    }

    /// Reads the set's lists from the store, off the main actor, into `lists`: for lists created or
    /// deleted in the replica's store other than through this model's syncs. Errors land in
    /// `status.lastError`.
    public func refresh() async {
        let set = set
        refreshes += 1
        let started = refreshes
        do {
            let names = try await Self.readLists(set)
            // A read that started later has answered or will: the newer one wins.
            guard started > shownRefresh else { return }
            shownRefresh = started
            if names != lists { lists = names }
            if !status.isLoaded { status.isLoaded = true }
        } catch {
            status.lastError = error
        }
    }

    /// The model of the set's list `list` (made once, then the same): its sections and transitions
    /// follow what the set applies. Edits through it are pushed by the set's background sync.
    public func model(for list: String) -> ReplicaListModel {
        if let model = models[list] { return model }
        let model = ReplicaListModel(replica: Replica(store: set.store, list: list), source: source)
        models[list] = model
        return model
    }

    /// Pushes every list's local changes, then pulls the set, off the main actor; publishes what
    /// changed. Errors land in `status`. One sync runs at a time (a call waits for the one under
    /// way); the background sync is paused meanwhile and resumed after.
    /// - Returns: what the sync did, or nil when it failed.
    @discardableResult
    public func sync() async -> ReplicaSetSyncResult? {
        await follow.exclusively { [weak self] in await self?.syncNow() }
    }

    /// A sync, run by `follow.exclusively` (the background sync paused).
    private func syncNow() async -> ReplicaSetSyncResult? {
        let (set, source) = (reportingSet(), source)
        let outcome = await Task.detached { try await set.sync(with: source) }.result
        endProgress()
        switch outcome {
        case .success(let result):
            status.lastError = nil
            status.isOffline = false
            status.lastSync = Date()
            await changed(result.pull.changes)
            return result
        case .failure(let error):
            status.lastError = error
            status.isOffline = (error as? SyncError)?.isTransient ?? false
            return nil
        }
    }

    /// Syncs the set in the background, off the main actor, until `stop()`: local edits pushed as
    /// they are committed, the source's changes applied as they land (one event stream for the
    /// whole set from a server), transient failures retried with `retry`'s delays. Calling it while
    /// the background sync runs keeps it running; the new settings apply from its next restart.
    public func start(retrying retry: RetryPolicy = .standard, localPollInterval: Duration = .seconds(1)) {
        follow.start(_FollowSettings(retry: retry, wait: .seconds(30), localPollInterval: localPollInterval))
    }

    /// Stops the background sync: `status.isFollowing` turns `false` once it has ended. Local
    /// changes stay committed and pending until the next sync.
    public func stop() {
        follow.stop()
    }

    // MARK: - Internals

    /// The set, with its copies' progress published as `status.progress`.
    private func reportingSet() -> ReplicaSet<Store> {
        var set = set
        let reports = progressReports
        set.onProgress = { [weak self] progress in
            let number = reports.withLock { count in
                count += 1
                return count
            }
            Task { @MainActor [weak self] in self?.show(progress, number: number) }
        }
        return set
    }

    private func show(_ progress: SyncProgress, number: UInt64) {
        guard number > progressShown else { return }
        progressShown = number
        status.progress = progress
    }

    /// Clears `status.progress` once the copies it showed are done: later reports of them pass.
    private func endProgress() {
        progressShown = max(progressShown, progressReports.withLock { $0 })
        if status.progress != nil { status.progress = nil }
    }

    private func launchFollow(_ settings: _FollowSettings, _ generation: UInt64) -> Task<Void, Never> {
        let (set, source) = (reportingSet(), source)
        return Task.detached { [weak self] in
            var failure: (any Error)?
            do {
                try await set.follow(
                    from: source, pushing: true, localPollInterval: settings.localPollInterval, retrying: settings.retry,
                    onEvent: { [weak self] event in await self?.heard(event) },
                    onChange: { [weak self] change in
                        guard let self else { throw CancellationError() }  // the model went away
                        await self.changed([change])
                    })
            } catch {
                if !Task.isCancelled, !(error is CancellationError) { failure = error }
            }
            await self?.followEnded(generation, failure: failure)
        }
    }

    private func changed(_ changes: [ReplicaSetChange]) async {
        endProgress()
        status.isOffline = false
        status.lastError = nil
        status.lastSync = Date()
        await refresh()
        if let position = try? await set.position() { status.lastConflicts = position.lastConflicts }
        for change in changes {
            if change.kind == .deleted {
                models[change.list] = nil
            } else {
                await models[change.list]?.refresh()
            }
        }
    }

    private func heard(_ event: FollowEvent) {
        switch event {
        case .retrying(let error, _, _):
            endProgress()  // the copy under way, if any, goes on at the next attempt
            status.isOffline = true
            status.lastError = error
        case .reconnected:
            status.isOffline = false
            status.lastError = nil
        }
    }

    private func followEnded(_ generation: UInt64, failure: (any Error)?) {
        guard follow.ended(generation, failed: failure != nil) else { return }
        endProgress()
        if let failure { status.lastError = failure }
    }

    /// The set's lists in its store, read off the main actor.
    nonisolated private static func readLists(_ set: ReplicaSet<Store>) async throws -> [String] {
        guard set.store.exists else { return [] }
        return try await set.store.lists().map(\.name).filter { set.pattern.matches($0) }
    }
}
