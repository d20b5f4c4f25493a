import ListDiff
import ListStore

/// Where a consumer reads a list from: a store in this process (`LocalSource`), or another machine
/// (`HTTPSource`). Every method is one request, but `commits(of:after:pageSize:wait:)`, which is a
/// follow.
public protocol ListSource: Sendable {
    /// The source store's identity.
    func identity() async throws -> StoreIdentity
    /// A list's head version, digest and oldest retained version.
    func summary(of list: String) async throws -> ListSummary
    /// Journal entries of `list` after `version`, at most `limit`, with what the source tells of the
    /// list and itself as it read them (`JournalPage.listID`, `head`, `store`: a replica up to date
    /// pulls with this one call).
    /// - Throws: `StoreError.versionNotFound` for a version outside the retained history.
    func journal(of list: String, after version: Int, limit: Int) async throws -> JournalPage
    /// A version of `list` (default: the head).
    func snapshot(of list: String, at version: Int?) async throws -> ListSnapshot
    /// A page of `list`'s head after `cursor` (`nil`: the first), of about `maxBytes` of records:
    /// what a first sync or a resync copies page by page (`ListPage`; `version`, the first page's,
    /// for every page after it). The default cuts the page out of `snapshot(of:at:)`, reading the
    /// whole list for each page: a source of large lists gives pages of its own, as `LocalSource`
    /// and `HTTPSource` do.
    /// - Throws: `StoreError.versionNotFound` once the head has moved past `version`.
    func page(of list: String, at version: Int?, after cursor: ListPage.Cursor?, maxBytes: Int) async throws -> ListPage
    /// One minimal changeset from `version` to the head, with the head; `state` is the list at
    /// `version` (a network source sends only the stages, and rebuilds the head from them).
    func catchUp(of list: String, from version: Int, applyingTo state: [ListSection]) async throws
        -> (changeset: ListChangeset, head: ListSnapshot)
    /// Returns when `list`'s head is newer than `version` (`true`), or after `timeout` (`false`).
    /// - Throws: what reading the list's head throws (`StoreError.listNotFound`, the source's
    ///   errors).
    func waitForCommit(to list: String, after version: Int, timeout: Duration) async throws -> Bool
    /// The journal entries of `list` after `version` as they land: the backlog, then each commit, in
    /// order, until the task iterating them is cancelled (the stream then ends without an error) or
    /// the source fails (it ends with the error). The default reads pages of `pageSize` entries and
    /// waits for commits up to `wait` at a time (`waitForCommit`); `HTTPSource` reads the server's
    /// event stream.
    ///
    /// ```swift
    /// for try await entry in source.commits(of: "inbox", after: 41, pageSize: 100, wait: .seconds(30)) { print(entry.version) }
    /// ```
    /// - Throws: (ending the stream) `StoreError.versionNotFound` for a version outside the retained
    ///   history, and the source's errors.
    func commits(of list: String, after version: Int, pageSize: Int, wait: Duration) -> AsyncThrowingStream<JournalEntry, any Error>
    /// Records that consumer `name` has applied `version`, registering it if needed (see
    /// `Store.registerConsumer` and `Store.acknowledge`).
    func acknowledge(consumer name: String, of list: String, version: Int) async throws
    /// Merges a replica's local change into `list` (see `Store.merge(_:into:)`): the source rebases
    /// the intents onto its head and records the push's id; a push it recorded before is answered
    /// from the record and applies nothing.
    func push(_ push: Push, to list: String) async throws -> PushAnswer
    /// The pushes of `client` with a sequence number in `seqs` that `list` recorded, in order (at
    /// most 1,000; see `Store.pushes(from:to:seqs:)`).
    func pushes(from client: String, to list: String, seqs: ClosedRange<Int>) async throws -> [PushAnswer]
    /// The store `list` is itself a replica of, `nil` when it is not one (or the source cannot
    /// tell: the default). A replica refuses to follow a list that is a replica of its own store.
    func upstreamStore(of list: String) async throws -> StoreIdentity?

    /// Where `list` stands with blob `hash`: whether it has its bytes, and how many an upload of
    /// them sent (`nil`: it neither has the blob nor uploads it; see `ListStoreEngine.blob(_:of:)`).
    func blob(_ hash: ContentHash, of list: String) async throws -> BlobStatus?
    /// At most `maxBytes` (and 16 MiB) of the bytes of blob `hash` of `list`, from byte `offset`
    /// (see `ListStoreEngine.readBlob(_:of:from:maxBytes:)`).
    /// - Throws: `StoreError.missingBlob` when the list does not have the blob's bytes.
    func readBlob(_ hash: ContentHash, of list: String, from offset: Int, maxBytes: Int) async throws -> [UInt8]
    /// Uploads the bytes of the blob `reference` names to `list`, from byte `offset` on (see
    /// `ListStoreEngine.storeBlob(_:to:from:startingAt:)`): the list then has the blob, unless the
    /// bytes end before its last (the returned status tells where the upload resumes).
    @discardableResult
    func storeBlob<Bytes: AsyncSequence>(_ reference: BlobReference, to list: String, from bytes: Bytes, startingAt offset: Int) async throws
        -> BlobStatus where Bytes.Element == [UInt8]
}

