import ListDiff
import ListMerge
@_spi(Replication) import ListStore
@_spi(Replication) import ListStoreCore

/// A list of a store of its own that follows a list of a source store: each pull applies the
/// source's new commits, one transaction each, recording the source version in the same transaction
/// as the rows, and checks that every applied commit reproduces the source's digest.
///
/// A replica's store is an ordinary store: `show`, `log`, `verify`, `diff` work on it, and it can be
/// the source of further replicas.
///
/// The replica's store is any `ReplicaStore`: a SQLite `Store`, or a `PostgresStore`
/// (ListStorePostgres), for a server that keeps a copy of another server's list.
///
/// ```swift
/// let replica = Replica(store: try Store(path: "copy.liststore"), list: "inbox")
/// let result = try await replica.pull(from: LocalSource(try Store(path: "mail.liststore")))
/// result.version      // the source version the replica now equals
/// result.resynced     // true when it had to catch up by diff (see `reason`)
/// ```
public struct Replica<Storage: ReplicaStore>: Sendable {
    /// How a pull goes about it.
    public typealias PullOptions = ReplicaPullOptions
    /// What a pull did.
    public typealias PullResult = ReplicaPullResult
    /// What a push did.
    public typealias PushResult = ReplicaPushResult
    /// What a sync did: its push, then its pull.
    public typealias SyncResult = ReplicaSyncResult

    /// The replica's store.
    public let store: Storage
    /// The replica's list (by default also the source list's name).
    public let list: String

    /// A replica of `list` in `store`.
    public init(store: Storage, list: String) {
        self.store = store
        self.list = list
    }

    /// The source version the replica equals, or `nil` before its first pull.
    ///
    /// ```swift
    /// let version = try await replica.position()?.version ?? 0
    /// ```
    /// - Throws: `StoreError` `.io`.
    /// - Complexity: O(1).
    public func position() async throws -> ReplicaSource? {
        do {
            return try await store.replicaSource(of: list)
        } catch StoreError.Code.storeNotFound {
            return nil
        }
    }

    /// Brings the replica up to date with its source: the commits after its version are applied
    /// one transaction each (the source version and digest are recorded in the same transaction, so
    /// a replica killed mid-pull resumes where it stopped, without loss or duplication).
    ///
    /// When the journal cannot do it (pruned, another store, a new epoch, a digest that does not
    /// match, a replica changed locally), the replica resyncs by diff: it diffs its own snapshot
    /// against the source's head and applies that one minimal staged changeset, so a UI following the
    /// replica animates the difference instead of reloading.
    ///
    /// A pull never replaces a list's own history without being told: a list that is not a replica
    /// but has versions, or a replica of another store, is refused (`SyncError.refused`) unless
    /// `options.replacing`.
    ///
    /// - Throws: `SyncError.resyncRequired` (with `resyncByDiff` off), `SyncError.diverged` when even
    ///   the resync does not reproduce the source's digest, `SyncError.refused`, `StoreError` of either store
    ///   (`.invalidArgument` when the source is the replica's own store),
    ///   `SyncError.transport` of a network source.
    /// - Complexity: per applied commit, O(n) for a list of n items plus its changed rows.
    @discardableResult
    public func pull(from source: some ListSource, options: PullOptions = PullOptions()) async throws -> PullResult {
        // Up to date, or a few commits behind: one request per page of the journal.
        let quiet = try await quietPull(from: source, sourceList: options.sourceList ?? list, options: options)
        if let quiet, quiet.complete { return quiet.result }
        var result = try await fullPull(from: source, options: options)
        result.applied += quiet?.result.applied ?? 0
        if result.pages != nil, let after = try await quietPull(from: source, sourceList: options.sourceList ?? list, options: options) {
            // The head was copied at the version its first page was read at: the journal brings
            // it up to the source's head (a later pull does what this leaves).
            result.applied += after.result.applied
            if after.result.applied > 0 { (result.version, result.digest) = (after.result.version, after.result.digest) }
        }
        return result
    }

