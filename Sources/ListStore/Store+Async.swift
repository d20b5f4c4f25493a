import Dispatch

// The async variants of the store's methods, for callers on Swift's cooperative thread pool (a sync
// client, a server, an app's tasks), as GRDB's `DatabasePool` has async `read` and `write`: same
// names, same arguments, same results and errors. The blocking work never runs on the pool: it
// runs on the stores' own threads (`_BlockingThreads`; not dispatch's global queues, which on Linux
// are the pool's threads), and the calling task is resumed when it is done.
//
// - Reads run at once; GRDB's reader pool bounds how many read SQLite at once.
// - Writes to one store file run one after another, in the order they were called, for the whole
//   process: SQLite lets one writer in at a time anyway, so concurrent async commits to a file hold
//   one thread between them instead of one each blocked on the write lock.
//
// The `_Background` work a commit waits for while it holds the write lock goes before these jobs and
// may start threads beyond the limit: a burst of async work cannot keep it waiting.
//
// Cancellation: a task cancelled before its work starts (also while it waits in a queue) throws
// `CancellationError`, and nothing is read or written. Once started, the work runs to its end and
// its result is returned: a commit lands whole or not at all, and the caller learns which.

extension Store {
    /// The store's identity, read off the cooperative thread pool.
    ///
    /// ```swift
    /// let id = try await store.identity()    // e.g. 1f0c…/1
    /// ```
    /// - Throws: `StoreError` `.storeNotFound`, `.damaged`, `.io`; `CancellationError` when the task
    ///   is cancelled before the read starts.
    /// - Complexity: O(1).
    public func identity() async throws -> StoreIdentity {
        try await _StoreQueues.read { try self.identity() }
    }

    /// Bumps the epoch and takes a new client id (see `advanceEpoch()`), off the cooperative thread
    /// pool.
    ///
    /// ```swift
    /// let restored = try await store.advanceEpoch()    // e.g. 1f0c…/2
    /// ```
    /// - Throws: `StoreError` `.storeNotFound`, `.damaged`, `.io`; `CancellationError` when the task
    ///   is cancelled before the write starts.
    /// - Complexity: O(1).
    @discardableResult
    public func advanceEpoch() async throws -> StoreIdentity {
        try await _offPool(writing: { try self.advanceEpoch() })
    }

    /// The lists of the store, by name, read off the cooperative thread pool.
    ///
    /// ```swift
    /// for list in try await store.lists() { print(list.name, list.version) }
    /// ```
    /// - Throws: `StoreError` `.storeNotFound`, `.damaged`, `.io`; `CancellationError` when the task
    ///   is cancelled before the read starts.
    /// - Complexity: O(lists).
    public func lists() async throws -> [ListSummary] {
        try await _StoreQueues.read { try self.lists() }
    }

    /// One list's summary (head version and digest, counts, oldest retained version), read off the
    /// cooperative thread pool.
    ///
    /// ```swift
    /// let head = try await store.summary(of: "inbox").version
    /// ```
    /// - Throws: `StoreError` `.listNotFound`, `.storeNotFound`, `.damaged`, `.io`;
    ///   `CancellationError` when the task is cancelled before the read starts.
    /// - Complexity: O(1).
    public func summary(of list: String) async throws -> ListSummary {
        try await _StoreQueues.read { try self.summary(of: list) }
    }

    /// A version of `list` (the head, or with `version` any version still in its history), read off
    /// the cooperative thread pool.
    ///
    /// ```swift
    /// let now = try await store.snapshot(of: "inbox")
    /// let then = try await store.snapshot(of: "inbox", at: now.version - 3)
    /// ```
    /// - Throws: `StoreError` `.storeNotFound`, `.listNotFound`, `.versionNotFound`, `.damaged`,
    ///   `.io`; `CancellationError` when the task is cancelled before the read starts.
    /// - Complexity: as `snapshot(of:at:)`.
    public func snapshot(of list: String, at version: Int? = nil) async throws -> ListSnapshot {
        try await _StoreQueues.read { try self.snapshot(of: list, at: version) }
    }

