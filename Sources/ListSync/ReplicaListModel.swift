import Foundation
import ListDiff
import ListMerge
@_spi(Replication) import ListStore
import Observation

/// A replica list as an observable model for an app's UI: it holds the list's sections, applies local
/// edits at once, syncs with the source in the background, and publishes the staged changeset of
/// every transition, so that SwiftUI redraws and UIKit animates the same changes.
///
/// The model shows the replica's head (`sections`, `version`). An edit is committed to the replica's
/// store on the spot, as a local change queued for the source, and `sections` is the
/// new head when `edit` returns. `sync()` pushes the local changes and pulls the source's; `start()`
/// does so in the background until `stop()`, pushing each local change as it lands and pulling each
/// source commit as it lands, riding out outages with a `RetryPolicy`. Each change of `sections`
/// comes with the changeset that turns the previous `sections` into the new one (`transitions()`):
/// a local edit's is its commit's changeset; a sync's is the replica's journal entries in between
/// (each pull is one entry: the source's commit, or the merge of the source's head with the local
/// changes still pending), or one minimal diff when the journal cannot tell.
///
/// SwiftUI reads the model like any `@Observable` object:
///
/// ```swift
/// struct InboxView: View {
///     @State var model: ReplicaListModel     // try ReplicaListModel(replica: replica, source: source)
///
///     var body: some View {
///         List(model.sections, id: \.model.id) { section in
///             Section(section.model.id) {
///                 ForEach(section.elements, id: \.id) { Text($0.id) }
///                     .onDelete { rows in
///                         Task {
///                             try await model.edit { draft in
///                                 for row in rows { try draft.removeElement(section.elements[row].id) }
///                             }
///                         }
///                     }
///             }
///         }
///         .refreshable { await model.sync() }
///         .onAppear { model.start() }
///         .onDisappear { model.stop() }
///         .overlay(alignment: .bottom) { if model.status.isOffline { Text("Offline") } }
///     }
/// }
/// ```
///
/// UIKit keeps a copy of what the view shows and animates every transition, stage by stage, with
/// `performBatchUpdates` (each stage is one safe batch update; see the stage contract):
///
/// ```swift
/// shown = model.sections                         // in the same main-actor turn as transitions()
/// let transitions = model.transitions()
/// updates = Task { [weak self] in
///     for await transition in transitions {
///         guard let self else { return }
///         try? transition.changeset.forEachStage(applyingTo: shown) { stage, after in
///             collectionView.performBatchUpdates { [self] in
///                 shown = after                  // the data source reads `shown`
///                 collectionView.deleteSections(IndexSet(stage.sectionDeleted))
///                 collectionView.insertSections(IndexSet(stage.sectionInserted.map(\.index)))
///                 for move in stage.sectionMoved { collectionView.moveSection(move.from, toSection: move.to) }
///                 collectionView.reloadSections(IndexSet(stage.sectionUpdated.map(\.index)))
///                 collectionView.deleteItems(at: stage.elementDeleted.map { IndexPath(item: $0.element, section: $0.section) })
///                 // … inserts, moves and reloads of elements alike
///             }
///         }
///     }
/// }
/// ```
///
/// The model lives on the main actor and never touches SQLite there: reading the store, committing
/// an edit and syncing run off it, and the results hop back to be published. A new model shows an
/// empty list until it has read the replica's head, which it starts doing at once
/// (`status.isLoaded`; the first transition, `.loaded`, brings the head in).
///
/// It needs the Observation framework: macOS 14, iOS 17, tvOS 17, watchOS 10 or visionOS 1 on
/// Apple platforms, while the rest of ListSync runs from macOS 13 and iOS 16.
///
/// - Complexity: an edit is one commit: O(n + k log k) for n items and k changes, plus the rows it
///   writes. Publishing a sync reads the replica's journal entries in between and checks the result
///   against the head's digest, O(n) (past 64 entries, it reads the head and diffs once:
///   O(n + k log n)), off the main actor.
@available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
@MainActor @Observable
public final class ReplicaListModel {
    /// Where the model stands with its source.
    public struct Status: Sendable {
        /// Local changes not pushed yet.
        public var pending = 0
        /// Local changes pushed that no pull has confirmed yet.
        public var unconfirmed = 0
        /// The source version of the confirmed state (the source's snapshot the replica last pulled);
        /// `nil` before the first pull.
        public var confirmedVersion: Int?
        /// What the source could not honour as written in the last push (empty when it merged cleanly).
        public var lastConflicts: [Conflict] = []
        /// Whether a `sync()` is under way.
        public var isSyncing = false
        /// Whether the background sync runs: from `start()` until its task has ended after `stop()`
        /// (or after an error that ended it, in `lastError`).
        public var isFollowing = false
        /// Whether the last attempt to reach the source failed with a transient error
        /// (`SyncError.isTransient`: no connection, a timeout, a server restarting); the background
        /// sync keeps retrying.
        public var isOffline = false
        /// The last error of a sync, of the background sync or of reading the store; `nil` again after
        /// the next successful sync.
        public var lastError: (any Error)?
        /// Whether the model has read the replica's head (it shows an empty list before).
        public var isLoaded = false
        /// When the source was last reached successfully: the end of the last `sync()` that
        /// succeeded, or of the last pull of the background sync that applied something. Every
        /// successful sync sets it, whether or not it changed the list.
        public var lastSync: Date?
        /// Whether `sections` are only the first pages of a first sync still under way: the top of
        /// the list, shown early; read-only (the replica holds no list yet, so edits are refused),
        /// and `false` again once the sync has made the replica.
        public var isPartial = false
        /// How far a first sync or a resync in pages has got while one runs (`nil` otherwise):
        /// `ProgressView(value: status.progress?.fractionCompleted ?? 0)`.
        public var progress: SyncProgress?