    /// The pull with every check asked of the source apart: its identity, the list's identity and
    /// summary, then the journal (or a resync, or a rebase of local changes).
    private func fullPull(from source: some ListSource, options: PullOptions) async throws -> PullResult {
        let sourceList = options.sourceList ?? list
        let identity = try await source.identity()
        try await refuseOwnStore(identity)
        // The position and the head, read together (another pull may be moving both).
        var current = try await store.replicaHead(of: list)
        try refuseReplacing(current, with: identity, sourceList: sourceList, replacing: options.replacing)
        if current?.position?.store.uuid != identity.uuid {
            // A new source (already following it, the check was made when it started).
            try await refuseCycle(source, sourceList: sourceList)
        }
        var result = PullResult(list: list, version: 0, digest: "", applied: 0, resynced: false, reason: nil)
        current = try await checkListIdentity(
            current, source: source, sourceList: sourceList, identity: identity, options: options, into: &result)
        if let current, current.hasLocalChanges {
            // Local changes: they are rebased onto the source's new head (with what the identity
            // check did: a replaced list's report).
            var rebased = try await pullRebasing(from: source, sourceList: sourceList, identity: identity, options: options)
            rebased.applied += result.applied
            rebased.conflicts = result.conflicts + rebased.conflicts
            if result.resynced { (rebased.resynced, rebased.reason) = (true, result.reason) }
            let result = rebased
            if let consumer = options.consumer {
                try await source.acknowledge(consumer: consumer, of: sourceList, version: result.version)
            }
            return result
        }
        do {
            do {
                try await apply(
                    current, from: source, sourceList: sourceList, identity: identity, options: options, into: &result)
            } catch let error as SyncError {
                guard options.resyncByDiff, let reason = error.resyncReason else { throw error }
                try await resync(from: source, sourceList: sourceList, identity: identity, reason: reason, options: options, into: &result)
            }
        } catch StoreError.Code.versionConflict {
            // A local change landed meanwhile (the store refuses to replay the source onto it).
            let rest = try await pullRebasing(from: source, sourceList: sourceList, identity: identity, options: options)
            result.version = rest.version
            result.digest = rest.digest
            result.applied += rest.applied
            result.resynced = result.resynced || rest.resynced
            result.reason = result.reason ?? rest.reason
            result.pending = rest.pending
            result.confirmedChanges = rest.confirmedChanges
        }
        if let consumer = options.consumer {
            try await source.acknowledge(consumer: consumer, of: sourceList, version: result.version)
        }
        return result
    }

