import ListJSON
import ListMerge

/// One write transaction of a store engine, seen as the row reads and writes that the store's
/// logic is made of. The logic itself (what a commit writes and records, the outbox of a replica
/// list, the exactly-once merge of a push) is written once, in this module's extensions of this
/// protocol; an engine is a driver that runs these steps in its own transaction: SQLite in
/// place, on the thread that holds GRDB's writer; PostgreSQL on a thread of NIO's pool, waiting
/// for each round trip.
///
/// Every step runs inside the transaction the engine opened, after `lockedHead(of:)` locked the
/// list: what a step writes is kept only when the whole transaction commits. A step throws
/// `StoreError` (`.damaged` when the rows are not as the logic left them).
///
/// Not API: package-visible for the engines.
package protocol StoreTransaction {
    /// Where the store is, for messages.
    var location: String { get }

    /// Whether committing the transaction waits for the disk or the network (SQLite's flush,
    /// PostgreSQL's answer), so that work started just before runs meanwhile. The in-memory store's
    /// does not, and it runs its transactions on Swift's cooperative pool, where nothing may wait for
    /// work on another thread: a replica's next entry is replayed ahead only when this is true.
    var waitsToCommit: Bool { get }

    // MARK: The store

    /// The store's identity.
    /// - Throws: `StoreError.damaged` without an identity row.
    func identity() throws -> StoreIdentity

    /// Bumps the store's epoch and sets its client id.
    func advanceEpoch(clientID: String) throws

    /// What the engine's own integrity check finds (none: no problem, or no such check).
    /// - Throws: `CancellationError` only (a check that fails otherwise is a problem found).
    func integrityProblems() throws -> [String]

    /// The names of the store's lists, in byte order.
    func listNames() throws -> [String]

    /// The summaries of the store's lists (or only of `list`), by name in byte order.
    func summaries(of list: String?) throws -> [ListSummary]

    // MARK: Lists

    /// The row of `list`; with `locking`, locked for the rest of the transaction (the writers of a
    /// list take turns on it).
    /// - Throws: `StoreError` `.listNotFound`.
    func listRow(_ list: String, locking: Bool) throws -> ListRow

    /// The sections of the head of the list `listID`, contents and all, read from its rows as this
    /// transaction sees them.
    func headSections(listID: Int64) throws -> [ListSection]

    /// The newest stored snapshot of the list with a version in `after+1 ... through`: its version
    /// and document.
    func storedSnapshot(
        listID: Int64, after: Int, through: Int
    ) throws -> (
        version: Int, document: [UInt8]
    )?

    /// The version, digest and stages of the journal entries `from ... through`, oldest first.
    func journalStages(
        listID: Int64, from: Int, through: Int
    ) throws -> [(
        version: Int, digest: ListDigest, stages: [UInt8]
    )]

    /// The sizes in bytes of the stages of the journal entries `after+1 ... through`, oldest first,
    /// at most `limit`.
    func journalSizes(listID: Int64, after: Int, through: Int, limit: Int) throws -> [Int]

    /// The journal entries of the list `info` names with a version in `after+1 ... through`, oldest
    /// first, at most `limit`.
    func entries(of info: ListRow, after: Int, through: Int, limit: Int) throws -> [JournalEntry]

    /// The versions of the list's stored snapshots, oldest first.
    func storedSnapshotVersions(listID: Int64) throws -> [Int]

    /// The head of the list `info` names (ids, content hashes and positions), read from its rows
    /// (no kept head is trusted).
    func head(of info: ListRow) throws -> StoredHead

    /// The store's client id (the id its local changes are pushed under).
    func clientID() throws -> String

    // MARK: Commits

    /// Locks the row of `list` (and, for a list without one, its name, so that two first commits
    /// take turns) and returns its head; `.empty` for a list that has no version.
    func lockedHead(of list: String) throws -> StoredHead

    /// Deletes the rows of sections that leave and inserts the element rows of sections that come
    /// whole, under section row ids it reserves (their section rows come with `write(_:listID:)`);
    /// reserves none when `whole.failure` is set.
    /// - Returns: the reserved row ids, one per `whole.insertedSections`, and the rows written.
    func write(_ whole: CommitRows.WholeSections) throws -> (reservedRows: [Int64], written: Int)

    /// The contents of the element rows at `slots` and of the section rows `sections` (those there).
    func contents(ofElements slots: [CommitRows.Slot], sections: [Int64]) throws
        -> (elements: [CommitRows.Slot: [UInt8]], sections: [Int64: [UInt8]])

    /// Inserts the row of a new list (version 0) and returns its id. `keepsDeletedSections`: whether
    /// every section it will ever have deleted is recorded (`insertDeletedSections`); not for a
    /// replica list, whose history starts at its source's version, after deletions it never saw.
    func insertList(_ name: String, createdAt: String, keepsDeletedSections: Bool) throws -> Int64

    /// Writes the rest of a commit's rows: element deletes, section rows, element rows (inserted,
    /// updated, moved). Returns the rows written, a move counted once.
    func write(_ rows: CommitRows, listID: Int64) throws -> Int

    /// Sets the list's head and adds `journalBytes` to the bytes journaled since its newest stored
    /// snapshot; returns that snapshot's version and the new byte count.
    func setHead(
        listID: Int64, version: Int, digest: ListDigest, journalBytes: Int
    ) throws -> (snapshotVersion: Int, bytesSinceSnapshot: Int)

    /// Stores `document` (the snapshot document of the head just written, at `version`) as the
    /// list's newest stored snapshot.
    func insertStoredSnapshot(document: [UInt8], version: Int, listID: Int64) throws

    /// Whether the engine writes a journal entry or a stored snapshot in pieces without gathering
    /// them (`insertJournal(_:listID:digest:stagesCount:stages:)`,
    /// `insertStoredSnapshot(version:listID:count:document:)`); the default is `false`.
    var writesInPieces: Bool { get }

    /// Stores a snapshot document of `count` bytes, which `document` writes in pieces, in order,
    /// through the closure it is given, as `insertStoredSnapshot(document:version:listID:)` does.
    /// An engine that cannot write a value in pieces gathers them (the default).
    /// - Throws: `.damaged` when the pieces do not make `count` bytes; what `document` throws.
    func insertStoredSnapshot(
        version: Int, listID: Int64, count: Int, document: (_ write: ([UInt8]) throws -> Void) throws -> Void) throws

    /// Appends the journal entry of a commit.
    func insertJournal(
        _ journal: CommitRows.Journal, listID: Int64, stagesJSON: [UInt8], digest: ListDigest) throws

    /// Appends the journal entry of a commit whose stages, `stagesCount` bytes, are too many to
    /// hold at once: `stages` writes them in pieces, in order, through the closure it is given
    /// (`journal.stagesJSON` is not used). An engine that cannot write a value in pieces gathers
    /// them (the default).
    /// - Throws: `.damaged` when the pieces do not make `stagesCount` bytes; what `stages` throws.
    func insertJournal(
        _ journal: CommitRows.Journal, listID: Int64, digest: ListDigest, stagesCount: Int,
        stages: (_ write: ([UInt8]) throws -> Void) throws -> Void) throws

    /// Takes `head` as the new head of `list` once this transaction commits (an engine keeps it, so
    /// that the next commit need not read the list's rows), and tells the engine's other processes
    /// of the change then; `nil` for a change that leaves the head as it is (a prune).
    func announce(_ head: StoredHead?, of list: String) throws

    // MARK: Outbox

    /// Takes the next sequence number of the replica list's outbox; `nil` when the list is not a
    /// replica. Also tells whether its confirmed state is kept (it is once a local change waits)
    /// and the source version and digest the list is at.
    func takeOutboxSeq(
        listID: Int64
    ) throws -> (
        seq: Int, confirmedKept: Bool, version: Int, digest: ListDigest
    )?

    /// The confirmed state of a replica list (a snapshot document), kept while local changes wait.
    func confirmedState(listID: Int64) throws -> [UInt8]?

    /// The outbox of the list `info` names, oldest first.
    func outbox(of info: ListRow) throws -> [OutboxEntry]

    /// Keeps the confirmed state of a replica list (a snapshot document).
    func keepConfirmed(_ document: [UInt8], listID: Int64) throws

    /// Queues a local change in the replica list's outbox, under the store's client id.
    func insertOutbox(
        listID: Int64, seq: Int, intentsJSON: [UInt8], author: String?, message: String?,
        createdAt: String, localVersion: Int
    ) throws

    // MARK: Replica lists

    /// The replica list's position (its source, and the source version it holds); `nil` when the
    /// list is not a replica.
    func replicaSource(listID: Int64) throws -> ReplicaSource?

    /// Whether the list has local changes in its outbox, and the source version it holds (`nil`
    /// when it is not a replica).
    func replicaState(listID: Int64) throws -> (hasLocalChanges: Bool, sourceVersion: Int?)

    /// Makes the list a replica of `source`, or moves its position there (keeping its outbox and
    /// confirmed state).
    func setReplicaSource(_ source: ReplicaSource, listID: Int64, updatedAt: String) throws

    /// Moves a replica list's position to `position` after a pull, with its confirmed state (`nil`
    /// when no local change remains) and, when given, the conflicts of its last push.
    func moveReplicaSource(
        listID: Int64, to position: ReplicaSource, confirmed: [UInt8]?, lastConflicts: [UInt8]?,
        updatedAt: String
    ) throws

    /// Removes the outbox entries `seqs` (their changes are confirmed).
    func deleteOutbox(listID: Int64, seqs: [Int]) throws

    /// Records the source version an outbox entry's push was merged as (`nil`: to push again);
    /// with `ifClient`, only while the entry is still under that client id.
    func setPushedVersion(_ version: Int?, listID: Int64, seq: Int, ifClient client: String?) throws

    /// How many outbox entries wait for a push, and how many were pushed and wait to be confirmed.
    func outboxCounts(listID: Int64) throws -> (pending: Int, pushed: Int)

    /// The conflict report of the replica list's last push (`nil`: none).
    func lastConflicts(listID: Int64) throws -> [UInt8]?

    /// Sets the conflict report of the replica list's last push.
    func setLastConflicts(_ report: [UInt8]?, listID: Int64) throws

    /// Whether the list has any section row.
    func holdsSections(listID: Int64) throws -> Bool

    /// Makes `new` the store's client id, when it is `old`.
    func replaceClientID(_ old: String, with new: String) throws

    /// Moves the outbox entries from `id.seq` on that are still under `id.client` and not pushed to
    /// the client id `client`.
    func moveOutbox(listID: Int64, from id: PushID, to client: String) throws

    /// The number of entries in the list's outbox.
    func outboxCount(listID: Int64) throws -> Int

    /// The position of the replica set `pattern` (its source, feed position, last conflict report
    /// and when it moved), nil when the store follows no such set.
    func replicaSet(_ pattern: String) throws -> (store: StoreIdentity, position: Int, place: String?, lastConflicts: [UInt8]?, updatedAt: String)?

    /// Records the replica set `pattern` at `position` of `store`'s feed, with `lastConflicts` when
    /// given (the report before is kept otherwise).
    func setReplicaSet(
        _ pattern: String, store: StoreIdentity, position: Int, place: String, lastConflicts: [UInt8]?, updatedAt: String
    ) throws

    // MARK: Consumers and pruning

    /// The consumers of the list `info` names, by name (in code point order).
    func consumers(of info: ListRow) throws -> [ConsumerInfo]

    /// Registers a consumer at `version`, or moves a registered one there.
    func insertConsumer(_ name: String, listID: Int64, version: Int, at time: String) throws

    /// Moves a registered consumer to `version`; whether there was one.
    func updateConsumer(_ name: String, listID: Int64, version: Int, at time: String) throws -> Bool

    /// Removes a consumer; whether there was one.
    func deleteConsumer(_ name: String, listID: Int64) throws -> Bool

    /// Removes the journal entries up to `version`; how many.
    func deleteJournal(listID: Int64, through version: Int) throws -> Int

    /// Makes `version` the list's base, with the snapshot document at it.
    func setBase(listID: Int64, version: Int, snapshot: [UInt8]) throws

    /// Removes the stored snapshots up to `version` and, when the newest stored point was among
    /// them, counts the journal's bytes since `version` anew.
    func dropStoredSnapshots(listID: Int64, through version: Int) throws

    // MARK: Pushes

    /// The rows of `client`'s record of pushes to the list that answer for a sequence number in
    /// `seqs` (a folded run overlapping them included), in order, at most 1,000.
    func pushRecords(listID: Int64, client: String, seqs: ClosedRange<Int>) throws -> [PushRecord]

    /// Every row of the list's record of pushes whose version is at most `version`, without their
    /// conflict reports (pruning reads them to fold them).
    func pushRecords(listID: Int64, mergedThrough version: Int) throws -> [PushRecord]

    /// Replaces `record.client`'s rows with a sequence number up to `record.seq` by `record`.
    func replacePushRecords(listID: Int64, with record: PushRecord) throws

    /// The highest sequence number recorded for `client`'s pushes to the list.
    func latestPushSeq(listID: Int64, client: String) throws -> Int?

    /// Records a merged push: its id, the version holding it, its conflict report and fingerprint.
    func insertPush(
        listID: Int64, id: PushID, version: Int, conflictsJSON: [UInt8], pushedAt: String,
        fingerprint: String
    ) throws

    /// Records that the list had sections with these ids, which a commit deletes (once per id,
    /// however often).
    func insertDeletedSections(listID: Int64, ids: [String]) throws

    /// Of `ids`, those the list deleted a section of (`insertDeletedSections`); `nil` when the
    /// list's deleted sections are not all recorded (a list made before schema 9 on SQLite, 7 on
    /// PostgreSQL).
    func deletedSections(listID: Int64, among ids: Set<ExactString>) throws -> Set<ExactString>?

    /// Marks a journal entry as the merge of push `id`, with its conflict report (`nil` for none).
    func markJournal(
        listID: Int64, version: Int, pushedAs id: PushID?, conflictsJSON: [UInt8]?)
        throws

    // MARK: The store feed

    /// Gives the commit of `version` of the list the store's next feed position, as the
    /// transaction's last write: an engine whose writers run at once hands positions out in the
    /// order their transactions commit (PostgreSQL holds the store row's lock until then).
    func appendFeed(listID: Int64, list: String, version: Int, deleted: Bool) throws

    /// The oldest position a follower may resume after, and the feed's last position.
    func feedBounds() throws -> (base: Int, last: Int)

    /// The feed's events after `position`, oldest first, at most `limit` (not the commits of
    /// deleted lists, which `deleteRows` keeps as rows the feed passes over).
    func feedEvents(after position: Int, limit: Int) throws -> [FeedEvent]

    /// What the feed's events after `position` did to their lists' heads, oldest first, at most
    /// `limit` (as `feedEvents(after:limit:)`, without reading the entries).
    func feedMoves(after position: Int, limit: Int) throws -> [FeedMove]

    /// The fingerprint of the feed's event at `position` (a commit of a deleted list's too); `nil`
    /// when the feed has no row there (forgotten), or one written before events had fingerprints.
    func feedFingerprint(at position: Int) throws -> Int64?

    /// The store's secret for sealing feed cursors (32 bytes, made with the store).
    func feedSecret() throws -> [UInt8]

    /// Deletes every row of the list `info` names: its row, head, journal, stored snapshots,
    /// consumers, recorded pushes, replica position and outbox. The feed events of its commits
    /// stay, passed over by the feed (a cursor at one is still checked by its fingerprint), and so
    /// does its deletion event.
    func deleteRows(of info: ListRow) throws

    // MARK: Pages

    /// The records of the head of list `listID` after `cursor` (`nil`: from the first), in list
    /// order (each section's, then its elements'), at most `limit`, each with the positions of the
    /// cursor just after it (`ListPage.Cursor(section:element:)`). Fewer than `limit` only when the
    /// list's records end (`forEachHeadRun` relies on it).
    func headRecords(listID: Int64, after cursor: (section: Int64, element: Int64?)?, limit: Int) throws
        -> [(after: (section: Int64, element: Int64?), record: ListPage.Record)]

    /// The paged sync under way of the replica list `list` (by name), if any; with `locking`, its
    /// row is locked for the rest of the transaction (writers of one sync take turns: two pulls of
    /// one replica list never land the same page twice).
    func stagedSync(of list: String, locking: Bool) throws -> StagedSync?

    /// Records `sync` as the paged sync of `list`, in place of any other.
    func writeStagedSync(_ sync: StagedSync, of list: String) throws

    /// Deletes the record of the paged sync of `list` (not its staging list's rows:
    /// `discardStagedSync(of:)` deletes both).
    func deleteStagedSync(of list: String) throws

    /// The row of the list named `name`, if any, its name not checked: for the store's own lists
    /// (a paged sync's staging list, `_Names.staging(_:)`), which no user names.
    func listID(named name: String) throws -> Int64?

    /// Names the list `listID` `name` (a staging list becomes the list it was staged for).
    func renameList(_ listID: Int64, to name: String) throws

    /// Gives the section rows of list `listID` to list `target`, at their positions (`target` has
    /// none).
    func moveSections(of listID: Int64, to target: Int64) throws

    /// The last section row of list `listID` (by position), its section's id and how many elements
    /// it holds; `nil` when the list has no section.
    func lastSection(listID: Int64) throws -> (row: Int64, id: String, elements: Int)?

    /// Inserts a run of the records of a head being copied into the list `listID` (whose head was
    /// empty), in list order: a section's record makes a section row; an element's goes into the
    /// section row made last (`section`, for the run's first elements: the one the run before
    /// ended in). Returns the rows of the sections it made, in order.
    /// - Throws: `.damaged` for an element with no section before it.
    func insertCopiedRecords(_ records: [CopiedRecord], listID: Int64, section: Int64?) throws -> [Int64]

    /// Forgets the feed's events of the list's versions up to `version` (its journal up to there
    /// was pruned): the feed's base passes the last of them, and the commits of deleted lists up
    /// to the base go too.
    func forgetFeed(listID: Int64, through version: Int) throws

    // MARK: Kept element records (a head read in part)

    /// Whether the engine keeps each section's element records beside its row (`_ElementRecords`),
    /// so that a replayed journal entry reads the elements of only the sections it touches. The
    /// default is `false`, and then the other steps of this part are never called.
    var keepsElementRecords: Bool { get }

    /// Locks the list as `lockedHead(of:)` does and returns its head; when the engine keeps no head
    /// in memory for it, it calls `sections`, and when that names sections (by index), the elements
    /// of only those are read and the others are left out (`StoredHead.unloadedSections`).
    func lockedHead(of list: String, elementsOf sections: () throws -> Set<Int>?) throws -> StoredHead

    /// The element records kept for section row `row`; `nil` when none are.
    func keptElementRecords(section row: Int64) throws -> [UInt8]?

    /// Keeps `records` for section row `row`.
    func keepElementRecords(_ records: [UInt8], section row: Int64) throws

    /// Forgets the records kept for the section rows `rows` (those that keep any).
    func forgetElementRecords(sections rows: [Int64]) throws

    /// The ids and content hashes of the elements of section row `row`, in order, read from its rows.
    func elementItems(section row: Int64) throws -> [HeadItem]

    // MARK: Blobs

    /// The size of blob `hash` and whether it is whole (every byte there, read back to its hash),
    /// if the store has its row.
    func blobRow(_ hash: ContentHash) throws -> (size: Int, whole: Bool)?

    /// Makes the row of blob `hash`, of `size` bytes, not whole, unless it has one (another
    /// upload made it meanwhile).
    func insertBlob(_ hash: ContentHash, size: Int) throws

    /// Marks blob `hash` whole.
    func markBlobWhole(_ hash: ContentHash) throws

    /// Locks the row of blob `hash` for the rest of the transaction, if it has one (the writers of a
    /// blob take turns on it; an engine whose writers all take turns does nothing).
    func lockBlob(_ hash: ContentHash) throws

    /// The bytes of the part of blob `hash` that starts at byte `start`, if it was written.
    func blobPart(_ hash: ContentHash, start: Int) throws -> [UInt8]?

    /// Writes the part of blob `hash` that starts at byte `start`, unless there is one (another
    /// upload wrote it meanwhile); whether it wrote it.
    func insertBlobPart(_ hash: ContentHash, start: Int, bytes: [UInt8]) throws -> Bool

    /// Throws `StoreError` `.storageFull` when writing `count` more bytes of a blob would leave the
    /// store's disk without the room it keeps for other writes (SQLite); an engine that does not
    /// keep room does nothing.
    func ensureRoom(forBlobBytes count: Int) throws

    /// Deletes blob `hash`: its row, its parts and every list's upload of it under way.
    func deleteBlob(_ hash: ContentHash) throws

    /// How many bytes the upload of blob `hash` to list `listID` under way sent, if one is.
    func blobUpload(listID: Int64, hash: ContentHash) throws -> Int?

    /// Records that the upload of blob `hash` to list `listID` sent `received` bytes, at `time`
    /// (ISO 8601) (`nil`: it is over, and its record goes).
    func setBlobUpload(listID: Int64, hash: ContentHash, received: Int?, at time: String) throws

    /// The blobs whose uploads to list `listID` sent their last part before `time` (ISO 8601).
    func idleBlobUploads(listID: Int64, before time: String) throws -> [ContentHash]

    /// Which of `hashes` list `listID` has (`list_blob`).
    func listBlobs(listID: Int64, among hashes: Set<ContentHash>) throws -> Set<ContentHash>

    /// Every blob list `listID` has, in hash order, and whether it has it uploaded (or only by
    /// reference: a replica list has its source's blobs so).
    func listBlobs(listID: Int64) throws -> [(hash: ContentHash, uploaded: Bool)]

    /// Whether list `listID` has blob `hash` uploaded.
    func hasUploadedBlob(listID: Int64, hash: ContentHash) throws -> Bool

    /// Gives list `listID` the blobs `hashes`, uploaded or by reference (a blob it has by
    /// reference becomes uploaded; one uploaded stays so). By reference, they are its source's
    /// (`from_source`; a replica list takes its source's contents so), whether or not it had them
    /// uploaded already.
    func insertListBlobs(listID: Int64, hashes: Set<ContentHash>, uploaded: Bool) throws

    /// Takes from list `listID` every blob it has and every upload it has under way; the hashes
    /// they named.
    func deleteListBlobs(listID: Int64) throws -> Set<ContentHash>

    /// Takes `hashes` from the blobs list `listID` has.
    func deleteListBlobs(listID: Int64, among hashes: Set<ContentHash>) throws

    /// Marks blob `hash` of list `listID` as the one the list used last (`list_blob.used`).
    func touchListBlob(listID: Int64, hash: ContentHash) throws

    /// The blobs list `listID` has uploaded, whose bytes are whole in the store, that its source's
    /// contents referred to, with their sizes, the one it used longest ago first.
    func cachedBlobs(listID: Int64) throws -> [(hash: ContentHash, size: Int)]

    /// Makes list `listID` have `hashes` by reference only (no longer uploaded).
    func unholdListBlobs(listID: Int64, hashes: Set<ContentHash>) throws

    /// Which of `hashes` no list has uploaded and no list uploads (a list that has a blob by
    /// reference only does not need its bytes).
    func unclaimedBlobs(among hashes: Set<ContentHash>) throws -> Set<ContentHash>
}