extension ListSource {
    public func upstreamStore(of list: String) async throws -> StoreIdentity? { nil }

    /// The default: a source without blobs (its lists have none).
    public func blob(_ hash: ContentHash, of list: String) async throws -> BlobStatus? { nil }

    /// The default: a source without blobs.
    /// - Throws: `StoreError.missingBlob`.
    public func readBlob(_ hash: ContentHash, of list: String, from offset: Int, maxBytes: Int) async throws -> [UInt8] {
        throw StoreError(.missingBlob, "list '\(list)' of this source has no blob \(BlobReference.id(of: hash)): the source keeps no blobs")
    }

    /// The default: a source that takes no blobs.
    /// - Throws: `StoreError.invalidArgument`.
    @discardableResult
    public func storeBlob<Bytes: AsyncSequence>(_ reference: BlobReference, to list: String, from bytes: Bytes, startingAt offset: Int) async throws
        -> BlobStatus where Bytes.Element == [UInt8]
    {
        throw StoreError(.invalidArgument, "this source keeps no blobs: blob \(reference.id) cannot be uploaded to list '\(list)'")
    }

    public func page(of list: String, at version: Int?, after cursor: ListPage.Cursor?, maxBytes: Int) async throws -> ListPage {
        let snapshot = try await self.snapshot(of: list, at: nil)
        if let version, version != snapshot.version {
            throw StoreError(.versionNotFound, "list '\(list)' is at version \(snapshot.version), no longer at \(version)")
        }
        let summary = try await self.summary(of: list)
        let records = snapshot.sections.flatMap { section in
            [ListPage.Record(isSection: true, item: section.model)] + section.elements.map { ListPage.Record(isSection: false, item: $0) }
        }
        let start = try cursor.map { cursor in
            guard let start = Int(cursor.description), (0...records.count).contains(start) else {
                throw StoreError(.invalidArgument, "'\(cursor)' is not the cursor of a page")
            }
            return start
        } ?? 0
        var (end, bytes) = (start, 0)
        while end < records.count, end == start || bytes + records[end].size <= maxBytes {
            bytes += records[end].size
            end += 1
        }
        return ListPage(
            list: list, version: snapshot.version, digest: snapshot.digest, listID: summary.id, store: try await identity(),
            sectionCount: snapshot.sections.count, elementCount: records.count - snapshot.sections.count,
            after: cursor, records: Array(records[start..<end]), next: end < records.count ? ListPage.Cursor(String(end)) : nil)
    }

    public func commits(of list: String, after version: Int, pageSize: Int, wait: Duration)
        -> AsyncThrowingStream<JournalEntry, any Error>
    {
        pollingCommits(of: list, after: version, pageSize: pageSize, wait: wait)
    }

    /// `commits(of:after:pageSize:wait:)` by reading journal pages and waiting for commits, on
    /// demand: a page is read when the last one is used up.
    func pollingCommits(of list: String, after version: Int, pageSize: Int, wait: Duration)
        -> AsyncThrowingStream<JournalEntry, any Error>
    {
        let pager = _JournalPager(self, list: list, after: version, pageSize: pageSize, wait: wait)
        return AsyncThrowingStream(unfolding: { try await pager.next(waitingAtHead: true) })
    }

    /// A cursor at `list`'s head now: following from it yields the commits that land from now on.
    public func cursor(of list: String) async throws -> Cursor {
        let identity = try await identity()
        return Cursor(store: identity, list: list, version: try await summary(of: list).version)
    }

    /// A cursor before `list`'s first version: following from it yields the whole history (if none
    /// was pruned).
    public func origin(of list: String) async throws -> Cursor {
        Cursor(store: try await identity(), list: list, version: 0)
    }

