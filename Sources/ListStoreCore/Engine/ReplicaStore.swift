import ListMerge

/// A store that can hold replica lists: lists that follow a list of another store, take local
/// changes into an outbox, and push them (ListMerge's article "Offline Writes and Conflicts").
/// `Store` (SQLite) and `PostgresStore` (ListStorePostgres) are replica stores; ListSync's
/// `Replica` works on either.
///
/// The public requirements read a replica list's state. The requirements of the `Replication`
/// system programming interface (`@_spi(Replication) import ListStore`) are the reads and writes of
/// ListSync's replicas: they are implemented by this package's engines and called through
/// `Replica`, not by apps; a type outside the package is not meant to conform. Every method is async
/// and never blocks the cooperative thread pool.
///
/// ```swift
/// func pending(in store: some ReplicaStore) async throws -> Int {
///     try await store.replicaStatus(of: "inbox")?.pending ?? 0
/// }
/// ```
public protocol ReplicaStore: ListStoreEngine {
    /// Which source `list` replicates, and up to which version; `nil` for a list that is not a
    /// replica (or does not exist).
    /// - Throws: `StoreError` `.storeNotFound`, `.io`.
    /// - Complexity: O(1).
    func replicaSource(of list: String) async throws -> ReplicaSource?

    /// The id this store pushes its local changes under.
    /// - Throws: `StoreError` `.storeNotFound`, `.damaged`, `.io`.
    /// - Complexity: O(1).
    func clientID() async throws -> String

    /// The local changes of the replica list `list` that its confirmed state does not hold yet,
    /// oldest first (empty for a list that is not a replica).
    /// - Throws: `StoreError` `.storeNotFound`, `.listNotFound`, `.damaged`, `.io`.
    /// - Complexity: O(size of the outbox).
    func outbox(of list: String) async throws -> [OutboxEntry]

    /// Where the replica list `list` stands; `nil` for a list that is not a replica.
    /// - Throws: `StoreError` `.storeNotFound`, `.listNotFound`, `.damaged`, `.io`.
    /// - Complexity: O(1) plus the size of the last conflict report.
    func replicaStatus(of list: String) async throws -> ReplicaStatus?

    /// Where the replica set `pattern` stands (ListSync's `ReplicaSet`); `nil` when the store
    /// follows no such set.
    /// - Throws: `StoreError` `.storeNotFound`, `.damaged`, `.io`.
    /// - Complexity: O(1) plus the size of the set's last conflict report.
    func replicaSetPosition(of pattern: String) async throws -> ReplicaSetPosition?

    /// A list's head version and digest, whether it holds any section or local change, and its
    /// replica position, read at one instant; `nil` when the store or the list does not exist.
    @_spi(Replication) func replicaHead(of list: String) async throws -> ReplicaHead?

    /// The replica list's position, head version, confirmed state and outbox, read at one instant;
    /// `nil` when `list` is not a replica (or does not exist).
    @_spi(Replication) func pendingState(of list: String) async throws -> PendingState?

    /// Commits `sections` as the head of the replica list `list` and records `source` as its
    /// position, in one transaction; `check` runs inside it first (with the result) and may throw
    /// to roll everything back. The list row is created if needed, even when nothing changes.
    /// Refused (`.versionConflict`) while the list has local changes.
    @_spi(Replication) func commitReplica(
        _ sections: [ListSection], to list: String, source: ReplicaSource, author: String?, message: String?,
        check: @escaping @Sendable (CommitResult) throws -> Void
    ) async throws -> CommitResult

    /// Applies the stages of the source's journal entry `entry` to the head of the replica list
    /// `list` and records `source` as its position, in one transaction, keeping the entry's stages,
    /// author, message, push id and conflicts. Refused (`.versionConflict`) while the list has local
    /// changes or when its position is not the entry's parent; `.invalidEdit` when the stages do not
    /// apply to the head. `next`, the entry a pull applies after this one when it has it, is
    /// replayed on the new head while this transaction is flushed, for its own commit to take.
    @_spi(Replication) func commitReplica(
        _ entry: JournalEntry, to list: String, source: ReplicaSource, next: JournalEntry?,
        check: @escaping @Sendable (CommitResult) throws -> Void
    ) async throws -> CommitResult

    /// Applies the source's journal entry to the replica list `list` as
    /// `commitReplica(_:to:source:check:)` does, and moves the replica set `pattern` to `position`
    /// of the `feed` store's feed (`place`: the cursor's place, as the source wrote it), in one
    /// transaction.
    @_spi(Replication) func commitReplica(
        _ entry: JournalEntry, to list: String, source: ReplicaSource, set pattern: String, feed: StoreIdentity, position: Int,
        place: String, check: @escaping @Sendable (CommitResult) throws -> Void
    ) async throws -> CommitResult

    /// Moves the replica set `pattern` to `position` of the `feed` store's feed (`place`: the
    /// cursor's place, as the source wrote it).
    @_spi(Replication) func moveReplicaSet(_ pattern: String, feed: StoreIdentity, to position: Int, place: String) async throws

    /// Removes the replica list `list` (deleted at its source `source`; nothing when the store does
    /// not hold it as a replica of that list of that store) and moves the replica set `pattern` to
    /// `position`, in one transaction; returns each of the list's local changes as a `listDeleted`
    /// conflict, which the set's position keeps.
    @_spi(Replication) func dropReplicaList(
        _ list: String, of source: StoreIdentity, listID: String?, set pattern: String, feed: StoreIdentity, position: Int, place: String
    ) async throws -> [Conflict]