extension StoreTransaction {
    /// The paged sync under way of the replica list `list`, read without locking it.
    package func stagedSync(of list: String) throws -> StagedSync? { try stagedSync(of: list, locking: false) }
}

extension StoreTransaction {
    package var keepsElementRecords: Bool { false }

    package func ensureRoom(forBlobBytes count: Int) throws {}

    package func lockedHead(of list: String, elementsOf sections: () throws -> Set<Int>?) throws -> StoredHead {
        try lockedHead(of: list)
    }

    package func keptElementRecords(section row: Int64) throws -> [UInt8]? { nil }

    package func keepElementRecords(_ records: [UInt8], section row: Int64) throws {}

    package func forgetElementRecords(sections rows: [Int64]) throws {}

    package func elementItems(section row: Int64) throws -> [HeadItem] {
        throw StoreError(.damaged, "this store keeps no element records")
    }
}

extension StoreTransaction {
    package func insertJournal(
        _ journal: CommitRows.Journal, listID: Int64, digest: ListDigest, stagesCount: Int,
        stages: (_ write: ([UInt8]) throws -> Void) throws -> Void
    ) throws {
        try insertJournal(journal, listID: listID, stagesJSON: try Self.gather(stagesCount, "a journal entry", stages), digest: digest)
    }

    package var writesInPieces: Bool { false }

    package func insertStoredSnapshot(
        version: Int, listID: Int64, count: Int, document: (_ write: ([UInt8]) throws -> Void) throws -> Void
    ) throws {
        try insertStoredSnapshot(document: try Self.gather(count, "a stored snapshot", document), version: version, listID: listID)
    }

    /// The `count` bytes `pieces` writes.
    /// - Throws: `.damaged` when they are not `count` bytes (`what` names them).
    private static func gather(_ count: Int, _ what: String, _ pieces: (_ write: ([UInt8]) throws -> Void) throws -> Void) throws -> [UInt8] {
        var gathered: [UInt8] = []
        gathered.reserveCapacity(count)
        try pieces { gathered += $0 }
        guard gathered.count == count else { throw StoreError(.damaged, "\(what) of \(count) bytes was written as \(gathered.count)") }
        return gathered
    }
}