        /// A status with nothing pending, before the first pull.
        public init() {}

        /// Whether local changes have not reached the source's confirmed state yet.
        public var hasLocalChanges: Bool { pending + unconfirmed > 0 }
    }

    /// A change of `sections`, with the staged changeset that makes it.
    public struct Transition: Equatable, Sendable {
        /// What made the change.
        public enum Cause: Hashable, Sendable {
            /// The replica's head as the model first read it, from the empty list it showed before.
            case loaded
            /// An `edit` or `commit` of this model.
            case localEdit
            /// A sync: a pull of the source's commits, with the local changes rebased on top, or a
            /// commit to the replica's store that did not come through this model.
            case sync
            /// The first pages of a first sync still under way, shown before the replica holds the
            /// list (`status.isPartial`): the next transition, once the sync has made the replica,
            /// goes from them to the whole list.
            case firstPages
        }

        /// The staged changeset that turns the previous `sections` into `sections`: apply its stages
        /// in order, each one batch update.
        public var changeset: ListChangeset
        /// The replica's version before the transition.
        public var fromVersion: Int
        /// The replica's version after it.
        public var toVersion: Int
        /// The sections after it.
        public var sections: [ListSection]
        /// What made it.
        public var cause: Cause
    }

    /// The replica the model shows and writes to.
    public let replica: Replica<Store>
    /// The source it syncs with.
    public let source: any ListSource

    /// The replica's head: what the UI shows.
    public private(set) var sections: [ListSection]
    /// The replica's head version (its own numbering; `status.confirmedVersion` is the source's); 0
    /// for a list that has no version yet.
    public private(set) var version: Int
    /// Pending changes, the confirmed source version, the last conflicts, syncing and the last error.
    public private(set) var status: Status

    @ObservationIgnored private var subscribers: [UInt64: AsyncStream<Transition>.Continuation] = [:]
    /// Told of each transition as it is published, in the same main-actor turn (a typed model's).
    @ObservationIgnored var observers: [(Transition) -> Void] = []
    /// The first read of the head, started by `init`.
    @ObservationIgnored private var loading: Task<Void, Never>?
    @ObservationIgnored private var lastSubscriber: UInt64 = 0
    /// What orders the progress reports (`progressReporting(round:)`).
    @ObservationIgnored private var progressRound: UInt64 = 0
    @ObservationIgnored private var progressFloor = -1
    /// Whether a first sync's first pages were read to be shown (`showFirstPages()`).
    @ObservationIgnored private var firstPagesRead = false
    /// The background sync and its pauses: one follow at a time, none during a `sync()`.
    @ObservationIgnored private var follow: _FollowController!

