import ListMerge
@_spi(Replication) import ListStore
@_spi(Replication) import ListStoreCore
import ListStoreWire

/// Every list of a pattern, kept in a replica store from one source over its store feed: one
/// cursor for the whole set, stored in the same transaction as each commit or deletion applied.
///
/// `pull(from:)` applies the source's feed after the set's cursor: each commit of a list in the
/// set, lists created on the source as they come, lists deleted there removed (their pending local
/// changes reported as `listDeleted` conflicts). A list the feed cannot bring up to date by itself
/// (one with local changes, which are rebased, or one whose history starts past the replica) is
/// pulled alone as a `Replica` pulls, and the set goes on. Without a cursor, or with one the source
/// no longer answers (pruned, another store or epoch), the set starts over: it reads the feed from
/// its oldest retained event, then pulls each list of the source that the replica does not hold
/// at the source's version (by diff), and removes the replica lists the source no longer has.
///
/// Killed at any instant, a set resumes with nothing lost, doubled or skipped: a commit and the
/// cursor after it land together, and the events a resumed pull meets again are those of commits
/// the replica already holds, which it passes.
///
/// ```swift
/// let set = try ReplicaSet(store: try Store(path: "phone.liststore"), lists: "users/ana/**")
/// let source = try HTTPSource("https://lists.example.com", token: token)
/// let result = try await set.sync(with: source)       // push every list's changes, then pull
/// print(result.pull.applied, result.pull.deleted, result.pull.conflicts)
/// try await set.follow(from: source, pushing: true) { change in print(change.list) }
/// ```
public struct ReplicaSet<Storage: ReplicaStore>: Sendable {
    /// The replica store.
    public let store: Storage
    /// The set's lists: the source's lists this pattern names (a replica list has its source's name).
    public let pattern: ListPattern
    /// Told of the progress of each copy in pages the set makes (a list pulled by itself whose
    /// first sync or resync copies its source's head page by page: `SyncProgress.list` names
    /// it), after each page; `nil` by default. It is called on the task that pulls.
    ///
    /// ```swift
    /// var set = try ReplicaSet(store: store, lists: "users/ana/**")
    /// set.onProgress = { progress in print(progress.list, Int(progress.fractionCompleted * 100), "%") }
    /// ```
    public var onProgress: (@Sendable (SyncProgress) -> Void)?

    /// The set of `pattern`'s lists in `store`.
    /// - Throws: `ListPattern.Problem` for a pattern that is not one; `SyncError.refused` for one
    ///   that names claims (`{sub}`: a server's rules use them, a set names lists).
    public init(store: Storage, lists pattern: String) throws {
        let parsed = try ListPattern(pattern)
        guard parsed.claimNames.isEmpty else {
            throw SyncError.refused("a replica set's pattern names lists, not claims ({…}): \(pattern)")
        }
        self.store = store
        self.pattern = parsed
    }

    /// Where the set stands (nil before its first pull).
    /// - Throws: `StoreError` of the read.
    public func position() async throws -> ReplicaSetPosition? {
        try await store.replicaSetPosition(of: pattern.description)
    }

    /// The status of each replica list of the set, by name (the lists of the store that the
    /// pattern names and that replicate a source).
    /// - Throws: `StoreError` of the reads. - Complexity: O(lists of the store).
    public func statuses() async throws -> [(list: String, status: ReplicaStatus)] {
        var statuses: [(list: String, status: ReplicaStatus)] = []
        for list in try await localLists() {
            if let status = try await Replica(store: store, list: list).status() { statuses.append((list, status)) }
        }
        return statuses
    }

