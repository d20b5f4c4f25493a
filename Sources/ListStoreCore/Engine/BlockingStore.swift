import ListMerge

/// A store whose reads and writes can also run on the calling thread, blocking it: SQLite's
/// `Store`. Each method is the async method of the same name (`StoreDriver`'s, which documents
/// it in full), run in one transaction on the calling thread, as GRDB's synchronous `read` and
/// `write` do: for scripts, command-line tools and code that owns its thread. Never call these
/// from Swift's cooperative thread pool (an actor, an async function); call the async ones there.
///
/// ```swift
/// let store = Store(path: "app.liststore")
/// try store.commit(sections, to: "inbox")
/// print(try store.snapshot(of: "inbox").version)
/// ```
public protocol BlockingStore: AnyObject {
    /// Runs `body` as one transaction on the calling thread, as `StoreDriver.transaction(_:_:)`.
    /// - Throws: what `body` throws; the engine's failures as `StoreError`.
    /// - Complexity: that of `body`, plus one transaction.
    @_spi(StoreDriver)
    func blockingTransaction<T>(_ access: StoreAccess, _ body: (DriverTransaction) throws -> T) throws -> T
}

extension BlockingStore {
    /// The store's identity (uuid and epoch).
    /// ```swift
    /// let epoch = try store.identity().epoch
    /// ```
    /// - Throws: `StoreError` `.storeNotFound`, `.damaged`, `.io`. - Complexity: O(1).
    @available(*, noasync, message: "blocks its thread; in async code, call the async method of the same name with try await")
    public func identity() throws -> StoreIdentity {
        try blockingTransaction(.read) { try $0.steps.identity() }
    }

    /// Bumps the epoch and takes a new client id (after restoring the store from a backup).
    /// ```swift
    /// try store.advanceEpoch()
    /// ```
    /// - Throws: `StoreError` `.storeNotFound`, `.damaged`, `.io`. - Complexity: O(1).
    @available(*, noasync, message: "blocks its thread; in async code, call the async method of the same name with try await")
    @discardableResult
    public func advanceEpoch() throws -> StoreIdentity {
        try blockingTransaction(.write) { try $0.steps.advanceEpoch() }
    }

    /// The lists of the store, by name.
    /// ```swift
    /// let names = try store.lists().map(\.name)
    /// ```
    /// - Throws: `StoreError` `.storeNotFound`, `.damaged`, `.io`. - Complexity: O(lists).
    @available(*, noasync, message: "blocks its thread; in async code, call the async method of the same name with try await")
    public func lists() throws -> [ListSummary] {
        try blockingTransaction(.read) { try $0.steps.lists() }
    }

    /// One list's summary: head version and digest, counts, oldest retained version.
    /// ```swift
    /// let head = try store.summary(of: "inbox").version
    /// ```
    /// - Throws: `StoreError` `.listNotFound`, `.storeNotFound`, `.damaged`, `.io`. - Complexity: O(1).
    @available(*, noasync, message: "blocks its thread; in async code, call the async method of the same name with try await")
    public func summary(of list: String) throws -> ListSummary {
        try blockingTransaction(.read) { try $0.steps.summary(of: list) }
    }

    /// The head of `list`, or with `version` any version still in its history (time travel).
    /// ```swift
    /// let then = try store.snapshot(of: "inbox", at: 3)
    /// ```
    /// - Throws: `StoreError` `.storeNotFound`, `.listNotFound`, `.versionNotFound`, `.damaged`, `.io`.
    /// - Complexity: O(n) for the head; an older version adds the replay of at most 128 journal
    ///   entries. See ListStore's article "History and Retention", "Time travel".
    @available(*, noasync, message: "blocks its thread; in async code, call the async method of the same name with try await")
    public func snapshot(of list: String, at version: Int? = nil) throws -> ListSnapshot {
        try blockingTransaction(.read) { try $0.steps.snapshot(of: list, at: version) }
    }