    /// A model showing `replica`'s head and syncing it with `source`. It shows an empty list at
    /// first, and reads the replica's head off the main actor at once (`status.isLoaded`, a
    /// `.loaded` transition; `await refresh()` waits for it).
    ///
    /// ```swift
    /// let replica = Replica(store: try Store(path: "inbox.liststore"), list: "inbox")
    /// let model = ReplicaListModel(replica: replica, source: try HTTPSource("http://server:8080"))
    /// model.start()
    /// ```
    /// A replica that has never pulled shows an empty list until its first sync. A store that
    /// cannot be read leaves its error in `status.lastError`.
    /// - Complexity: O(1) here; the head is read in the background, O(n) for n items.
    public init(replica: Replica<Store>, source: any ListSource) {
        self.replica = replica
        self.source = source
        sections = []
        version = 0
        status = Status()
        follow = _FollowController(
            launch: { [weak self] settings, generation in self?.launchFollow(settings, generation) ?? Task {} },
            onFollowing: { [weak self] following in
                if let self, self.status.isFollowing != following { self.status.isFollowing = following }
            })
        loading = Task { [weak self] in await self?.catchUpWithStore() }
    }

    deinit {
        for continuation in subscribers.values { continuation.finish() }
    }

    // MARK: - Transitions

    /// The transitions from now on, in order, each with the changeset that turns the sections before
    /// it into the sections after it; every change of `sections` is one. Read `sections` in the same
    /// main-actor turn as this call: the first transition starts from there.
    ///
    /// Every call is a subscriber of its own; nothing is dropped (a slow reader buffers), and the
    /// stream ends when the iterating task is cancelled or the model goes away.
    public func transitions() -> AsyncStream<Transition> {
        let (stream, continuation) = AsyncStream.makeStream(of: Transition.self, bufferingPolicy: .unbounded)
        lastSubscriber += 1
        let id = lastSubscriber
        subscribers[id] = continuation
        continuation.onTermination = { [weak self] _ in
            Task { @MainActor in self?.subscribers[id] = nil }
        }
        return stream
    }

    // MARK: - Local edits

    /// Changes a copy of `sections` with `body` and commits it to the replica, off the main actor,
    /// as a local change queued for the source: when it returns, `sections` is the new head and the
    /// transition is published.
    ///
    /// ```swift
    /// try await model.edit(author: "ana") { draft in
    ///     try draft.append(ListItem(id: "m9", json: ["text": "new"]), toSection: "today")
    ///     try draft.moveElement("m2", to: ElementPath(section: 0, element: 0))
    /// }
    /// ```
    /// `body` runs on the main actor and sees `sections` as the UI shows them. If the replica's head
    /// moved on meanwhile (a pull committed and not published yet), the edit is rebased onto it by
    /// identity, as the source would merge it, instead of undoing the pull, and the transition is
    /// one diff.
    ///
    /// - Returns: the commit (`changeset`, `version`; `pendingSeq` when it was queued).
    /// - Throws: what `body` throws (nothing is committed), `StoreError` of the commit (`.invalidEdit`,
    ///   `.invalidSnapshot`, `.io`, …); the model is unchanged then.
    /// - Complexity: that of `Store.commit`: O(n + k log k) for n items and k changes, plus the rows
    ///   written.
    @discardableResult
    public func edit(
        author: String? = nil, message: String? = nil, _ body: (inout ListDraft<ListItem, ListItem>) throws -> Void
    ) async throws -> CommitResult {
        var draft = ListDraft(sections: sections)
        try body(&draft)
        return try await commit(draft.sections, author: author, message: message)
    }

    /// Commits `newSections` to the replica at once, as a local change queued for the source (see
    /// `edit(author:message:_:)`).
    ///
    /// ```swift
    /// var next = model.sections
    /// next[0].elements.removeFirst()
    /// try await model.commit(next, message: "archived")
    /// ```
    /// - Throws: `StoreError` of the commit (`.invalidSnapshot`, `.io`, …); the model is unchanged then.
    /// - Complexity: that of `Store.commit`, plus one O(n) comparison of the head with `sections` in its
    ///   transaction (and, when the head moved on, one rebase and one diff: O(n + k log n)).
    @discardableResult
    public func commit(_ newSections: [ListSection], author: String? = nil, message: String? = nil) async throws -> CommitResult {
        let base = sections
        let baseVersion = version
        // What the commit wrote, and whether it had to rebase (the head was not what the model shows).
        let landed = _Locked((sections: newSections, rebased: false))
        let result = try await replica.store.edit(replica.list, author: author, message: message) { draft in
            let rebased = draft.sections != base
            if rebased {
                // The head moved past what the model shows: rebase the change onto it.
                draft.sections = Rebase(Intent.changes(from: base, to: newSections), onto: draft.sections).snapshot
            } else {
                draft.sections = newSections
            }
            landed.withLock { $0 = (draft.sections, rebased) }
        }
        let (committed, rebased) = landed.withLock { $0 }
        // The model may have moved while the commit ran: a refresh that already shows the commit
        // has published it; otherwise publish from what it shows now. The commit's own changeset
        // goes from the head it was made on, which is what the model shows only when it neither
        // rebased nor saw the model move.
        if version < result.version {
            if !rebased, result.parentVersion == baseVersion, version == baseVersion {
                if result.changed { publish(result.changeset, sections: committed, version: result.version, cause: .localEdit) }
            } else {
                publish(ListChangeset(source: sections, target: committed), sections: committed, version: result.version, cause: .localEdit)
            }
        }
        // The pending count as the store has it now (a refresh under way may have counted the
        // change already: it is read, never added to).
        if result.pendingSeq != nil, let replicaStatus = try? await replica.store.replicaStatus(of: replica.list) {
            status.update(from: replicaStatus)
        }
        return result
    }