    /// Applies the source's feed after the set's cursor up to its head (see the type's overview).
    /// - Throws: `SyncError` (transient ones for an unreachable source), `StoreError` of the store or
    ///   the source; a list that exists in the replica store without replicating this source stops
    ///   the pull with `SyncError.refused` (rename it, or drop it, first).
    @discardableResult
    public func pull(from source: some FeedSource, pageSize: Int = 100) async throws -> ReplicaSetPullResult {
        let identity = try await source.identity()
        if let own = try? await store.identity(), own.uuid == identity.uuid {
            throw StoreError(.invalidArgument, "the replica's store is the source store (\(store.location)): a set cannot replicate its own store")
        }
        var result = ReplicaSetPullResult()
        var cursor: FeedCursor?
        let recorded = try await position().map { FeedCursor(store: $0.store, place: $0.place) }
        if let recorded {
            if recorded.store == identity {
                cursor = recorded
            } else {
                result.reason = recorded.store.uuid == identity.uuid ? .epochChanged : .differentStore
            }
        } else {
            result.reason = .noCursor
        }
        // While the set starts over, its recorded position stays where it was (a set that never
        // had one records the feed's start), so that a pull stopped before the end starts over again.
        var hold = result.reason == nil ? nil : recorded ?? FeedCursor(store: identity, position: 0)
        while true {
            let page: FeedChanges
            do {
                page = try await source.changes(of: pattern, after: cursor, limit: pageSize, wait: .zero)
            } catch let error where cursor != nil && Self.meansStartOver(error) {
                // Pruned past the cursor, or the source was restored: read what it retains, then
                // bring every list to the source's head by itself.
                result.reason =
                    (error as? SyncError)?.resyncReason ?? ((error as? StoreError)?.code == .cursorOfAnotherHistory ? .historyChanged : .pruned)
                hold = hold ?? recorded ?? FeedCursor(store: identity, position: 0)
                cursor = nil
                continue
            }
            for change in page.changes {
                try await apply(change, from: source, identity: identity, holding: hold, into: &result)
            }
            if hold == nil, page.changes.last?.cursor != page.cursor {
                try await store.moveReplicaSet(pattern.description, feed: identity, to: page.cursor.position, place: page.cursor.place)
            }
            cursor = page.cursor
            if !page.hasMore { break }
        }
        result.cursor = cursor
        if let hold {
            result.resynced = true
            try await reconcile(with: source, identity: identity, holding: hold, into: &result)
            if let cursor { try await store.moveReplicaSet(pattern.description, feed: identity, to: cursor.position, place: cursor.place) }
        }
        return result
    }

    /// Pushes the local changes of every replica list of the set that has some (see
    /// `Replica.push(to:options:)`); returns each push's result. A list the source deleted is
    /// passed: the next pull removes it and reports its changes as `listDeleted` conflicts.
    /// - Throws: what `Replica.push(to:options:)` throws, for the first list it fails for.
    @discardableResult
    public func push(to source: some FeedSource) async throws -> [ReplicaPushResult] {
        var results: [ReplicaPushResult] = []
        for (list, status) in try await statuses() where status.pending > 0 {
            do {
                results.append(try await Replica(store: store, list: list).push(to: source))
            } catch StoreError.Code.listNotFound {
                // Deleted at the source: the next pull removes it and reports its changes.
            }
        }
        return results
    }

    /// Pushes every list's local changes, then pulls (see `push(to:)` and `pull(from:pageSize:)`).
    /// - Throws: what they throw.
    @discardableResult
    public func sync(with source: some FeedSource) async throws -> ReplicaSetSyncResult {
        let pushed = try await push(to: source)
        var pulled = try await pull(from: source)
        for push in pushed where !push.conflicts.isEmpty {
            pulled.conflicts[push.list, default: []] += push.conflicts
        }
        return ReplicaSetSyncResult(push: pushed, pull: pulled)
    }