    /// Journal entries of `list` after `version`, at most `limit` of them and about `maxBytes` of
    /// stages (always at least one).
    /// ```swift
    /// let page = try store.journal(of: "inbox", after: 0, limit: 100)
    /// ```
    /// - Throws: `StoreError` `.storeNotFound`, `.listNotFound`, `.versionNotFound`, `.damaged`, `.io`.
    /// - Complexity: O(size of the entries returned).
    @available(*, noasync, message: "blocks its thread; in async code, call the async method of the same name with try await")
    public func journal(of list: String, after version: Int? = nil, limit: Int = 100, maxBytes: Int = .max) throws -> JournalPage {
        try blockingTransaction(.read) { try $0.steps.journal(of: list, after: version, limit: limit, maxBytes: maxBytes) }
    }

    /// The store feed after `position`: every commit of the lists `including` accepts, at
    /// store-wide positions in commit order (``ListStoreEngine/feed(after:fingerprint:limit:including:)``).
    /// ```swift
    /// let page = try store.feed(after: cursor)
    /// ```
    /// - Throws: `StoreError` `.cursorExpired`, `.invalidArgument`, `.storeNotFound`, `.damaged`,
    ///   `.io`. - Complexity: O(events read).
    @available(*, noasync, message: "blocks its thread; in async code, call the async method of the same name with try await")
    public func feed(after position: Int? = nil, limit: Int = 100, including: (String) -> Bool = { _ in true }) throws -> FeedPage {
        try blockingTransaction(.read) { try $0.steps.feedPage(after: position, limit: limit, including: including) }
    }

    /// Deletes `list`, as ``ListStoreEngine/deleteList(_:discardingPending:)``.
    /// ```swift
    /// try store.deleteList("users/ana/old")
    /// ```
    /// - Throws: `StoreError` `.listNotFound`, `.storeNotFound`, `.damaged`, `.io`.
    /// - Complexity: O(rows of the list).
    @available(*, noasync, message: "blocks its thread; in async code, call the async method of the same name with try await")
    @discardableResult
    public func deleteList(_ list: String, discardingPending: Bool = false) throws -> Int {
        try blockingTransaction(.write) { try $0.steps.deleteList(list, discardingPending: discardingPending) }
    }

    /// One minimal staged changeset from `version` to `otherVersion` (default: the head).
    /// ```swift
    /// let (_, _, changeset) = try store.changeset(of: "inbox", from: 3)
    /// ```
    /// - Throws: as `snapshot(of:at:)`. - Complexity: that of two snapshots and one diff.
    @available(*, noasync, message: "blocks its thread; in async code, call the async method of the same name with try await")
    public func changeset(of list: String, from version: Int, to otherVersion: Int? = nil) throws
        -> (from: ListSnapshot, to: ListSnapshot, changeset: ListChangeset)
    {
        try blockingTransaction(.read) { try $0.steps.changeset(of: list, from: version, to: otherVersion) }
    }

    /// Records `sections` as the new head of `list`: the diff against the head, the rows that
    /// changed and the journal entry in one transaction; a snapshot equal to the head writes nothing.
    /// ```swift
    /// let result = try store.commit(sections, to: "inbox", expectedVersion: 7, author: "ana")
    /// ```
    /// - Throws: `StoreError` `.versionConflict`, `.invalidSnapshot`, `.invalidListName`,
    ///   `.notAStore`, `.unsupportedSchema`, `.damaged`, `.io`. Nothing is written when it throws.
    /// - Complexity: O(n + k log k) for n items and k changes, plus the changed rows' writes.
    @available(*, noasync, message: "blocks its thread; in async code, call the async method of the same name with try await")
    @discardableResult
    public func commit(
        _ sections: [ListSection], to list: String, expectedVersion: Int? = nil, author: String? = nil, message: String? = nil
    ) throws -> CommitResult {
        try _Names.checkList(list)
        return try blockingTransaction(.create) {
            try $0.steps.commit(to: list, expectedVersion: expectedVersion, author: author, message: message, target: .snapshot(sections))
        }
    }

    /// Changes a copy of the head of `list` and commits it, atomically: `body` runs inside the
    /// write transaction, while other writers of the store wait.
    /// ```swift
    /// try store.edit("inbox") { draft in try draft.removeElement("m1") }
    /// ```
    /// - Throws: what `body` throws (nothing is written), and what `commit` throws.
    /// - Complexity: that of `commit`, plus `body`.
    @available(*, noasync, message: "blocks its thread; in async code, call the async method of the same name with try await")
    @discardableResult
    public func edit(
        _ list: String, expectedVersion: Int? = nil, author: String? = nil, message: String? = nil,
        _ body: (inout ListDraft<ListItem, ListItem>) throws -> Void
    ) throws -> CommitResult {
        try commit(to: list, expectedVersion: expectedVersion, author: author, message: message) { head in
            var draft = ListDraft(sections: head)
            try body(&draft)
            return draft.sections
        }
    }

