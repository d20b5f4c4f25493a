import ListDiff

// The store contract (`ListStoreEngine`) for every driver: each method is the store's logic
// (`StoreTransaction`'s extensions) in one transaction of the driver's.

extension StoreDriver {
    /// The store's identity (uuid and epoch), as `ListStoreEngine.identity()`.
    ///
    /// ```swift
    /// let identity = try await store.identity()   // e.g. epoch 1
    /// ```
    /// - Throws: `StoreError` `.storeNotFound`, `.damaged`, `.io`. - Complexity: O(1).
    public func identity() async throws -> StoreIdentity {
        try await run(.read) { try $0.steps.identity() }
    }

    /// Bumps the epoch and takes a new client id, as `ListStoreEngine.advanceEpoch()`.
    ///
    /// ```swift
    /// let restored = try await store.advanceEpoch()   // after restoring a backup
    /// ```
    /// - Throws: `StoreError` `.storeNotFound`, `.damaged`, `.io`. - Complexity: O(1).
    @discardableResult
    public func advanceEpoch() async throws -> StoreIdentity {
        try await run(.write) { try $0.steps.advanceEpoch() }
    }

    /// Every list with its head, base and counts, by name in code point order.
    ///
    /// ```swift
    /// for list in try await store.lists() { print(list.name, list.version) }
    /// ```
    /// - Throws: `StoreError` `.storeNotFound`, `.damaged`, `.io`. - Complexity: O(lists).
    public func lists() async throws -> [ListSummary] {
        try await run(.read) { try $0.steps.lists() }
    }

    /// One list's summary: head version and digest, counts, oldest retained version.
    ///
    /// ```swift
    /// let head = try await store.summary(of: "inbox").version
    /// ```
    /// - Throws: `StoreError` `.listNotFound`, `.storeNotFound`, `.damaged`, `.io`. - Complexity: O(1).
    public func summary(of list: String) async throws -> ListSummary {
        try await run(.read) { try $0.steps.summary(of: list) }
    }

    /// A version of `list`: the head, or with `version`, any version still in its history (time
    /// travel: the nearest snapshot the store keeps at or before `version`, the base's or one kept
    /// for time travel, plus the journal replayed from it up to `version`).
    ///
    /// ```swift
    /// let now = try await store.snapshot(of: "inbox")
    /// let then = try await store.snapshot(of: "inbox", at: now.version - 3)
    /// ```
    /// - Throws: `StoreError` `.listNotFound`, `.versionNotFound` (pruned, or after the head),
    ///   `.storeNotFound`, `.damaged`, `.io`.
    /// - Complexity: O(n) for the head; an older version adds the replay of at most 128 journal
    ///   entries (fewer when they hold about a snapshot's size of stages).
    public func snapshot(of list: String, at version: Int? = nil) async throws -> ListSnapshot {
        try await run(.read) { try $0.steps.snapshot(of: list, at: version) }
    }

    /// Journal entries of `list` after `version` (default: from the oldest retained one), oldest
    /// first, at most `limit` of them and, with `maxBytes`, only as many as fit in that many bytes
    /// of stages JSON, but always at least one, so that a reader paging with `hasMore` makes
    /// progress even past an entry larger than the budget.
    ///
    /// ```swift
    /// var cursor = 0
    /// repeat {
    ///     let page = try await store.journal(of: "inbox", after: cursor, limit: 100, maxBytes: 8 << 20)
    ///     for entry in page.entries { cursor = entry.version }
    /// } while page.hasMore
    /// ```
    /// - Throws: `StoreError` `.listNotFound`, `.versionNotFound` (older than the retained history,
    ///   or after the head), `.storeNotFound`, `.damaged`, `.io`.
    /// - Complexity: O(size of the entries returned); with a budget, one more pass over the sizes of
    ///   at most `limit + 1` entries (no entry past the page is read).
    public func journal(of list: String, after version: Int? = nil, limit: Int = 100, maxBytes: Int = .max) async throws -> JournalPage {
        try await run(.read) { try $0.steps.journal(of: list, after: version, limit: limit, maxBytes: maxBytes) }
    }