    /// Keeps the set up to date until the task is cancelled: a pull (a sync, with `pushing`), then
    /// the source's feed as it comes (one event stream for the whole set, from a server), each
    /// change applied as it lands and told to `onChange`. With `pushing`, a local change to any list
    /// of the set (this process's at once, another's within `localPollInterval`) is pushed and the
    /// feed followed again.
    ///
    /// - Parameters:
    ///   - source: where the lists come from.
    ///   - pushing: push every list's local changes first, and again at each local change (a sync).
    ///   - localPollInterval: with `pushing`, how often the store is checked for local changes of
    ///     other processes (this process's wake the follow at once).
    ///   - retry: how to wait between attempts after transient failures; `nil` ends the follow at
    ///     the first.
    ///   - onEvent: told of failures being retried and of reconnections.
    ///   - onChange: told of each list the set changed (applied commits, created, deleted, pulled).
    /// - Throws: what `pull` and `push` throw (transient errors only without `retry`),
    ///   `CancellationError`, and what `onChange` throws.
    public func follow(
        from source: some FeedSource, pushing: Bool = false, localPollInterval: Duration = .seconds(1), retrying retry: RetryPolicy? = nil,
        onEvent: @escaping @Sendable (FollowEvent) async -> Void = { _ in },
        onChange: @escaping @Sendable (ReplicaSetChange) async throws -> Void
    ) async throws {
        var failures = 0
        while !Task.isCancelled {
            do {
                if pushing {
                    for pushed in try await push(to: source) {
                        try await onChange(ReplicaSetChange(list: pushed.list, kind: .pushed, conflicts: pushed.conflicts))
                    }
                }
                let pulled = try await pull(from: source)
                for change in pulled.changes { try await onChange(change) }
                if failures > 0 {
                    await onEvent(.reconnected(failures: failures))
                    failures = 0
                }
                guard let position = try await position() else { continue }
                let start = FeedCursor(store: position.store, place: position.place)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        let identity = start.store
                        for try await change in source.followChanges(of: pattern, after: start) {
                            var applied = ReplicaSetPullResult()
                            try await apply(change, from: source, identity: identity, into: &applied)
                            for change in applied.changes { try await onChange(change) }
                        }
                        try Task.checkCancellation()
                        throw SyncError.transport("the source ended the feed", transient: true)
                    }
                    if pushing {
                        group.addTask { try await waitForLocalChanges(poll: localPollInterval) }
                    }
                    try await group.next()
                    group.cancelAll()
                }
            } catch let error where !Task.isCancelled && ((error as? SyncError)?.isTransient ?? false) {
                guard let retry, let error = error as? SyncError else { throw error }
                failures += 1
                let delay = retry.delay(afterFailures: failures)
                await onEvent(.retrying(after: error, attempt: failures, delay: delay))
                try await Task.sleep(for: delay)
            } catch let error where !Task.isCancelled && Self.meansStartOver(error) {
                continue  // the next pull starts over
            }
        }
        throw CancellationError()
    }

    // MARK: - Internals

    /// Whether a feed read's failure means the cursor cannot be resumed from (the set starts over).
    static func meansStartOver(_ error: any Error) -> Bool {
        if let error = error as? StoreError, error.code == .cursorExpired || error.code == .cursorOfAnotherHistory { return true }
        if let error = error as? SyncError, error.resyncReason != nil { return true }
        return false
    }

    /// The replica store's lists that the pattern names.
    private func localLists() async throws -> [String] {
        do {
            return try await store.lists().map(\.name).filter { pattern.matches($0) }
        } catch StoreError.Code.storeNotFound {
            return []
        }
    }

    /// Applies one change of the feed, and moves the cursor past it, in one transaction when the
    /// change is a commit the replica can replay or a deletion.
    /// With `hold`, the set's position is written as `hold` (the set starts over).
    private func apply(
        _ change: FeedChange, from source: some FeedSource, identity: StoreIdentity, holding hold: FeedCursor? = nil,
        into result: inout ReplicaSetPullResult
    ) async throws {
        let set = pattern.description
        let (feed, position, place) = hold.map { ($0.store, $0.position, $0.place) } ?? (identity, change.cursor.position, change.cursor.place)
        guard let event = change.event, pattern.matches(event.list) else {
            if hold == nil { try await store.moveReplicaSet(set, feed: feed, to: position, place: place) }
            return
        }
        let list = event.list
        guard let entry = event.entry else {
            let existed: Bool
            do {
                existed = try await store.replicaSource(of: list).map {
                    $0.store.uuid == identity.uuid && $0.list == list && ($0.listID == nil || event.listID == nil || $0.listID == event.listID)
                } ?? false
            } catch StoreError.Code.storeNotFound {
                existed = false
            }
            let conflicts = try await store.dropReplicaList(
                list, of: identity, listID: event.listID, set: set, feed: feed, position: position, place: place)
            if existed {
                result.changes.append(ReplicaSetChange(list: list, kind: .deleted, conflicts: conflicts))
                if !conflicts.isEmpty { result.conflicts[list, default: []] += conflicts }
            }
            return
        }
        let head = try await store.replicaHead(of: list)
        // The replica of this very list (a list made anew under its name is another: pulled alone,
        // which replaces it).
        let replicated = head?.position.flatMap {
            $0.store.uuid == identity.uuid && $0.list == list && ($0.listID == nil || event.listID == nil || $0.listID == event.listID)
                ? $0 : nil
        }
        if let replicated, replicated.store == identity, entry.version <= replicated.version {
            // A commit the replica holds (a resumed pull meets it again, or a list pulled alone).
            if hold == nil { try await store.moveReplicaSet(set, feed: feed, to: position, place: place) }
            return
        }
        let follows = head == nil ? entry.parentVersion == 0 : replicated?.store == identity && replicated?.version == entry.parentVersion
        if follows, !(head?.hasLocalChanges ?? false), head.map({ $0.digest == $0.position?.digest }) ?? true {
            let next = ReplicaSource(store: identity, list: list, version: entry.version, digest: entry.digest, listID: event.listID)
            do {
                _ = try await store.commitReplica(entry, to: list, source: next, set: set, feed: feed, position: position, place: place) { committed in
                    guard committed.digest == entry.digest else {
                        throw SyncError.diverged(version: entry.version, expected: entry.digest, actual: committed.digest)
                    }
                }
                result.applied += 1
                result.changes.append(ReplicaSetChange(list: list, kind: head == nil ? .created : .applied, version: entry.version))
                return
            } catch let error as StoreError where error.code == .versionConflict || error.code == .invalidEdit {
                // A local change landed meanwhile, or the replica does not replay: pulled alone.
            } catch is SyncError {
                // It diverged: pulled alone, which resyncs it.
            }
        }
        try await pullAlone(list, from: source, created: head == nil, into: &result)
        if hold == nil { try await store.moveReplicaSet(set, feed: feed, to: position, place: place) }
    }

    /// Pulls `list` by itself (rebasing its local changes, or resyncing it by diff).
    private func pullAlone(_ list: String, from source: some FeedSource, created: Bool, into result: inout ReplicaSetPullResult) async throws {
        let pulled: ReplicaPullResult
        do {
            var options = ReplicaPullOptions()
            options.onProgress = onProgress
            pulled = try await Replica(store: store, list: list).pull(from: source, options: options)
        } catch StoreError.Code.listNotFound {
            return  // deleted at the source meanwhile: its deletion comes later in the feed
        }
        result.applied += pulled.applied
        result.pulled.append(pulled)
        if !pulled.conflicts.isEmpty { result.conflicts[list, default: []] += pulled.conflicts }
        result.changes.append(ReplicaSetChange(list: list, kind: created ? .created : .pulled, version: pulled.version, conflicts: pulled.conflicts))
    }

    /// After starting over: pulls each list of the source that the replica does not hold at the
    /// source's version, and removes the replica lists of this source that it no longer has.
    private func reconcile(
        with source: some FeedSource, identity: StoreIdentity, holding hold: FeedCursor, into result: inout ReplicaSetPullResult
    ) async throws {
        let lists = try await source.lists(matching: pattern)
        for summary in lists {
            let head = try await store.replicaHead(of: summary.name)
            if let position = head?.position, position.store == identity, position.list == summary.name, position.version == summary.version,
                position.digest == summary.digest, head?.hasLocalChanges == false
            {
                continue
            }
            try await pullAlone(summary.name, from: source, created: head == nil, into: &result)
        }
        let names = Set(lists.map(\.name))
        for list in try await localLists() where !names.contains(list) {
            guard let position = try await store.replicaSource(of: list), position.store.uuid == identity.uuid else { continue }
            let conflicts = try await store.dropReplicaList(
                list, of: identity, listID: nil, set: pattern.description, feed: hold.store, position: hold.position, place: hold.place)
            result.changes.append(ReplicaSetChange(list: list, kind: .deleted, conflicts: conflicts))
            if !conflicts.isEmpty { result.conflicts[list, default: []] += conflicts }
        }
    }

    /// Returns when a list of the set has local changes to push (checked at each commit of this
    /// process to the store, and every `poll`).
    private func waitForLocalChanges(poll: Duration) async throws {
        var generation = store.localCommitGeneration()
        while !Task.isCancelled {
            for (_, status) in try await statuses() where status.pending > 0 { return }
            await store.waitForLocalCommit(unlessGenerationIsNot: generation, timeout: poll)
            generation = store.localCommitGeneration()
        }
    }
}