    /// Reports the local changes of the replica list `list`, whose source list no longer exists, as
    /// `listDeleted` conflicts (returned, and kept as its last conflicts) and takes them out of its
    /// outbox, in one transaction; the list keeps what it holds.
    @_spi(Replication) func reportChangesToDeletedSource(of list: String) async throws -> [Conflict]

    /// Records `id` as the identity of the source list the replica list `list` follows
    /// (`ReplicaSource.listID`): learnt by a pull, or taken on with `ReplicaPullOptions.replacing`.
    @_spi(Replication) func setSourceListID(_ id: String, of list: String) async throws

    /// Replaces the replica list `list`, whose source list was deleted and whose name a new list
    /// took, by a replica of the new list, in one transaction: each of its local changes becomes a
    /// `listDeleted` conflict with its content (returned, and kept as the list's last conflicts),
    /// the list is deleted with its history (the store feed tells its followers), and `sections`
    /// become version 1 of a new list at `source`. `check` runs with the new list's commit and may
    /// throw to roll everything back. `nil`, changing nothing, when the replica no longer follows
    /// the list of identity `previous` (another pull replaced it meanwhile).
    @_spi(Replication) func replaceReplicaList(
        _ list: String, following previous: String, with sections: [ListSection], source: ReplicaSource, message: String,
        check: @escaping @Sendable (CommitResult) throws -> Void
    ) async throws -> [Conflict]?

    /// Commits a pull of a replica list with local changes, in one transaction: `merged` becomes the
    /// head unless the head moved past `expectedVersion` (`.versionConflict`), `position` the
    /// confirmed source version; the outbox loses the entries `confirmedSeqs` and the others get the
    /// source version their push was recorded as; the confirmed state is kept while entries remain;
    /// non-empty `conflicts` become the last push's conflicts. Refused (`.versionConflict`) when the
    /// list's position is no longer `previous`, the one the pull started from: another pull committed
    /// meanwhile (perhaps without changing the head, which `expectedVersion` alone would not see).
    @_spi(Replication) func commitPull(
        _ merged: [ListSection], to list: String, expectedVersion: Int, position: ReplicaSource, previous: ReplicaSource,
        confirmed: [ListSection], confirmedSeqs: [Int], remaining: [(seq: Int, pushedVersion: Int?)],
        conflicts: [Conflict], message: String, check: @escaping @Sendable (CommitResult) throws -> Void
    ) async throws -> CommitResult

    /// Records that the outbox entry `answer.seq` of `list`, pushed under `client`, was pushed and
    /// how the source answered (nothing when the entry moved to another client id meanwhile).
    @_spi(Replication) func recordPushed(_ answer: PushAnswer, client: String, of list: String) async throws

    /// Moves the unanswered entries of `list` from `id.seq` on still under `id.client` to
    /// `PushRule.clientID(replacing:)`, because the source recorded `id` for another change, in one
    /// transaction; the store's later local changes get a new random id when its id was
    /// `id.client`. Returns the id the entries moved to.
    @_spi(Replication) func takeNewClientID(for list: String, replacing id: PushID) async throws -> String

    /// The paged sync under way of the replica list `list` (`StagedSync`), if any.
    @_spi(Replication) func stagedSync(of list: String) async throws -> StagedSync?

    /// Lands `page` in the paged sync of `list`, in one transaction: a first page starts it anew
    /// (recording `reason`), any other must follow the last page landed, of the same store, list and
    /// version; refused (`.invalidArgument`), with nothing written, otherwise.
    @_spi(Replication) func stage(_ page: ListPage, of list: String, reason: String) async throws -> StagedSync

    /// Makes the complete paged sync of `list` its head and position, and ends the sync, in one
    /// transaction (as `commitReplica(_:to:source:author:message:check:)` with the staged list).
    @_spi(Replication) func commitStagedSync(
        of list: String, message: String, check: @escaping @Sendable (CommitResult) throws -> Void
    ) async throws -> CommitResult

    /// The sections the paged sync of `list` holds so far (at most its first `limit` records).
    @_spi(Replication) func stagedSections(of list: String, limit: Int) async throws -> [ListSection]

    /// Ends the paged sync of `list`, if any, discarding its pages.
    @_spi(Replication) func dropStagedSync(of list: String) async throws

    /// Marks blob `hash` as the one `list` used last (a replica showed it), so that
    /// `trimBlobs(of:toBytes:)` drops it after every other.
    @_spi(Replication) func touchBlob(_ hash: ContentHash, of list: String) async throws

    /// Drops the bytes of the blobs replica list `list` holds, the ones used longest ago first,
    /// until it holds at most `budget` bytes, passing over those its changes not pushed yet refer to.
    @_spi(Replication) func trimBlobs(of list: String, toBytes budget: Int) async throws -> BlobCacheTrim

    /// A number that changes with every commit to this store that this process makes.
    @_spi(Replication) func localCommitGeneration() -> UInt64

    /// Returns at this process's next commit to this store after `generation`, at once when
    /// the generation is not `generation` any more, or after `timeout`.
    @_spi(Replication) func waitForLocalCommit(unlessGenerationIsNot generation: UInt64, timeout: Duration) async
}

extension ReplicaStore {
    /// The sections the paged sync of `list` holds so far, all of them.
    @_spi(Replication) public func stagedSections(of list: String) async throws -> [ListSection] {
        try await stagedSections(of: list, limit: .max)
    }

    /// Applies the source's journal entry `entry` as `commitReplica(_:to:source:next:check:)` does,
    /// with no next entry.
    @_spi(Replication) public func commitReplica(
        _ entry: JournalEntry, to list: String, source: ReplicaSource, check: @escaping @Sendable (CommitResult) throws -> Void
    ) async throws -> CommitResult {
        try await commitReplica(entry, to: list, source: source, next: nil, check: check)
    }
}