    /// Journal entries of `list` after `version` (default: from the oldest retained one), oldest
    /// first, at most `limit` of them and, with `maxBytes`, only as many as fit in that many bytes of
    /// stages JSON (but at least one), read off the cooperative thread pool.
    ///
    /// ```swift
    /// var cursor = 0
    /// repeat {
    ///     let page = try await store.journal(of: "inbox", after: cursor, limit: 100, maxBytes: 8 << 20)
    ///     for entry in page.entries { /* … */ cursor = entry.version }
    /// } while page.hasMore
    /// ```
    /// - Parameters:
    ///   - list: the list's name.
    ///   - version: the version after which entries are returned (`nil`: from the oldest retained).
    ///   - limit: the most entries returned (0 answers only `hasMore`).
    ///   - maxBytes: the byte budget of the page's stages (default: no budget).
    /// - Throws: `StoreError` `.storeNotFound`, `.listNotFound`, `.versionNotFound` (a version older
    ///   than the retained history, or after the head), `.damaged`, `.io`; `CancellationError` when
    ///   the task is cancelled before the read starts.
    /// - Complexity: O(size of the entries returned); with a budget, one more pass over the sizes of
    ///   at most `limit + 1` entries.
    public func journal(
        of list: String, after version: Int? = nil, limit: Int = 100, maxBytes: Int = .max
    ) async throws -> JournalPage {
        try await _StoreQueues.read { try self.journal(of: list, after: version, limit: limit, maxBytes: maxBytes) }
    }

    /// One minimal staged changeset from `version` to `otherVersion` (default: the head), both in the
    /// list's retained history, read and diffed off the cooperative thread pool.
    ///
    /// ```swift
    /// let (_, head, changeset) = try await store.changeset(of: "inbox", from: 7)
    /// print(changeset.count, "stages up to version", head.version)
    /// ```
    /// - Throws: `StoreError` `.storeNotFound`, `.listNotFound`, `.versionNotFound`, `.damaged`,
    ///   `.io`; `CancellationError` when the task is cancelled before the read starts.
    /// - Complexity: that of two `snapshot(of:at:)` calls plus one diff.
    public func changeset(of list: String, from version: Int, to otherVersion: Int? = nil) async throws
        -> (from: ListSnapshot, to: ListSnapshot, changeset: ListChangeset)
    {
        try await _StoreQueues.read { try self.changeset(of: list, from: version, to: otherVersion) }
    }

    /// Records `sections` as the new head of `list` (diffed against the head, rows and journal entry
    /// written in one transaction), off the cooperative thread pool. Async commits to one store file
    /// run one after the other, in the order they were called.
    ///
    /// ```swift
    /// let result = try await store.commit(sections, to: "inbox", expectedVersion: 7, author: "ana")
    /// if result.changed { print("version", result.version, "in", result.stageCount, "stages") }
    /// ```
    ///
    /// - Parameters: as `commit(_:to:expectedVersion:author:message:)`.
    /// - Returns: the new version, or the unchanged head when nothing changed.
    /// - Throws: `StoreError` `.versionConflict` (with `expectedVersion` and `currentVersion`),
    ///   `.invalidSnapshot`, `.invalidListName`, `.notAStore`, `.unsupportedSchema`, `.damaged`, `.io`;
    ///   `CancellationError` when the task is cancelled before the commit starts. Nothing is written
    ///   when it throws; a commit that has started is not cancelled.
    /// - Complexity: that of the synchronous `commit`: O(n + k log k) time for n items and k changes,
    ///   plus O(c) row writes for c changed items.
    @discardableResult
    public func commit(
        _ sections: [ListSection], to list: String, expectedVersion: Int? = nil, author: String? = nil,
        message: String? = nil
    ) async throws -> CommitResult {
        try await _StoreQueues.write(path) {
            try self.commit(sections, to: list, expectedVersion: expectedVersion, author: author, message: message)
        }
    }

    /// Changes a copy of the head of `list` and commits it, atomically, off the cooperative thread
    /// pool: `body` runs on the store's write queue inside the write transaction, so no other writer
    /// can commit in between (keep it short, and do not wait in it for other tasks).
    ///
    /// ```swift
    /// try await store.edit("inbox", author: "ana") { draft in
    ///     try draft.moveSection(ExactString("done"), to: 0)
    /// }
    /// ```
    /// - Throws: what `body` throws (nothing is written), and what `commit` throws;
    ///   `CancellationError` when the task is cancelled before the edit starts (`body` is not called).
    /// - Complexity: that of `commit`.
    @discardableResult
    public func edit(
        _ list: String, expectedVersion: Int? = nil, author: String? = nil, message: String? = nil,
        _ body: @Sendable (inout ListDraft<ListItem, ListItem>) throws -> Void
    ) async throws -> CommitResult {
        try await _StoreQueues.write(path) {
            try self.edit(list, expectedVersion: expectedVersion, author: author, message: message, body)
        }
    }