/// What a replica set's pull did.
public struct ReplicaSetPullResult: Sendable, Hashable {
    /// Where the set stands now.
    public var cursor: FeedCursor?
    /// The source commits applied (each list's, and those of lists pulled alone).
    public var applied = 0
    /// What changed, list by list, in order.
    public var changes: [ReplicaSetChange] = []
    /// The lists pulled alone (rebased or resynced), with their results.
    public var pulled: [ReplicaPullResult] = []
    /// The conflicts, by list: those of rebases, and each pending change of a list the source
    /// deleted (`listDeleted`).
    public var conflicts: [String: [Conflict]] = [:]
    /// Whether the set started over (read the feed from its oldest retained event, and brought
    /// each list to the source's head by itself).
    public var resynced = false
    /// Why it started over.
    public var reason: ResyncReason?

    /// The lists the source deleted that the set removed.
    public var deleted: [String] { changes.filter { $0.kind == .deleted }.map(\.list) }
    /// The lists the set created.
    public var created: [String] { changes.filter { $0.kind == .created }.map(\.list) }

    /// An empty result.
    public init() {}
}

/// What a replica set's sync did: each list's push, then the pull.
public struct ReplicaSetSyncResult: Sendable, Hashable {
    /// The push of each list that had local changes.
    public var push: [ReplicaPushResult]
    /// The pull after them.
    public var pull: ReplicaSetPullResult

    /// A sync's result.
    public init(push: [ReplicaPushResult], pull: ReplicaSetPullResult) {
        self.push = push
        self.pull = pull
    }
}

/// A change a replica set made to one of its lists.
public struct ReplicaSetChange: Sendable, Hashable {
    /// What happened to the list.
    public enum Kind: String, Sendable, Hashable {
        /// It was created, from the source's list.
        case created
        /// A commit of the source was applied.
        case applied
        /// It was pulled by itself (rebased or resynced).
        case pulled
        /// The source deleted it, and so did the set.
        case deleted
        /// Its local changes were pushed.
        case pushed
    }

    /// The list.
    public var list: String
    /// What happened.
    public var kind: Kind
    /// The source version it stands at, when it stands at one.
    public var version: Int?
    /// The conflicts of the change (a deleted list's `listDeleted` ones, a rebase's).
    public var conflicts: [Conflict]

    /// A change as a set reports it.
    public init(list: String, kind: Kind, version: Int? = nil, conflicts: [Conflict] = []) {
        self.list = list
        self.kind = kind
        self.version = version
        self.conflicts = conflicts
    }
}