    /// Merges a replica's push into `list` exactly once per push id.
    /// ```swift
    /// let answer = try store.merge(push, into: "inbox")
    /// ```
    /// - Throws: `StoreError` `.listNotFound`, `.invalidArgument`, `.pushMismatch`,
    ///   `.pushOutOfOrder`, `.damaged`, `.io`.
    /// - Complexity: O(n + m) for n items and m intents, plus the commit's diff.
    @available(*, noasync, message: "blocks its thread; in async code, call the async method of the same name with try await")
    public func merge(_ push: Push, into list: String) throws -> PushAnswer {
        try blockingTransaction(.write) { try $0.steps.merge(push, into: list) }
    }

    /// The recorded pushes of `client` to `list` with a sequence number in `seqs`, at most 1,000.
    /// ```swift
    /// let answers = try store.pushes(from: client, to: "inbox", seqs: 1...10)
    /// ```
    /// - Throws: `StoreError` `.listNotFound`, `.storeNotFound`, `.damaged`, `.io`.
    /// - Complexity: O(log p + k) for p recorded pushes and k returned.
    @available(*, noasync, message: "blocks its thread; in async code, call the async method of the same name with try await")
    public func pushes(from client: String, to list: String, seqs: ClosedRange<Int>) throws -> [PushAnswer] {
        try blockingTransaction(.read) { try $0.steps.pushes(from: client, to: list, seqs: seqs) }
    }

    /// Registers consumer `name` of `list` at `version` (default: the base).
    /// ```swift
    /// try store.registerConsumer("search-index", of: "inbox")
    /// ```
    /// - Throws: `StoreError` `.invalidArgument`, `.listNotFound`, `.versionNotFound`, `.io`.
    /// - Complexity: O(consumers of the list).
    @available(*, noasync, message: "blocks its thread; in async code, call the async method of the same name with try await")
    @discardableResult
    public func registerConsumer(_ name: String, of list: String, at version: Int? = nil) throws -> ConsumerInfo {
        try blockingTransaction(.write) { try $0.steps.setConsumer(name, of: list, version: version, registering: true) }
    }

    /// Records that the registered consumer `name` of `list` has applied `version`.
    /// ```swift
    /// try store.acknowledge(consumer: "search-index", of: "inbox", version: 12)
    /// ```
    /// - Throws: `StoreError` `.invalidArgument`, `.listNotFound`, `.versionNotFound`, `.io`.
    /// - Complexity: O(consumers of the list).
    @available(*, noasync, message: "blocks its thread; in async code, call the async method of the same name with try await")
    @discardableResult
    public func acknowledge(consumer name: String, of list: String, version: Int) throws -> ConsumerInfo {
        try blockingTransaction(.write) { try $0.steps.setConsumer(name, of: list, version: version, registering: false) }
    }

    /// Removes consumer `name` of `list`; returns whether it was registered.
    /// ```swift
    /// try store.unregisterConsumer("search-index", of: "inbox")
    /// ```
    /// - Throws: `StoreError` `.listNotFound`, `.io`. - Complexity: O(1).
    @available(*, noasync, message: "blocks its thread; in async code, call the async method of the same name with try await")
    @discardableResult
    public func unregisterConsumer(_ name: String, of list: String) throws -> Bool {
        try blockingTransaction(.write) { try $0.steps.unregisterConsumer(name, of: list) }
    }

    /// The consumers of `list`, by name.
    /// ```swift
    /// let consumers = try store.consumers(of: "inbox")
    /// ```
    /// - Throws: `StoreError` `.listNotFound`, `.storeNotFound`, `.io`. - Complexity: O(consumers).
    @available(*, noasync, message: "blocks its thread; in async code, call the async method of the same name with try await")
    public func consumers(of list: String) throws -> [ConsumerInfo] {
        try blockingTransaction(.read) { try $0.steps.consumers(of: list) }
    }