    /// Journal entries as `journal(of:after:limit:maxBytes:)` reads them, for a reader that holds at
    /// most `maxEntryBytes` of one entry: a larger entry is not read, and when it comes first the
    /// page holds no entry and names it (`JournalPage.tooLarge`).
    ///
    /// ```swift
    /// let page = try await store.journal(of: "inbox", after: 41, limit: 100, maxBytes: 4 << 20, maxEntryBytes: 4 << 20)
    /// if let large = page.tooLarge { print("version", large.version, "takes", large.bytes, "bytes: resync in pages") }
    /// ```
    /// - Throws: as `journal(of:after:limit:maxBytes:)`.
    /// - Complexity: as `journal(of:after:limit:maxBytes:)`.
    public func journal(of list: String, after version: Int?, limit: Int, maxBytes: Int, maxEntryBytes: Int) async throws -> JournalPage {
        try await run(.read) {
            try $0.steps.journal(of: list, after: version, limit: limit, maxBytes: maxBytes, maxEntryBytes: maxEntryBytes)
        }
    }

    /// A page of `list`'s head after `cursor` (`nil`: the first), of about `maxBytes` of records, read
    /// in one transaction with bounded queries (see `ListPage`).
    ///
    /// ```swift
    /// let first = try await store.page(of: "inbox", at: nil, after: nil, maxBytes: 4 << 20)
    /// let second = try await store.page(of: "inbox", at: first.version, after: first.next, maxBytes: 4 << 20)
    /// ```
    /// - Throws: `StoreError` `.listNotFound`, `.versionNotFound` (the head moved past `version`),
    ///   `.invalidArgument`, `.storeNotFound`, `.damaged`, `.io`.
    /// - Complexity: O(records returned).
    public func page(of list: String, at version: Int?, after cursor: ListPage.Cursor?, maxBytes: Int) async throws -> ListPage {
        try await run(.read) { try $0.steps.page(of: list, at: version, after: cursor, maxBytes: maxBytes) }
    }

    /// One minimal staged changeset from `version` to `otherVersion` (default: the head), with the
    /// snapshots at both.
    ///
    /// ```swift
    /// let (_, _, changeset) = try await store.changeset(of: "inbox", from: 3)
    /// ```
    /// - Throws: as `snapshot(of:at:)`. - Complexity: that of two snapshots and one diff.
    public func changeset(of list: String, from version: Int, to otherVersion: Int? = nil) async throws
        -> (from: ListSnapshot, to: ListSnapshot, changeset: ListChangeset)
    {
        try await run(.read) { try $0.steps.changeset(of: list, from: version, to: otherVersion) }
    }

    /// Records `sections` as the new head of `list` (created by its first commit): the diff against
    /// the head, its rows and its journal entry in one transaction. With `expectedVersion`, refused
    /// unless the head is still that version (optimistic concurrency).
    ///
    /// ```swift
    /// let result = try await store.commit(sections, to: "inbox", expectedVersion: 4, author: "ana")
    /// print(result.version, result.changeset.stages.count)
    /// ```
    /// - Throws: `StoreError` `.versionConflict`, `.invalidSnapshot`, `.invalidListName`,
    ///   `.invalidArgument`, `.damaged`, `.io`. Nothing is written when it throws.
    /// - Complexity: O(n + k log k) for n items and k changes, plus the changed rows' writes.
    @discardableResult
    public func commit(
        _ sections: [ListSection], to list: String, expectedVersion: Int? = nil, author: String? = nil, message: String? = nil
    ) async throws -> CommitResult {
        try _Names.checkList(list)
        return try await run(.create) {
            try $0.steps.commit(
                to: list, expectedVersion: expectedVersion, author: author, message: message, target: .snapshot(sections))
        }
    }