    /// Checks that `cursor` can be followed in this source; returns why not. With `digest` (what the
    /// follower holds at the cursor's version), a source whose head is that version must have that
    /// digest too: a source restored from a backup (or failed over to a standby that lagged) may be
    /// at the same version with other content.
    func resyncReason(for cursor: Cursor, identity: StoreIdentity, digest: ListDigest? = nil) async throws -> (ResyncReason, String)? {
        if cursor.store.uuid != identity.uuid {
            return (.differentStore, "the cursor is of store \(cursor.store.uuid), the source is \(identity.uuid)")
        }
        if cursor.store.epoch != identity.epoch {
            return (.epochChanged, "the cursor is of epoch \(cursor.store.epoch), the source is at epoch \(identity.epoch)")
        }
        let summary = try await summary(of: cursor.list)
        if cursor.version < summary.baseVersion {
            return (.pruned, "version \(cursor.version) of '\(cursor.list)' was pruned (history starts at \(summary.baseVersion))")
        }
        if cursor.version > summary.version {
            return (.aheadOfSource, "version \(cursor.version) of '\(cursor.list)' is newer than the head (\(summary.version))")
        }
        if let digest, cursor.version == summary.version, digest != summary.digest {
            return (
                .digestMismatch,
                "version \(cursor.version) of '\(cursor.list)' has digest \(summary.digest.hex) at the source, not \(digest.hex): the source's history changed (restored from a backup?)"
            )
        }
        return nil
    }
}

/// A store this process opened as a source (a SQLite `Store`, or a `PostgresStore`): reads go to
/// the store, and waiting for a commit wakes at once for commits the store learns of (this
/// process's; on PostgreSQL other processes' too, through `NOTIFY`; on a SQLite file on Linux other
/// processes' too, through inotify) and within `pollInterval` for the others.
///
/// ```swift
/// let source = LocalSource(try Store(path: "mail.liststore"))
/// for try await change in source.changes(after: try await source.cursor(of: "inbox")) { … }
/// ```
public struct LocalSource: ListSource {
    /// The store.
    public let store: any ListStoreEngine
    /// How often another process's commits are looked for while waiting.
    public var pollInterval: Duration

    /// A source reading `store`.
    public init(_ store: any ListStoreEngine, pollInterval: Duration = .milliseconds(20)) {
        self.store = store
        self.pollInterval = pollInterval
    }

    public func identity() async throws -> StoreIdentity { try await store.identity() }

    public func summary(of list: String) async throws -> ListSummary { try await store.summary(of: list) }

    public func journal(of list: String, after version: Int, limit: Int) async throws -> JournalPage {
        try await store.journal(of: list, after: version, limit: limit, maxBytes: .max)
    }

    public func snapshot(of list: String, at version: Int?) async throws -> ListSnapshot {
        try await store.snapshot(of: list, at: version)
    }

    public func page(of list: String, at version: Int?, after cursor: ListPage.Cursor?, maxBytes: Int) async throws -> ListPage {
        try await store.page(of: list, at: version, after: cursor, maxBytes: maxBytes)
    }

    public func catchUp(of list: String, from version: Int, applyingTo state: [ListSection]) async throws
        -> (changeset: ListChangeset, head: ListSnapshot)
    {
        let (_, head, changeset) = try await store.changeset(of: list, from: version, to: nil)
        return (changeset, head)
    }

    public func waitForCommit(to list: String, after version: Int, timeout: Duration) async throws -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while true {
            let generation = store.commitGeneration()
            if try await store.summary(of: list).version > version { return true }
            let now = clock.now
            if now >= deadline || Task.isCancelled { return false }
            await store.waitForCommit(after: generation, timeout: min(pollInterval, deadline - now))
        }
    }

    public func acknowledge(consumer name: String, of list: String, version: Int) async throws {
        try await store.registerConsumer(name, of: list, at: version)
    }

    public func push(_ push: Push, to list: String) async throws -> PushAnswer {
        try await store.merge(push, into: list)
    }

    public func pushes(from client: String, to list: String, seqs: ClosedRange<Int>) async throws -> [PushAnswer] {
        try await store.pushes(from: client, to: list, seqs: seqs)
    }

    public func blob(_ hash: ContentHash, of list: String) async throws -> BlobStatus? { try await store.blob(hash, of: list) }

    public func readBlob(_ hash: ContentHash, of list: String, from offset: Int, maxBytes: Int) async throws -> [UInt8] {
        try await store.readBlob(hash, of: list, from: offset, maxBytes: maxBytes)
    }

    @discardableResult
    public func storeBlob<Bytes: AsyncSequence>(_ reference: BlobReference, to list: String, from bytes: Bytes, startingAt offset: Int) async throws
        -> BlobStatus where Bytes.Element == [UInt8]
    {
        try await store.storeBlob(reference, to: list, from: bytes, startingAt: offset)
    }

    public func upstreamStore(of list: String) async throws -> StoreIdentity? {
        try await (store as? any ReplicaStore)?.replicaSource(of: list)?.store
    }
}