    /// Registers a consumer of `list` (pruning keeps every journal entry after `version`, default the
    /// oldest retained version, until it acknowledges a later one), off the cooperative thread pool.
    ///
    /// ```swift
    /// try await store.registerConsumer("laptop", of: "inbox")
    /// ```
    /// - Throws: `StoreError` `.invalidArgument` (an invalid consumer name), `.listNotFound`,
    ///   `.versionNotFound` (a version after the head), `.storeNotFound`, `.io`; `CancellationError`
    ///   when the task is cancelled before the write starts.
    /// - Complexity: O(consumers of the list).
    @discardableResult
    public func registerConsumer(_ name: String, of list: String, at version: Int? = nil) async throws -> ConsumerInfo {
        try await _StoreQueues.write(path) { try self.registerConsumer(name, of: list, at: version) }
    }

    /// Records that consumer `name` of `list` has applied `version`, off the cooperative thread pool;
    /// pruning may now drop what lies before it.
    ///
    /// ```swift
    /// try await store.acknowledge(consumer: "laptop", of: "inbox", version: 42)
    /// ```
    /// - Throws: `StoreError` `.invalidArgument` (an invalid name, or no consumer has that name),
    ///   `.listNotFound`, `.versionNotFound` (a version after the head), `.storeNotFound`, `.io`;
    ///   `CancellationError` when the task is cancelled before the write starts.
    /// - Complexity: O(consumers of the list).
    @discardableResult
    public func acknowledge(consumer name: String, of list: String, version: Int) async throws -> ConsumerInfo {
        try await _StoreQueues.write(path) { try self.acknowledge(consumer: name, of: list, version: version) }
    }

    /// Removes consumer `name` of `list`, off the cooperative thread pool; returns whether it was
    /// registered.
    ///
    /// ```swift
    /// try await store.unregisterConsumer("laptop", of: "inbox")
    /// ```
    /// - Throws: `StoreError` `.listNotFound`, `.storeNotFound`, `.io`; `CancellationError` when the
    ///   task is cancelled before the write starts.
    /// - Complexity: O(1).
    @discardableResult
    public func unregisterConsumer(_ name: String, of list: String) async throws -> Bool {
        try await _StoreQueues.write(path) { try self.unregisterConsumer(name, of: list) }
    }

    /// The consumers of `list`, by name, read off the cooperative thread pool.
    ///
    /// ```swift
    /// let slowest = try await store.consumers(of: "inbox").map(\.version).min()
    /// ```
    /// - Throws: `StoreError` `.listNotFound`, `.storeNotFound`, `.io`; `CancellationError` when the
    ///   task is cancelled before the read starts.
    /// - Complexity: O(consumers of the list).
    public func consumers(of list: String) async throws -> [ConsumerInfo] {
        try await _StoreQueues.read { try self.consumers(of: list) }
    }

    /// Drops old journal entries of `list` (see `prune(_:_:force:)`), off the cooperative thread
    /// pool.
    ///
    /// ```swift
    /// try await store.prune("inbox", .keepLast(1_000))
    /// ```
    /// - Throws: as `prune(_:_:force:)`; `CancellationError` when the task is cancelled before the
    ///   write starts.
    /// - Complexity: that of `prune(_:_:force:)`.
    @discardableResult
    public func prune(_ list: String, _ rule: PruneRule, force: Bool = false) async throws -> PruneResult {
        try await _StoreQueues.write(path) { try self.prune(list, rule, force: force) }
    }

    /// Merges a replica's local change into `list`, exactly once per push id, off the cooperative
    /// thread pool (see `merge(_:into:)`).
    ///
    /// ```swift
    /// let answer = try await store.merge(push, into: "inbox")
    /// ```
    /// - Throws: as `merge(_:into:)`; `CancellationError` when the task is cancelled before the
    ///   merge starts.
    /// - Complexity: that of `merge(_:into:)`.
    public func merge(_ push: Push, into list: String) async throws -> PushAnswer {
        try await _StoreQueues.write(path) { try self.merge(push, into: list) }
    }

    /// The recorded pushes of `client` to `list` with a sequence number in `seqs`, off the
    /// cooperative thread pool (see `pushes(from:to:seqs:)`).
    ///
    /// ```swift
    /// let recorded = try await source.pushes(from: client, to: "inbox", seqs: 4...9)
    /// ```
    /// - Throws: as `pushes(from:to:seqs:)`; `CancellationError` when the task is cancelled before
    ///   the read starts.
    /// - Complexity: that of `pushes(from:to:seqs:)`.
    public func pushes(from client: String, to list: String, seqs: ClosedRange<Int>) async throws -> [PushAnswer] {
        try await _StoreQueues.read { try self.pushes(from: client, to: list, seqs: seqs) }
    }