    /// Pulls, then applies each new commit of the source as it lands, until the task is cancelled;
    /// `onPull` hears of every round that applied something (and of the first pull). The new commits
    /// come from `ListSource.commits(of:after:pageSize:wait:)` (from `HTTPSource`: one event stream
    /// for the whole follow) and are applied with the checks of a pull (each follows the replica's
    /// version and reproduces its digest); when the replica is not where they start (local changes,
    /// a catch-up pull, a resync), the follower pulls instead.
    ///
    /// With a `RetryPolicy`, a follower survives its source going away for a while (a server being
    /// restarted or deployed): a transient failure (`SyncError.isTransient`: no connection, a
    /// timeout, a lost connection, a 502, 503 or 504) of a pull or of a wait is reported to `onEvent`
    /// as `.retrying`, and the follower pulls again after the policy's delay, and again, until a pull
    /// succeeds (`.reconnected`, then `onPull` if it applied something). Every other error (a refused
    /// token, an unknown list, an answer it cannot read, a replica error) ends the follow at once, as
    /// it does without a policy. A replica stays at its last complete version through an outage.
    ///
    /// ```swift
    /// try await replica.follow(from: source, retrying: .standard, onEvent: { event in
    ///     if case .retrying(let error, 1, let delay) = event { print("lost the source: \(error), retrying in \(delay)") }
    /// }) { result in print("at source version", result.version) }
    /// ```
    ///
    /// With `pushing`, the follower syncs: each round pushes the replica's local changes
    /// first, then pulls, and a local commit of this process wakes it as a source commit does (a
    /// commit of another process within `localPollInterval`).
    ///
    /// - Parameters:
    ///   - source: where the list comes from.
    ///   - options: how each pull goes (see `pull(from:options:)`).
    ///   - pushing: push local changes before each pull (`sync`), and wake for local commits too.
    ///   - localPollInterval: with `pushing`, how often the replica's store is checked for commits
    ///     of other processes.
    ///   - wait: how long one wait for a commit lasts before the source is asked again.
    ///   - retry: how to wait between attempts after transient failures; `nil` (the default) ends
    ///     the follow at the first failure.
    ///   - onEvent: told of failures being retried and of reconnections.
    ///   - onPull: called after each pull that applied something.
    /// - Throws: what `pull(from:options:)` throws (transient errors only without `retry`),
    ///   `CancellationError` when cancelled while waiting to retry, and what `onPull` throws.
    public func follow(
        from source: some ListSource, options: PullOptions = PullOptions(), pushing: Bool = false,
        localPollInterval: Duration = .seconds(1), wait: Duration = .seconds(30),
        retrying retry: RetryPolicy? = nil, onEvent: (FollowEvent) async -> Void = { _ in },
        onPull: (PullResult) async throws -> Void
    ) async throws {
        let sourceList = options.sourceList ?? list
        var first = true
        var failures = 0
        // A transient failure: without a policy it ends the follow; with one, it is counted,
        // reported, and waited out.
        func backOff(after error: SyncError) async throws {
            guard let retry else { throw error }
            failures += 1
            let delay = retry.delay(afterFailures: failures)
            await onEvent(.retrying(after: error, attempt: failures, delay: delay))
            try await Task.sleep(for: delay)
        }
        // The source's commits after the last pull, read ahead (from a server: its event stream).
        var feed: _CommitFeed?
        // Commits the feed brought since the last pull.
        var fed: [JournalEntry] = []
        while !Task.isCancelled {
            var result: PullResult
            let localGeneration = store.localCommitGeneration()
            do {
                let applied = pushing || fed.isEmpty || feed == nil
                    ? nil : try await apply(fed, identity: feed!.identity, of: source, sourceList: sourceList, options: options)
                if let applied, applied.complete {
                    result = applied.result
                } else {
                    // The replica is not where the fed commits start (or there are none): a pull.
                    // The feed goes on (it drops what the pull applied) unless the pull resynced.
                    result = pushing ? try await sync(with: source, options: options).pull : try await pull(from: source, options: options)
                    result.applied += applied?.result.applied ?? 0
                    if result.resynced { feed = nil }
                }
                fed = []
            } catch let error as SyncError where error.isTransient && !Task.isCancelled {
                (feed, fed) = (nil, [])
                try await backOff(after: error)
                continue
            }
            if failures > 0 {
                await onEvent(.reconnected(failures: failures))
                failures = 0
            }
            if first || result.applied > 0 { try await onPull(result) }
            first = false
            do {
                if feed?.hasEnded ?? true {
                    feed = _CommitFeed(
                        source, list: sourceList, after: result.version, identity: try await source.identity(),
                        pageSize: options.pageSize, wait: wait)
                }
                guard let feed else { continue }
                if pushing {
                    try await waitForSourceOrLocalCommit(
                        feed, after: result.version, localGeneration: localGeneration, localPoll: localPollInterval, timeout: wait)
                } else {
                    fed = try await feed.entries(after: result.version, timeout: wait) ?? []
                }
            } catch let error as SyncError where error.isTransient && !Task.isCancelled {
                // The outage starts here; the next pull tells whether it lasts.
                feed = nil
                try await backOff(after: error)
            } catch StoreError.Code.versionNotFound {
                // The source pruned its history past the replica meanwhile: the next pull resyncs.
                feed = nil
            } catch let error as SyncError where error.resyncReason == .epochChanged || error.resyncReason == .tooLarge {
                // The source was restored (its stream ended so), or sent a commit larger than this
                // client takes: the next pull resyncs (in pages).
                feed = nil
            }
        }
    }

    /// Applies `entries`, the source's next commits (from a feed, or a page of its journal), as a
    /// pull applies the journal's, when the replica stands where they start, at a position in the
    /// source store `identity` with no local changes; `complete` is false when it does not (or
    /// stops), for a pull to go on from where the replica then stands.
    func apply(
        _ entries: [JournalEntry], identity: StoreIdentity, of source: some ListSource, sourceList: String, options: PullOptions
    ) async throws
        -> (result: PullResult, complete: Bool)?
    {
        guard !options.catchUp, let current = try await store.replicaHead(of: list), !current.hasLocalChanges,
            let position = current.position, position.store == identity, position.list == sourceList,
            current.digest == position.digest
        else { return nil }
        var result = PullResult(list: list, version: position.version, digest: position.digest.hex, applied: 0, resynced: false, reason: nil)
        for (k, entry) in entries.enumerated() {
            guard entry.parentVersion == result.version else { return (result, false) }
            let next = ReplicaSource(
                store: identity, list: sourceList, version: entry.version, digest: entry.digest, listID: position.listID)
            do {
                try await commit(entry, at: next, next: k + 1 < entries.count ? entries[k + 1] : nil)
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                return (result, false)  // the pull meets it again, and resyncs or reports it
            }
            result.version = entry.version
            result.digest = entry.digest.hex
            result.applied += 1
        }
        if let consumer = options.consumer {
            try await source.acknowledge(consumer: consumer, of: sourceList, version: result.version)
        }
        return (result, true)
    }