    /// Drops the journal entries of `list` before the base `rule` gives, unless a registered
    /// consumer still needs them (or `force`).
    /// ```swift
    /// try store.prune("inbox", .keepLast(100))
    /// ```
    /// - Throws: `StoreError` `.invalidArgument`, `.versionNotFound`, `.listNotFound`, `.damaged`, `.io`.
    /// - Complexity: O(n × (new base − old base)) plus the rows removed.
    @available(*, noasync, message: "blocks its thread; in async code, call the async method of the same name with try await")
    @discardableResult
    public func prune(_ list: String, _ rule: PruneRule, force: Bool = false) throws -> PruneResult {
        try blockingTransaction(.write) { try $0.steps.prune(list, rule, force: force) }
    }

    /// Replays every list's journal (or only `list`'s) and reports what diverges.
    /// ```swift
    /// let ok = try store.verify().isValid
    /// ```
    /// - Throws: `StoreError` `.listNotFound` (for `list`), `.storeNotFound`, `.io`.
    /// - Complexity: O(v × n) for v journal entries over lists of n items.
    @available(*, noasync, message: "blocks its thread; in async code, call the async method of the same name with try await")
    public func verify(list: String? = nil, progress: ((VerificationProgress) -> Void)? = nil) throws -> VerificationReport {
        try blockingTransaction(.read) { try $0.steps.verify(list: list, progress: progress) }
    }

    /// Which source `list` replicates, and up to which version; `nil` for a list that is not one.
    /// ```swift
    /// let position = try store.replicaSource(of: "inbox")
    /// ```
    /// - Throws: `StoreError` `.storeNotFound`, `.damaged`, `.io`. - Complexity: O(1).
    @available(*, noasync, message: "blocks its thread; in async code, call the async method of the same name with try await")
    public func replicaSource(of list: String) throws -> ReplicaSource? {
        try blockingTransaction(.read) { try $0.steps.replicaSource(of: list) }
    }

    /// The id this store pushes its local changes under.
    /// ```swift
    /// let client = try store.clientID()
    /// ```
    /// - Throws: `StoreError` `.storeNotFound`, `.damaged`, `.io`. - Complexity: O(1).
    @available(*, noasync, message: "blocks its thread; in async code, call the async method of the same name with try await")
    public func clientID() throws -> String {
        try blockingTransaction(.read) { try $0.steps.clientID() }
    }

    /// The local changes of the replica list `list` not yet confirmed, oldest first.
    /// ```swift
    /// let seqs = try store.outbox(of: "inbox").map(\.seq)
    /// ```
    /// - Throws: `StoreError` `.storeNotFound`, `.listNotFound`, `.damaged`, `.io`.
    /// - Complexity: O(size of the outbox).
    @available(*, noasync, message: "blocks its thread; in async code, call the async method of the same name with try await")
    public func outbox(of list: String) throws -> [OutboxEntry] {
        try blockingTransaction(.read) { try $0.steps.outbox(of: list) }
    }

    /// Where the replica list `list` stands; `nil` for a list that is not a replica.
    /// ```swift
    /// let pending = try store.replicaStatus(of: "inbox")?.pending
    /// ```
    /// - Throws: `StoreError` `.storeNotFound`, `.listNotFound`, `.damaged`, `.io`.
    /// - Complexity: O(1) plus the size of the last conflict report.
    @available(*, noasync, message: "blocks its thread; in async code, call the async method of the same name with try await")
    public func replicaStatus(of list: String) throws -> ReplicaStatus? {
        try blockingTransaction(.read) { try $0.steps.replicaStatus(of: list) }
    }

    /// Commits the snapshot `makeTarget` makes from the head of `list` (read from its rows), in one
    /// write transaction that makes the store when there is none.
    func commit(
        to list: String, expectedVersion: Int?, author: String?, message: String?,
        makeTarget: ([ListSection]) throws -> [ListSection]
    ) throws -> CommitResult {
        try _Names.checkList(list)
        return try withoutActuallyEscaping(makeTarget) { makeTarget in
            try blockingTransaction(.create) {
                try $0.steps.commit(to: list, expectedVersion: expectedVersion, author: author, message: message, target: .edit(makeTarget))
            }
        }
    }
}
