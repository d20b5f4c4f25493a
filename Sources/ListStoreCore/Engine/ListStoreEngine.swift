import Foundation
import ListDiff

/// The store contract that does not depend on the engine: what a journal server serves and what the
/// contract tests check, on SQLite (`Store`) and on PostgreSQL (`PostgresStore` in
/// ListStorePostgres) alike.
///
/// Every method is async and never blocks the cooperative thread pool; each has the meaning, the
/// results and the errors of `Store`'s method of the same name. Engine-specific work (SQLite's
/// checkpoints and time travel files, PostgreSQL's epochs) stays on the concrete types.
///
/// ```swift
/// func publish(_ sections: [ListSection], on store: any ListStoreEngine) async throws {
///     let result = try await store.commit(sections, to: "inbox", expectedVersion: nil, author: nil, message: nil)
///     let page = try await store.journal(of: "inbox", after: result.parentVersion, limit: 100, maxBytes: .max)
///     print(page.entries.count)
/// }
/// ```
public protocol ListStoreEngine: AnyObject, Sendable {
    /// Where the store is, for messages: a file path, or a database URL without its password.
    var location: String { get }

    /// The store's identity (uuid and epoch).
    /// - Throws: `StoreError` `.storeNotFound`, `.damaged`, `.io`.
    /// - Complexity: O(1).
    func identity() async throws -> StoreIdentity

    /// Bumps the epoch and takes a new client id: what an operator does after restoring the store
    /// from a backup (or failing over to a standby that may have lagged), so that followers resync
    /// and replicas push again what the store lost (see ListStore's article “History and retention”).
    /// - Returns: the new identity.
    /// - Throws: `StoreError` `.storeNotFound`, `.damaged`, `.io`.
    /// - Complexity: O(1).
    @discardableResult
    func advanceEpoch() async throws -> StoreIdentity

    /// Every list with its head version and digest, base version and counts, by name.
    /// - Throws: `StoreError` `.storeNotFound`, `.damaged`, `.io`.
    /// - Complexity: O(lists).
    func lists() async throws -> [ListSummary]

    /// One list's summary.
    /// - Throws: `StoreError` `.listNotFound`, `.storeNotFound`, `.damaged`, `.io`.
    /// - Complexity: O(1).
    func summary(of list: String) async throws -> ListSummary

    /// The snapshot of `list` at `version` (`nil`: the head).
    /// - Throws: `StoreError` `.listNotFound`, `.versionNotFound` (pruned, or after the head),
    ///   `.storeNotFound`, `.damaged`, `.io`.
    /// - Complexity: O(n) for the head's n items; an older version replays the journal from the
    ///   nearest retained snapshot.
    func snapshot(of list: String, at version: Int?) async throws -> ListSnapshot

    /// The journal entries of `list` after `version` (`nil`: from the base), at most `limit` of them
    /// and about `maxBytes` of stages (always at least one entry when there is one).
    /// - Throws: `StoreError` `.listNotFound`, `.versionNotFound`, `.invalidArgument`,
    ///   `.storeNotFound`, `.damaged`, `.io`.
    /// - Complexity: O(k) for k entries returned.
    func journal(of list: String, after version: Int?, limit: Int, maxBytes: Int) async throws -> JournalPage

    /// `journal(of:after:limit:maxBytes:)` for a reader that holds at most `maxEntryBytes` of one
    /// entry: a larger entry is not read, and when it comes first the page names it instead
    /// (`JournalPage.tooLarge`), holding no entry.
    /// - Throws: as `journal(of:after:limit:maxBytes:)`.
    /// - Complexity: as `journal(of:after:limit:maxBytes:)`.
    func journal(of list: String, after version: Int?, limit: Int, maxBytes: Int, maxEntryBytes: Int) async throws -> JournalPage

    /// A page of `list`'s head after `cursor` (`nil`: the first page), of about `maxBytes` of
    /// records (at least one while records remain): what a first sync or a resync copies page by
    /// page (`ListPage`). The pages of one read are at one version, the head's when the first was
    /// read; `version` names it for every page after the first. `Store` and `InMemoryStore` keep
    /// that version for the read while commits land (the state the first page was read in, while
    /// the read goes on within a minute of its last page and ten of its first, at most eight
    /// versions at once); `PostgresStore` keeps none.
    /// - Throws: `StoreError` `.listNotFound`; `.versionNotFound` once `version` is neither the
    ///   head nor kept (the read starts again at the head); `.invalidArgument` for a cursor of
    ///   another read; `.storeNotFound`, `.damaged`, `.io`.
    /// - Complexity: O(records returned), in bounded queries: never the whole list.
    func page(of list: String, at version: Int?, after cursor: ListPage.Cursor?, maxBytes: Int) async throws -> ListPage