    // MARK: - Internals

    /// Returns at a commit of the source after `version`, at a local change pending in the outbox, or
    /// after `timeout`.
    private func waitForSourceOrLocalCommit(
        _ feed: _CommitFeed, after version: Int, localGeneration: UInt64, localPoll: Duration, timeout: Duration
    ) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { _ = try await feed.entries(after: version, timeout: timeout) }
            group.addTask { [store, list] in
                let clock = ContinuousClock()
                let deadline = clock.now + timeout
                var generation = localGeneration
                while clock.now < deadline, !Task.isCancelled {
                    if let status = try? await store.replicaStatus(of: list), status.pending > 0 { return }
                    await store.waitForLocalCommit(unlessGenerationIsNot: generation, timeout: min(localPoll, deadline - clock.now))
                    generation = store.localCommitGeneration()
                }
            }
            try await group.next()
            group.cancelAll()
        }
    }

    /// Applies the source's commits after the replica's position (`current`: its position and head,
    /// read together), one transaction each.
    private func apply(
        _ current: ReplicaHead?, from source: some ListSource, sourceList: String, identity: StoreIdentity,
        options: PullOptions, into result: inout PullResult
    ) async throws {
        var position = current?.position
        if let position {
            if let current, current.digest != position.digest {
                throw SyncError.resyncRequired(
                    .digestMismatch, message: "the replica changed since it equalled source version \(position.version)")
            }
            try await checkFollowable(position, in: source, sourceList: sourceList, identity: identity)
        } else if let current, current.holdsData || current.version > 0 {
            throw SyncError.resyncRequired(.noCursor, message: "list '\(list)' holds data but follows no source yet")
        } else {
            // A first pull: from the source's oldest retained version.
            let summary = try await source.summary(of: sourceList)
            if summary.baseVersion > 0 {
                throw SyncError.resyncRequired(.pruned, message: "the source's history starts at version \(summary.baseVersion)")
            }
            position = ReplicaSource(store: identity, list: sourceList, version: 0, digest: ListDigest.of([]), listID: summary.id)
        }
        guard var position else { return }
        result.version = position.version
        result.digest = position.digest.hex

        if options.catchUp {
            let state = current == nil ? [] : try await store.snapshot(of: list, at: nil).sections
            let (changeset, head) = try await source.catchUp(of: sourceList, from: position.version, applyingTo: state)
            guard !changeset.isEmpty || head.version != position.version else { return }
            let next = ReplicaSource(
                store: identity, list: sourceList, version: head.version, digest: head.digest, listID: position.listID)
            try await commit(head.sections, at: next, author: nil, message: "catch-up to source version \(head.version)")
            result.version = head.version
            result.digest = head.digest.hex
            result.applied = 1
            return
        }

        try await forEachEntry(of: source, sourceList: sourceList, after: position.version, pageSize: options.pageSize) { entry, next in
            position = ReplicaSource(
                store: identity, list: sourceList, version: entry.version, digest: entry.digest, listID: position.listID)
            do {
                try await commit(entry, at: position, next: next)
            } catch let error as StoreError where error.code == .invalidEdit {
                throw SyncError.resyncRequired(.digestMismatch, message: error.message)
            }
            result.version = entry.version
            result.digest = entry.digest.hex
            result.applied += 1
        }
    }

    /// Throws `SyncError.refused` when the pull would replace what the list holds with another
    /// store's list without `replacing`: a list with a history of its own that is not a replica
    /// (perhaps the source and the replica were swapped on a command line), or a replica of another
    /// store.
    private func refuseReplacing(_ current: ReplicaHead?, with identity: StoreIdentity, sourceList: String, replacing: Bool) throws {
        guard !replacing, let current else { return }
        if let position = current.position {
            if position.store.uuid != identity.uuid {
                throw SyncError.refused(
                    "list '\(list)' of \(store.location) is a replica of store \(position.store.uuid), not of \(identity.uuid): following another source needs 'replacing' (--replace)")
            }
            if position.list != sourceList {
                throw SyncError.refused(
                    "list '\(list)' of \(store.location) is a replica of list '\(position.list)', not '\(sourceList)': following another list needs 'replacing' (--replace)")
            }
        } else if current.holdsData || current.version > 0 {
            throw SyncError.refused(
                "list '\(list)' of \(store.location) has a history of its own (version \(current.version)) and is not a replica: pulling would replace it with the source's; turning it into a replica needs 'replacing' (--replace)")
        }
    }

    /// Throws `.invalidArgument` when the source is the replica's own store (however it was
    /// reached: a second handle, another URL of the same database, a server over it).
    private func refuseOwnStore(_ source: StoreIdentity) async throws {
        let own: StoreIdentity
        do {
            own = try await store.identity()
        } catch StoreError.Code.storeNotFound {
            return
        }
        if own.uuid == source.uuid {
            throw StoreError(.invalidArgument, "the replica's store is the source store (\(store.location)): a list cannot replicate its own store")
        }
    }

    /// Throws `SyncError.refused` when the source list is itself a replica of this store: following
    /// it would make a cycle.
    private func refuseCycle(_ source: some ListSource, sourceList: String) async throws {
        guard let upstream = try await source.upstreamStore(of: sourceList) else { return }
        let own: StoreIdentity
        do {
            own = try await store.identity()
        } catch StoreError.Code.storeNotFound {
            return
        }
        if upstream.uuid == own.uuid {
            throw SyncError.refused(
                "list '\(sourceList)' of the source is itself a replica of this store (\(store.location)): following it would make a cycle")
        }
    }

    /// Throws `SyncError.resyncRequired` unless the source's journal can bring a replica at
    /// `position` up to date: the same list, store and epoch, and a version the source retains.
    func checkFollowable(
        _ position: ReplicaSource, in source: some ListSource, sourceList: String, identity: StoreIdentity
    ) async throws {
        if position.list != sourceList {
            throw SyncError.resyncRequired(.differentStore, message: "the replica follows list '\(position.list)', not '\(sourceList)'")
        }
        let cursor = Cursor(store: position.store, list: sourceList, version: position.version)
        if let (reason, message) = try await source.resyncReason(for: cursor, identity: identity, digest: position.digest) {
            throw SyncError.resyncRequired(reason, message: message)
        }
    }

    /// Calls `body` with each journal entry of the source after `version`, page by page, checking that
    /// each follows the one before, and with the entry after it in the page when there is one.
    func forEachEntry(
        of source: some ListSource, sourceList: String, after version: Int, pageSize: Int,
        _ body: (_ entry: JournalEntry, _ next: JournalEntry?) async throws -> Void
    ) async throws {
        var version = version
        while true {
            let page = try await source.journal(of: sourceList, after: version, limit: pageSize)
            if let large = page.tooLarge, page.entries.isEmpty {
                throw SyncError.resyncRequired(
                    .tooLarge, message: "source version \(large.version) takes \(large.bytes) bytes, more than this client holds at once")
            }
            for (k, entry) in page.entries.enumerated() {
                guard entry.parentVersion == version else {
                    throw SyncError.resyncRequired(
                        .digestMismatch, message: "source version \(entry.version) follows \(entry.parentVersion), not \(version)")
                }
                try await body(entry, k + 1 < page.entries.count ? page.entries[k + 1] : nil)
                version = entry.version
            }
            if !page.hasMore { return }
        }
    }

    /// Copies the source's head in pages (`stagePages`) and makes it the replica in one
    /// transaction: one minimal changeset from what the replica held.
    private func resync(
        from source: some ListSource, sourceList: String, identity: StoreIdentity, reason: ResyncReason, options: PullOptions,
        into result: inout PullResult
    ) async throws {
        let staged = try await stagePages(from: source, sourceList: sourceList, identity: identity, reason: reason, options: options)
        try await commitStagedPages(staged, reason: reason)
        result.version = staged.sync.version
        result.digest = staged.sync.digest.hex
        result.applied += 1
        result.resynced = true
        result.reason = reason
        result.pages = PagedSyncReport(pages: staged.pages, resumed: staged.resumed, restarted: staged.restarted)
    }

    /// Applies the source's journal entry with `position`, rolling back unless it reproduces its
    /// digest; `next`, the entry to apply after it, is replayed meanwhile (see `ReplicaStore`).
    private func commit(_ entry: JournalEntry, at position: ReplicaSource, next: JournalEntry? = nil) async throws {
        _ = try await store.commitReplica(entry, to: list, source: position, next: next) { committed in
            guard committed.digest == position.digest else {
                throw SyncError.diverged(version: position.version, expected: position.digest, actual: committed.digest)
            }
        }
    }

    /// Commits `sections` with `position`, rolling back unless they reproduce its digest.
    private func commit(_ sections: [ListSection], at position: ReplicaSource, author: String?, message: String?) async throws {
        _ = try await store.commitReplica(sections, to: list, source: position, author: author, message: message) { committed in
            guard committed.digest == position.digest else {
                throw SyncError.diverged(version: position.version, expected: position.digest, actual: committed.digest)
            }
        }
    }
}