    /// Changes a copy of the head of `list` and commits it, atomically: `body` runs inside the
    /// transaction, while the list's other writers wait.
    ///
    /// ```swift
    /// try await store.edit("inbox") { draft in try draft.reloadElement(ListItem(id: "m1", content: Array("{}".utf8))) }
    /// ```
    /// - Throws: what `body` throws (nothing is written), and what `commit` throws.
    /// - Complexity: that of `commit`, plus `body`.
    @discardableResult
    public func edit(
        _ list: String, expectedVersion: Int? = nil, author: String? = nil, message: String? = nil,
        _ body: @escaping @Sendable (inout ListDraft<ListItem, ListItem>) throws -> Void
    ) async throws -> CommitResult {
        try _Names.checkList(list)
        // `body` escapes for real: the transaction runs on an engine's thread, which may let go of
        // its work a moment after the caller resumes (a closure borrowed without escaping would
        // trap then).
        return try await run(.create) {
            try $0.steps.commit(
                to: list, expectedVersion: expectedVersion, author: author, message: message,
                target: .edit { sections in
                    var draft = ListDraft(sections: sections)
                    try CallerError.passing { try body(&draft) }
                    return draft.sections
                })
        }
    }

    /// Merges a replica's push into `list` exactly once per push id: the first time, its intents
    /// are rebased onto the head and committed with the push id; again, the recorded answer.
    ///
    /// ```swift
    /// let answer = try await store.merge(push, into: "inbox")   // answer.version, answer.conflicts
    /// ```
    /// - Throws: `StoreError` `.listNotFound`, `.invalidArgument`, `.pushMismatch`,
    ///   `.pushOutOfOrder`, `.damaged`, `.io`.
    /// - Complexity: O(n + m) for n items and m intents, plus the commit's diff.
    public func merge(_ push: Push, into list: String) async throws -> PushAnswer {
        try await merging(push, into: list, authoredBy: nil)
    }

    /// `merge(_:into:)`, the journal recording `author` instead of the push's own author (a
    /// journal server's user); the push is recorded as the client sent it, so its retries are
    /// known.
    ///
    /// ```swift
    /// let answer = try await store.merge(push, into: "users/ana/inbox", authoredBy: "ana")
    /// ```
    /// - Throws: as `merge(_:into:)`. - Complexity: as `merge(_:into:)`.
    public func merge(_ push: Push, into list: String, authoredBy author: String?) async throws -> PushAnswer {
        try await merging(push, into: list, authoredBy: .some(author))
    }

    /// Merges `push`: one of at least `rebaseAheadIntents` intents is rebased in a read transaction
    /// first, so that its merge holds no write lock (SQLite's is the whole store's), and the write
    /// takes that rebase when the head has not moved meanwhile. A cancelled task stops the merge
    /// where it is, every 1,024 intents, and writes nothing.
    private func merging(_ push: Push, into list: String, authoredBy author: String??) async throws -> PushAnswer {
        let stopped = _Locked(false)
        let isStopped: @Sendable () -> Bool = { stopped.withLock { $0 } }
        return try await withTaskCancellationHandler {
            var ahead: RebasedPush?
            if push.intents.count >= Self.rebaseAheadIntents {
                ahead = try await run(.read) { try $0.steps.rebaseAhead(push, into: list, stoppingWhen: isStopped) }
            }
            return try await run(.write) { [ahead] in
                try $0.steps.merge(push, into: list, authoredBy: author, rebasedAhead: ahead, stoppingWhen: isStopped)
            }
        } onCancel: {
            stopped.withLock { $0 = true }
        }
    }

    /// The pushes with at least this many intents are rebased before the write that commits them.
    /// Smaller ones merge inside the write, on the head it keeps, which spares them a read of the
    /// list's rows (a push of 1,000 intents to a list of 100,000 items merges in tens of
    /// milliseconds, about what reading its rows costs).
    static var rebaseAheadIntents: Int { 4_096 }

    /// The recorded pushes of `client` to `list` with a sequence number in `seqs`, in order, at
    /// most 1,000.
    ///
    /// ```swift
    /// let answers = try await store.pushes(from: client, to: "inbox", seqs: 1...10)
    /// ```
    /// - Throws: `StoreError` `.listNotFound`, `.storeNotFound`, `.damaged`, `.io`.
    /// - Complexity: O(log p + k) for p recorded pushes and k returned.
    public func pushes(from client: String, to list: String, seqs: ClosedRange<Int>) async throws -> [PushAnswer] {
        try await run(.read) { try $0.steps.pushes(from: client, to: list, seqs: seqs) }
    }