    // MARK: - Syncing

    /// Pushes the local changes to the source, then pulls the source's (`Replica.sync(with:)`), off
    /// the main actor, and publishes what the pull changed. Errors land in `status.lastError` (and
    /// `status.isOffline` for transient ones); the next successful sync clears them.
    ///
    /// ```swift
    /// List { … }.refreshable { await model.sync() }
    /// ```
    /// One sync runs at a time: a call waits for the one under way, then syncs again. While the
    /// background sync runs (`start()`), it is paused for the sync and resumed after, so that a sync
    /// also retries at once a source that was unreachable.
    ///
    /// - Returns: what the push and the pull did, or `nil` when the sync failed (see `status`).
    /// - Complexity: that of `Replica.sync(with:)`, plus reading the replica's new journal entries.
    @discardableResult
    public func sync() async -> ReplicaSyncResult? {
        await follow.exclusively { [weak self] in await self?.syncNow() }
    }

    /// Starts syncing in the background, off the main actor, until `stop()`: a follow with pushing
    /// (`Replica.follow(from:options:pushing:…)`) that pushes each local change as it is committed,
    /// pulls each source commit as it lands (a long poll over HTTP), and publishes each pull on the
    /// main actor. A transient failure sets `status.isOffline` and is retried with `retry`'s delays;
    /// any other error ends the background sync and lands in `status.lastError`.
    ///
    /// ```swift
    /// model.start()                                   // e.g. when the view appears
    /// model.stop()                                    // when it disappears
    /// ```
    /// Calling it while the background sync runs keeps it running; the new settings apply from its
    /// next restart (after a `sync()`).
    ///
    /// - Parameters:
    ///   - retry: the delays between attempts while the source cannot be reached.
    ///   - wait: how long one wait for a source commit lasts before the source is asked again.
    ///   - localPollInterval: how often commits of other processes to the replica's store are looked
    ///     for (this process's commits wake the sync at once).
    public func start(
        retrying retry: RetryPolicy = .standard, wait: Duration = .seconds(30), localPollInterval: Duration = .seconds(1)
    ) {
        // One still stopping restarts when it ends; during a `sync()`, it starts after it.
        follow.start(_FollowSettings(retry: retry, wait: wait, localPollInterval: localPollInterval))
    }

    /// Stops the background sync: its task is cancelled, and `status.isFollowing` turns `false` once
    /// it has ended. Local changes stay committed and pending until the next sync.
    public func stop() {
        follow.stop()
    }

    /// Brings `sections` up to the replica's head, reading the store off the main actor, and publishes
    /// the transition: for commits to the replica's store that did not come through this model or
    /// its syncs (another process, or a `Replica` used directly). Syncs do it themselves. It first
    /// waits for the read of the head that `init` started: once it returns, the model is loaded.
    ///
    /// - Complexity: reading the replica's journal entries after `version` and one digest of the list,
    ///   O(n) (past 64 entries, reading the head and one diff), off the main actor.
    public func refresh() async {
        await loading?.value  // the first read comes first
        await catchUpWithStore()
    }

    /// `refresh()`'s work: the replica's head read off the main actor, and published.
    private func catchUpWithStore() async {
        while true {
            let baseVersion = version
            let base = sections
            let replica = replica
            let read = await Self.offMain { try await Self.catchUp(replica, from: baseVersion, base) }
            guard version == baseVersion else { continue }  // a local edit landed meanwhile: read from it
            switch read {
            case .success(let update):
                if update.version != version || !update.changeset.isEmpty {
                    publish(update.changeset, sections: update.sections, version: update.version, cause: status.isLoaded ? .sync : .loaded)
                }
                if let replicaStatus = update.status { status.update(from: replicaStatus) }
                if !status.isLoaded { status.isLoaded = true }
            case .failure(let error):
                if !Task.isCancelled { status.lastError = error }
            }
            return
        }
    }