/// How a pull goes about it (`Replica.PullOptions`).
public struct ReplicaPullOptions: Sendable {
    /// The source list (default: the replica's list name).
    public var sourceList: String?
    /// Apply one minimal changeset from the replica's version to the head instead of each commit.
    public var catchUp = false
    /// When the journal cannot bring the replica up to date (see `ResyncReason`), diff the
    /// replica against the source's head and apply that one changeset (`true`), or throw
    /// `SyncError.resyncRequired` (`false`).
    public var resyncByDiff = true
    /// Register and acknowledge this consumer name on the source after the pull, so that the
    /// source does not prune what the replica has not applied yet.
    public var consumer: String?
    /// Journal entries read per request.
    public var pageSize = 100
    /// The bytes of records a page of a first sync or a resync holds at most (the source's own
    /// bound applies when smaller): what the replica holds of the source's answers at once. The
    /// first page asks for at most 256 KiB, so that it lands, and shows, at once.
    public var pageBytes = 4 << 20
    /// Told after every page a first sync or a resync in pages lands (`SyncProgress`), on the
    /// pulling task.
    public var onProgress: (@Sendable (SyncProgress) -> Void)?
    /// Let a pull turn a list with a history of its own into a replica of the source, or point a
    /// replica of another store at this one (it resyncs by diff; local changes pending in its outbox
    /// are kept and go to the new source). Off by default: such a pull is refused
    /// (`SyncError.refused`) and changes nothing, so that swapping the source and the replica by
    /// mistake never replaces a store's own history.
    public var replacing = false