    /// The store feed after `position` (`nil`: from the oldest retained): every commit of the lists
    /// `including` accepts, oldest first, at most `limit`, at store-wide positions given in commit
    /// order (ListStoreCore's article "The Store Feed"). With `fingerprint` (the one a cursor at
    /// `position` carries: `FeedPage.fingerprint`), the event at `position` must be the cursor's, or
    /// the cursor is of another history of the store (`.cursorOfAnotherHistory`).
    /// - Throws: `StoreError` `.cursorExpired`, `.cursorOfAnotherHistory`, `.invalidArgument`, `.storeNotFound`, `.damaged`,
    ///   `.io`.
    /// - Complexity: O(events read).
    func feed(
        after position: Int?, fingerprint: Int64?, limit: Int, including: @escaping @Sendable (String) -> Bool
    ) async throws -> FeedPage

    /// The store's secret for sealing feed cursors (32 bytes, made with the store): what a journal
    /// server seals its users' cursors with, so that every server of one store opens them.
    @_spi(FeedCursors) func feedSecret() async throws -> [UInt8]

    /// What the store feed's events after `position` did to their lists' heads (at most `limit`,
    /// oldest first, without their entries), and the feed's last position; `nil`: none, the last
    /// position alone. A position past the last is of the store before a restore.
    /// - Complexity: O(events read).
    @_spi(FeedCursors) func feedMoves(after position: Int?, limit: Int) async throws -> (moves: [FeedMove], last: Int)

    /// Deletes `list` and records its deletion in the store feed; returns the version it had. A
    /// replica list with local changes its source does not hold yet is refused
    /// (`.pendingChanges`, naming how many) unless `discardingPending`.
    /// - Throws: `StoreError` `.listNotFound`, `.pendingChanges`, `.storeNotFound`, `.damaged`, `.io`.
    /// - Complexity: O(rows of the list).
    func deleteList(_ list: String, discardingPending: Bool) async throws -> Int

    /// The snapshots of `list` at `version` and `otherVersion` (`nil`: the head) and the minimal
    /// staged changeset between them.
    /// - Throws: `StoreError` `.listNotFound`, `.versionNotFound`, `.storeNotFound`, `.damaged`, `.io`.
    /// - Complexity: that of two `snapshot` reads and a diff.
    func changeset(of list: String, from version: Int, to otherVersion: Int?) async throws
        -> (from: ListSnapshot, to: ListSnapshot, changeset: ListChangeset)

    /// Records `sections` as the new head of `list`: the diff against the head and its journal entry,
    /// in one transaction (see `Store.commit(_:to:expectedVersion:author:message:)`).
    /// - Throws: `StoreError` `.versionConflict`, `.invalidSnapshot`, `.invalidListName`,
    ///   `.invalidArgument`, `.damaged`, `.io`. Nothing is written when it throws.
    /// - Complexity: O(n + k log k) for n items and k changes, plus the changed rows' writes.
    @discardableResult
    func commit(
        _ sections: [ListSection], to list: String, expectedVersion: Int?, author: String?, message: String?
    ) async throws -> CommitResult

    /// Changes a copy of the head of `list` and commits it atomically: `body` runs while the
    /// store's writers of the list wait (see `Store.edit(_:expectedVersion:author:message:_:)`).
    /// - Throws: what `body` throws (nothing is written), and what `commit` throws.
    /// - Complexity: that of `commit`, plus `body`.
    @discardableResult
    func edit(
        _ list: String, expectedVersion: Int?, author: String?, message: String?,
        _ body: @escaping @Sendable (inout ListDraft<ListItem, ListItem>) throws -> Void
    ) async throws -> CommitResult

    /// Merges a replica's local change into `list`, exactly once per push id (see
    /// `Store.merge(_:into:)`).
    /// - Throws: `StoreError` `.listNotFound`, `.invalidSnapshot`, `.pushOutOfOrder`, `.damaged`, `.io`.
    /// - Complexity: O(n + m) for n items and m intents, plus the commit's diff.
    func merge(_ push: Push, into list: String) async throws -> PushAnswer