    /// Checks the store (SQLite's integrity check, then a replay of every list's journal, or only
    /// `list`'s, against the stored digests, counts and head rows), off the cooperative thread pool.
    ///
    /// ```swift
    /// let report = try await store.verify { print($0.list, $0.completed, "/", $0.total) }
    /// ```
    /// - Parameters:
    ///   - list: the one list to replay (`nil`: every list).
    ///   - progress: called after each replayed entry, on the thread that reads the store.
    /// - Throws: `StoreError` `.storeNotFound`, `.listNotFound` (for `list`), `.notAStore`, `.damaged`
    ///   when the file cannot even be read, `.io`; `CancellationError` when the task is cancelled
    ///   before the check starts.
    /// - Complexity: O(v × n) for v journal entries over lists of n items.
    public func verify(
        list: String? = nil, progress: (@Sendable (VerificationProgress) -> Void)? = nil
    ) async throws -> VerificationReport {
        try await _StoreQueues.read { try self.verify(list: list, progress: progress) }
    }
}

/// Where the async variants run their blocking work: on `_BlockingThreads`, reads at once and the
/// writes to one store file one after another, in the order they were called.
private enum _StoreQueues {
    /// The writes to each store file that wait for the one running; a file is dropped with its last
    /// write, so a process that opens many stores keeps nothing for idle ones.
    private static let writers = _Locked([String: [@Sendable () -> Void]]())

    /// Runs `work` on one of the threads.
    static func read<T: Sendable>(_ work: @Sendable () throws -> T) async throws -> T {
        try await run(work) { job in _BlockingThreads.shared.submit(job) }
    }

    /// Runs `work` on one of the threads, after the async writes to the store file at `path` called
    /// before.
    static func write<T: Sendable>(_ path: String, _ work: @Sendable () throws -> T) async throws -> T {
        let key = CommitSignal.key(path)
        return try await run(work) { job in
            let first = writers.withLock { writers in
                guard writers[key] != nil else {
                    writers[key] = []
                    return true
                }
                writers[key]!.append(job)
                return false
            }
            if first { _BlockingThreads.shared.submit { runWrites(key, job) } }
        }
    }

    /// Runs `job`, then the writes to the same file that came meanwhile, one after another.
    private static func runWrites(_ key: String, _ job: @escaping @Sendable () -> Void) {
        var job: (@Sendable () -> Void)? = job
        while let current = job {
            current()
            job = writers.withLock { writers in
                guard let waiting = writers[key], !waiting.isEmpty else {
                    writers[key] = nil
                    return nil
                }
                writers[key]!.removeFirst()
                return waiting[0]
            }
        }
    }

    /// Hands a job that runs `work` and resumes the calling task with its result to `start`;
    /// throws `CancellationError` without running it when the task is cancelled first.
    private static func run<T: Sendable>(
        _ work: @Sendable () throws -> T, start: (@escaping @Sendable () -> Void) -> Void
    ) async throws -> T {
        try Task.checkCancellation()
        return try await withoutActuallyEscaping(work) { work in
            let job = _Job(work)
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    start { continuation.resume(with: job.run()) }
                }
            } onCancel: {
                job.cancel()
            }
        }
    }
}

/// Work waiting in a queue, which cancelling the task that waits for it skips.
///
/// The work is dropped before the task is resumed, so it does not outlive the call that lent it
/// (`withoutActuallyEscaping` checks that).
private final class _Job<T: Sendable>: Sendable {
    private let state: _Locked<(work: (@Sendable () throws -> T)?, cancelled: Bool)>

    init(_ work: @escaping @Sendable () throws -> T) {
        state = _Locked((work, false))
    }

    func cancel() {
        state.withLock { $0.cancelled = true }
    }

    /// Runs the work unless cancelled.
    func run() -> Result<T, any Error> {
        let taken = state.withLock { state in
            defer { state.work = nil }
            return state.cancelled ? nil : state.work
        }
        guard let work = taken else { return .failure(CancellationError()) }
        return Result { try work() }
    }
}

extension Store {
    /// Runs `work` (blocking reads of this store) off the cooperative thread pool, as the async
    /// variants do. Not API (package-visible: ListSync's replicas read through it).
    package func _offPool<T: Sendable>(reading work: @Sendable () throws -> T) async throws -> T {
        try await _StoreQueues.read(work)
    }

    /// Runs `work` (blocking writes to this store) off the cooperative thread pool, after the async
    /// writes to the same file called before, as the async variants do. Not API (package-visible:
    /// ListSync's replicas write through it).
    package func _offPool<T: Sendable>(writing work: @Sendable () throws -> T) async throws -> T {
        try await _StoreQueues.write(path, work)
    }
}