    // MARK: - Internals

    /// Applies a transition and hands it to every subscriber.
    private func publish(_ changeset: ListChangeset, sections newSections: [ListSection], version newVersion: Int, cause: Transition.Cause) {
        guard !changeset.isEmpty else {
            version = newVersion  // the same sections (an empty changeset means equal lists)
            return
        }
        let transition = Transition(
            changeset: changeset, fromVersion: version, toVersion: newVersion, sections: newSections, cause: cause)
        sections = newSections
        if (cause == .firstPages) != status.isPartial { status.isPartial = cause == .firstPages }
        version = newVersion
        for observer in observers { observer(transition) }
        for continuation in subscribers.values { continuation.yield(transition) }
    }

    /// A sync, run by `follow.exclusively`: the background sync is paused meanwhile (two pulls of
    /// one replica must not run at once).
    private func syncNow() async -> ReplicaSyncResult? {
        status.isSyncing = true
        defer { status.isSyncing = false }
        let replica = replica
        let source = source
        let options = progressReporting(round: progressRound)
        let outcome = await Self.offMain { try await replica.sync(with: source, options: options) }
        endProgress(reached: try? outcome.get().pull.version)
        switch outcome {
        case .success:
            status.lastError = nil
            status.isOffline = false
            status.lastSync = Date()
        case .failure(let error):
            if !(error is CancellationError) { recordFailure(error) }
        }
        await refresh()
        return try? outcome.get()
    }

    /// Pull options that publish a paged sync's progress as `status.progress`. Reports hop to the
    /// main actor in tasks of their own, so they are put in order here: one of a version the
    /// replica has reached (`endProgress(reached:)`), or older than the one shown, is dropped, and
    /// so is any report of a `sync()` that has ended (`round`).
    private func progressReporting(round: UInt64? = nil) -> ReplicaPullOptions {
        var options = ReplicaPullOptions()
        options.onProgress = { [weak self] progress in
            Task { @MainActor in
                guard let self, round == nil || self.progressRound == round, progress.version > self.progressFloor else { return }
                if let shown = self.status.progress, shown.version == progress.version, shown.records >= progress.records { return }
                self.status.progress = progress
                self.showFirstPages()
            }
        }
        return options
    }

    /// During a first sync (nothing shown, the replica holding no list yet), reads the first
    /// records landed, off the main actor, and shows them (`.firstPages`), once.
    private func showFirstPages() {
        guard !firstPagesRead, version == 0, sections.isEmpty, status.confirmedVersion == nil else { return }
        firstPagesRead = true
        let replica = replica
        Task { @MainActor in
            let read = await Self.offMain { try await replica.store.stagedSections(of: replica.list, limit: Self.firstPagesRecords) }
            // Shown only while the sync is still under way and nothing else was.
            guard case .success(let first) = read, !first.isEmpty, version == 0, sections.isEmpty, status.progress != nil else { return }
            publish(ListChangeset(source: [], target: first), sections: first, version: 0, cause: .firstPages)
        }
    }

    /// The records a first sync's early view shows at most (the top of the list: a few screens).
    package nonisolated static let firstPagesRecords = 5_000

    /// Ends what `progressReporting(round:)` publishes, once the replica has reached `version`.
    private func endProgress(reached version: Int?) {
        progressRound &+= 1
        if let version { progressFloor = max(progressFloor, version) }
        if status.progress != nil { status.progress = nil }
    }

    private func launchFollow(_ settings: _FollowSettings, _ generation: UInt64) -> Task<Void, Never> {
        let replica = replica
        let source = source
        let options = progressReporting()
        return Task.detached { [weak self] in
            var failure: (any Error)?
            do {
                try await replica.follow(
                    from: source, options: options, pushing: true, localPollInterval: settings.localPollInterval, wait: settings.wait,
                    retrying: settings.retry, onEvent: { event in await self?.heard(event) }
                ) { result in
                    guard let self else { throw CancellationError() }  // the model went away
                    await self.pulled(reaching: result.version)
                }
            } catch {
                if !Task.isCancelled, !(error is CancellationError) { failure = error }
            }
            await self?.followEnded(generation, failure: failure)
        }
    }