    /// `merge(_:into:)`, with the journal recording `author` as the change's author instead of the
    /// push's own: a journal server records the subject of its user's token. The push is recorded,
    /// and known again when the client retries it, as the client sent it.
    /// - Throws: as `merge(_:into:)`.
    /// - Complexity: as `merge(_:into:)`.
    func merge(_ push: Push, into list: String, authoredBy author: String?) async throws -> PushAnswer

    /// The recorded pushes of `client` to `list` with a sequence number in `seqs`, in order, at most
    /// 1,000 (see `Store.pushes(from:to:seqs:)`).
    /// - Throws: `StoreError` `.listNotFound`, `.storeNotFound`, `.damaged`, `.io`.
    /// - Complexity: O(log p + k) for p recorded pushes and k returned.
    func pushes(from client: String, to list: String, seqs: ClosedRange<Int>) async throws -> [PushAnswer]

    /// Registers consumer `name` of `list` at `version` (`nil`: the base).
    /// - Throws: `StoreError` `.invalidArgument`, `.listNotFound`, `.versionNotFound`, `.io`.
    /// - Complexity: O(consumers of the list).
    @discardableResult
    func registerConsumer(_ name: String, of list: String, at version: Int?) async throws -> ConsumerInfo

    /// Records that consumer `name` of `list` has applied `version`.
    /// - Throws: `StoreError` `.invalidArgument`, `.listNotFound`, `.versionNotFound`, `.io`.
    /// - Complexity: O(consumers of the list).
    @discardableResult
    func acknowledge(consumer name: String, of list: String, version: Int) async throws -> ConsumerInfo

    /// Removes consumer `name` of `list`; returns whether it was registered.
    /// - Throws: `StoreError` `.listNotFound`, `.io`.
    /// - Complexity: O(1).
    @discardableResult
    func unregisterConsumer(_ name: String, of list: String) async throws -> Bool

    /// The consumers of `list`, by name.
    /// - Throws: `StoreError` `.listNotFound`, `.storeNotFound`, `.io`.
    /// - Complexity: O(consumers of the list).
    func consumers(of list: String) async throws -> [ConsumerInfo]

    /// Drops the journal entries of `list` before the base `rule` gives, unless a registered
    /// consumer still needs them (or `force`); see `Store.prune(_:_:force:)`.
    /// - Throws: `StoreError` `.invalidArgument`, `.versionNotFound`, `.listNotFound`, `.damaged`, `.io`.
    /// - Complexity: O(n × (new base − old base)) plus the rows removed.
    @discardableResult
    func prune(_ list: String, _ rule: PruneRule, force: Bool) async throws -> PruneResult

    /// Replays every list's journal (or only `list`'s) against the stored digests, counts and head
    /// rows, and reports what diverges (see `Store.verify(list:progress:)`).
    /// - Throws: `StoreError` `.listNotFound` (for `list`), `.storeNotFound`, `.io`.
    /// - Complexity: O(v × n) for v journal entries over lists of n items.
    func verify(list: String?, progress: (@Sendable (VerificationProgress) -> Void)?) async throws -> VerificationReport

    /// A number that grows when the store learns of a commit: one of this process at once, one of
    /// another process when the engine is told of it (PostgreSQL's `NOTIFY`). Pass it to
    /// `waitForCommit(after:timeout:)`. Learning is a hint only: readers still read the heads, and
    /// poll for what no one told them.
    /// - Complexity: O(1).
    func commitGeneration() -> UInt64

    /// Returns when `commitGeneration()` has passed `generation`, after `timeout`, or when the task
    /// is cancelled, whichever comes first.
    ///
    /// ```swift
    /// let seen = store.commitGeneration()
    /// let lists = try await store.lists()        // act on what is there
    /// await store.waitForCommit(after: seen, timeout: .seconds(1))
    /// ```
    func waitForCommit(after generation: UInt64, timeout: Duration) async

    /// The bytes the store takes where it is kept: the SQLite file with its write-ahead log, or the
    /// PostgreSQL database's size. For monitoring (`JournalServer`'s `GET /metrics`).
    ///
    /// ```swift
    /// print(try await store.sizeInBytes())    // e.g. 1843200
    /// ```
    /// - Throws: `StoreError` `.io` when the size cannot be read.
    /// - Complexity: O(1): a `stat` per file, or one round trip.
    func sizeInBytes() async throws -> Int