    /// Registers consumer `name` of `list` at `version` (default: the base); prune keeps what a
    /// registered consumer has not acknowledged.
    ///
    /// ```swift
    /// try await store.registerConsumer("search-index", of: "inbox")
    /// ```
    /// - Throws: `StoreError` `.invalidArgument`, `.listNotFound`, `.versionNotFound`, `.io`.
    /// - Complexity: O(consumers of the list).
    @discardableResult
    public func registerConsumer(_ name: String, of list: String, at version: Int? = nil) async throws -> ConsumerInfo {
        try await run(.write) { try $0.steps.setConsumer(name, of: list, version: version, registering: true) }
    }

    /// Records that the registered consumer `name` of `list` has applied `version`.
    ///
    /// ```swift
    /// try await store.acknowledge(consumer: "search-index", of: "inbox", version: 12)
    /// ```
    /// - Throws: `StoreError` `.invalidArgument` (not registered), `.listNotFound`,
    ///   `.versionNotFound`, `.io`.
    /// - Complexity: O(consumers of the list).
    @discardableResult
    public func acknowledge(consumer name: String, of list: String, version: Int) async throws -> ConsumerInfo {
        try await run(.write) { try $0.steps.setConsumer(name, of: list, version: version, registering: false) }
    }

    /// Removes consumer `name` of `list`; returns whether it was registered.
    ///
    /// ```swift
    /// let removed = try await store.unregisterConsumer("search-index", of: "inbox")
    /// ```
    /// - Throws: `StoreError` `.listNotFound`, `.io`. - Complexity: O(1).
    @discardableResult
    public func unregisterConsumer(_ name: String, of list: String) async throws -> Bool {
        try await run(.write) { try $0.steps.unregisterConsumer(name, of: list) }
    }

    /// The consumers of `list`, by name.
    ///
    /// ```swift
    /// let behind = try await store.consumers(of: "inbox").map(\.version).min()
    /// ```
    /// - Throws: `StoreError` `.listNotFound`, `.storeNotFound`, `.io`.
    /// - Complexity: O(consumers of the list).
    public func consumers(of list: String) async throws -> [ConsumerInfo] {
        try await run(.read) { try $0.steps.consumers(of: list) }
    }

    /// Drops the journal entries of `list` before the base `rule` gives, unless a registered
    /// consumer still needs them (or `force`), and releases the blobs only the dropped versions
    /// referred to (`PruneResult.releasedBlobs`).
    ///
    /// ```swift
    /// try await store.prune("inbox", .keepLast(100))
    /// ```
    /// - Throws: `StoreError` `.invalidArgument`, `.versionNotFound`, `.listNotFound`, `.damaged`, `.io`.
    /// - Complexity: O(n × (new base − old base)) plus the rows removed; for a list that has blobs,
    ///   plus the bytes of its journal that may refer to them.
    @discardableResult
    public func prune(_ list: String, _ rule: PruneRule, force: Bool = false) async throws -> PruneResult {
        try await run(.write) { try $0.steps.prune(list, rule, force: force) }
    }

    /// Replays every list's journal (or only `list`'s) against the stored digests, counts, head rows
    /// and stored snapshots, and reports what diverges; `progress` is told of each entry replayed.
    ///
    /// ```swift
    /// let report = try await store.verify()
    /// if !report.isValid { print(report.lists.compactMap(\.problem)) }
    /// ```
    /// - Throws: `StoreError` `.listNotFound` (for `list`), `.storeNotFound`, `.io`;
    ///   `CancellationError`.
    /// - Complexity: O(v × n) for v journal entries over lists of n items.
    public func verify(list: String? = nil, progress: (@Sendable (VerificationProgress) -> Void)? = nil) async throws -> VerificationReport {
        try await run(.read) { try $0.steps.verify(list: list, progress: progress) }
    }
}