    private func heard(_ event: FollowEvent) {
        switch event {
        case .retrying(let error, _, _):
            status.isOffline = true
            status.lastError = error
        case .reconnected:
            status.isOffline = false
            status.lastError = nil
        }
    }

    private func pulled(reaching version: Int) async {
        endProgress(reached: version)
        status.isOffline = false
        status.lastError = nil
        status.lastSync = Date()
        await refresh()
    }

    private func followEnded(_ generation: UInt64, failure: (any Error)?) {
        guard follow.ended(generation, failed: failure != nil) else { return }
        if let failure { recordFailure(failure) }
    }

    private func recordFailure(_ error: any Error) {
        status.lastError = error
        status.isOffline = (error as? SyncError)?.isTransient ?? false
    }

    /// Runs `work` in a task of its own, off the main actor, cancelled with the caller.
    nonisolated private static func offMain<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) async
        -> Result<T, any Error>
    {
        let task = Task.detached { try await work() }
        return await withTaskCancellationHandler { await task.result } onCancel: { task.cancel() }
    }

    /// Past this many journal entries, a catch-up is one diff: cheaper to read and to animate.
    nonisolated private static let journalEntryLimit = 64

    /// What the replica's list holds after `version`, as one transition from `base` (the list at
    /// `version`): the stages of the journal entries in between, or one diff from the head when the
    /// journal cannot tell (pruned, more than `journalEntryLimit` entries, stages that do not
    /// reproduce the head's digest, a store that went back).
    nonisolated private static func catchUp(_ replica: Replica<Store>, from version: Int, _ base: [ListSection]) async throws -> _CatchUp {
        let store = replica.store
        let list = replica.list
        let unchanged = _CatchUp(changeset: ListChangeset(), sections: base, version: version, status: nil)
        guard store.exists else { return unchanged }
        let head: ListSummary
        do {
            head = try await store.summary(of: list)
        } catch StoreError.Code.listNotFound {
            return unchanged
        }
        let status = try await store.replicaStatus(of: list)
        // The same version of the same list (a replica replaced by one of a list made anew under
        // its name numbers its versions from 1 again: its digest tells them apart).
        if head.version == version, ListDigest.of(base) == head.digest {
            return _CatchUp(changeset: ListChangeset(), sections: base, version: version, status: status)
        }
        if head.version > version, head.version - version <= journalEntryLimit,
            let replayed = try? await replay(store, list, from: version, base, through: head.version)
        {
            return _CatchUp(changeset: replayed.changeset, sections: replayed.sections, version: replayed.version, status: status)
        }
        let snapshot = try await store.snapshot(of: list)
        return _CatchUp(
            changeset: ListChangeset(source: base, target: snapshot.sections), sections: snapshot.sections,
            version: snapshot.version, status: status)
    }

    /// The journal entries of `list` after `version`, up to `last`, applied to `base`: their stages in
    /// order, checked against the last entry's digest.
    nonisolated private static func replay(
        _ store: Store, _ list: String, from version: Int, _ base: [ListSection], through last: Int
    ) async throws -> (changeset: ListChangeset, sections: [ListSection], version: Int)? {
        var state = base
        var stages: [Stage<ListItem, ListItem>] = []
        var at = version
        var digest: ListDigest?
        while at < last {
            let page = try await store.journal(of: list, after: at, limit: min(100, last - at))
            for entry in page.entries {
                guard entry.parentVersion == at else { return nil }
                let (changeset, next) = try entry.changeset(applyingTo: state)
                stages += changeset.stages
                state = next
                at = entry.version
                digest = entry.digest
            }
            if page.entries.isEmpty { return nil }
        }
        guard at == last, let digest, ListDigest.of(state) == digest else { return nil }
        return (ListChangeset(stages: stages), state, at)
    }
}

/// How a model's background sync runs.
struct _FollowSettings: Sendable {
    var retry: RetryPolicy
    var wait: Duration
    var localPollInterval: Duration
}

/// What a model's catch-up read, off the main actor.
struct _CatchUp: Sendable {
    var changeset: ListChangeset
    var sections: [ListSection]
    var version: Int
    var status: ReplicaStatus?
}

@available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
extension ReplicaListModel.Status {
    /// Takes the counts, the confirmed version and the conflicts from the replica's store.
    mutating func update(from replicaStatus: ReplicaStatus) {
        pending = replicaStatus.pending
        unconfirmed = replicaStatus.pushed
        confirmedVersion = replicaStatus.source.version
        lastConflicts = replicaStatus.lastConflicts
    }
}