    // MARK: Attachments

    /// What the store holds of blob `hash` for `list`: `nil` when the list neither has it nor
    /// uploads it (see ListStoreCore's article "Attachments").
    /// - Throws: `StoreError` `.listNotFound`, `.storeNotFound`, `.damaged`, `.io`.
    /// - Complexity: O(1).
    func blob(_ hash: ContentHash, of list: String) async throws -> BlobStatus?

    /// Uploads the bytes of the blob `reference` names to `list`, from byte `offset` on (`bytes`
    /// holds them, in pieces of any size): the list then has the blob, and its contents may refer to
    /// it. Bytes are written a part (1 MiB) at a time, each part in a transaction of its own, so an
    /// upload holds one part in memory and an interrupted one resumes: call again with an `offset`
    /// up to ``BlobStatus/uploaded`` (the bytes before that are passed over). The
    /// store keeps one copy of equal bytes; a list that uploads bytes another list has still sends
    /// them all (knowing a hash proves nothing), and the store checks them without writing them
    /// again. Uploading a blob the list has already returns at once. Bytes that end before the
    /// blob's last byte upload it in parts: the whole parts among them stay (the returned status is
    /// not ``BlobStatus/isStored``, and its ``BlobStatus/uploaded`` is where the next part starts),
    /// so a client that sends a blob in pieces of a multiple of 1 MiB loses none of them.
    ///
    /// ```swift
    /// let photo = BlobReference(of: jpeg, type: "image/jpeg")
    /// let pieces = AsyncStream<[UInt8]> { … }   // the file's bytes, as they are read
    /// try await store.storeBlob(photo, to: "inbox", from: pieces, startingAt: 0)
    /// ```
    /// - Returns: the blob's status for the list (``BlobStatus/isStored``).
    /// - Throws: `StoreError` `.listNotFound`; `.invalidArgument` when the bytes are not the
    ///   reference's (their hash, more of them than its size, a part that differs from the one the
    ///   store has: nothing of them is kept), when the
    ///   store holds the blob whole with another size, or `offset` is past what the list's upload
    ///   sent; `.storageFull` when the disk has no room (a SQLite store writes no part that would
    ///   leave less room than it keeps for other writes, 16 MiB by default): the list's upload is
    ///   given up, and its parts go unless another list has the blob or uploads it; `.uploadGivenUp`
    ///   when another upload of the blob to the list failed meanwhile and gave up the one this call
    ///   went on with (nothing of this call was written: ask where the upload stands and send it
    ///   again from there); `.damaged`, `.io`; what `bytes` throws (the upload resumes after the
    ///   parts written).
    /// - Complexity: O(size): the bytes are hashed as they come, and a resumed upload reads back
    ///   the bytes its upload sent before.
    @discardableResult
    func storeBlob<Bytes: AsyncSequence>(_ reference: BlobReference, to list: String, from bytes: Bytes, startingAt offset: Int) async throws
        -> BlobStatus where Bytes.Element == [UInt8]

    /// At most `maxBytes` (and 16 MiB) of the bytes of blob `hash` of `list`, from byte `offset`
    /// (fewer only at its end).
    /// - Throws: `StoreError` `.listNotFound`; `.missingBlob` when the list does not have the blob
    ///   or the store does not hold its bytes (a replica's blob whose bytes are at its source);
    ///   `.invalidArgument` for an offset past the end; `.damaged`, `.io`.
    /// - Complexity: O(maxBytes), a transaction per call.
    func readBlob(_ hash: ContentHash, of list: String, from offset: Int, maxBytes: Int) async throws -> [UInt8]
}

extension ListStoreEngine {
    /// Deletes `list` as `deleteList(_:discardingPending:)` does, refusing a replica list with local
    /// changes its source does not hold yet (`.pendingChanges`).
    ///
    /// ```swift
    /// let last = try await store.deleteList("users/ana/old")   // the version it had
    /// ```
    /// - Throws: `StoreError` `.listNotFound`, `.pendingChanges`, `.storeNotFound`, `.damaged`, `.io`.
    /// - Complexity: O(rows of the list).
    @discardableResult
    public func deleteList(_ list: String) async throws -> Int {
        try await deleteList(list, discardingPending: false)
    }
}