    /// The defaults.
    public init(
        sourceList: String? = nil, catchUp: Bool = false, resyncByDiff: Bool = true, consumer: String? = nil, replacing: Bool = false
    ) {
        self.sourceList = sourceList
        self.catchUp = catchUp
        self.resyncByDiff = resyncByDiff
        self.consumer = consumer
        self.replacing = replacing
    }
}

/// What a pull did (`Replica.PullResult`).
public struct ReplicaPullResult: Sendable, Hashable {
    /// The replica's list.
    public var list: String
    /// The source version the replica now equals.
    public var version: Int
    /// Its digest.
    public var digest: String
    /// Source commits applied one by one (a catch-up or a resync counts as one).
    public var applied: Int
    /// Whether the replica caught up by diff against the source's head.
    public var resynced: Bool
    /// Why it had to (`nil` when it did not).
    public var reason: ResyncReason?
    /// Local changes still pending after the pull (rebased onto the source's head).
    public var pending = 0
    /// Local changes the pull found in the source's head, and took out of the outbox.
    public var confirmedChanges = 0
    /// The conflicts of pushes whose answer the replica had not heard (a lost answer), learned
    /// from the source's record during the pull.
    public var conflicts: [Conflict] = []
    /// How a resync in pages went (`nil`: the pull made none).
    public var pages: PagedSyncReport?
}

/// How a first sync or a resync in pages went (`ReplicaPullResult.pages`).
public struct PagedSyncReport: Sendable, Hashable {
    /// The pages this pull landed.
    public var pages: Int
    /// Whether it went on from pages an interrupted sync landed before.
    public var resumed: Bool
    /// Whether the version it was copying was gone at the source (the source's head moved on), so
    /// that it started again at the head.
    public var restarted: Bool

    /// A report.
    public init(pages: Int, resumed: Bool, restarted: Bool) {
        self.pages = pages
        self.resumed = resumed
        self.restarted = restarted
    }
}
