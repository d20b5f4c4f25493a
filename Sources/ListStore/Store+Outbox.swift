@_spi(Replication) import ListStoreCore
import Foundation
import GRDB
import ListJSON
import ListMerge

extension Store {
    /// The id this store pushes its local changes under (a lowercase UUID made with the store, made
    /// anew by `advanceEpoch()`).
    /// - Throws: `StoreError` `.storeNotFound`, `.damaged`, `.io`.
    /// - Complexity: O(1).
    public func clientID() throws -> String {
        let pool = try existingPool()
        return try Store.mapErrors(path: path) { try pool.read { db in try Self.clientID(db, path: path) } }
    }

    /// The local changes of the replica list `list` that its confirmed state does not hold yet,
    /// oldest first (empty for a list that is not a replica).
    ///
    /// ```swift
    /// try replicaStore.commit(sections, to: "inbox").pendingSeq   // 1: queued
    /// try replicaStore.outbox(of: "inbox").map(\.seq)              // [1]
    /// ```
    /// - Throws: `StoreError` `.storeNotFound`, `.listNotFound`, `.damaged`, `.io`.
    /// - Complexity: O(size of the outbox).
    public func outbox(of list: String) throws -> [OutboxEntry] {
        let pool = try existingPool()
        return try Store.mapErrors(path: path) {
            try pool.read { db in try outbox(db, listID: try listInfo(db, list: list).id, list: list) }
        }
    }

    /// Where the replica list `list` stands: source, confirmed version, pending and pushed local
    /// changes, the last push's conflicts; `nil` for a list that is not a replica.
    /// - Throws: `StoreError` `.storeNotFound`, `.listNotFound`, `.damaged`, `.io`.
    /// - Complexity: O(1) plus the size of the last conflict report.
    public func replicaStatus(of list: String) throws -> ReplicaStatus? {
        let pool = try existingPool()
        return try Store.mapErrors(path: path) { try pool.read { db in try SQLiteTransaction(self, db).replicaStatus(of: list) } }
    }

    // MARK: - For replicas (package-visible: ListSync writes through these)

    /// The replica list's position, head version, confirmed state and outbox, read at one instant;
    /// `nil` when `list` is not a replica (or does not exist).
    package func pendingState(of list: String) throws -> PendingState? {
        guard exists else { return nil }
        let pool = try existingPool()
        return try Store.mapErrors(path: path) {
            try pool.read { db in
                guard let info = try listInfoIfAny(db, list: list) else { return nil }
                return try pendingState(db, info: info)
            }
        }
    }

    /// A list's head version and digest, whether it holds any section or local change, and its
    /// replica position, read at one instant; `nil` when the store or the list does not exist.
    /// - Complexity: O(1): no snapshot is read.
    package func replicaHead(of list: String) throws -> ReplicaHead? {
        guard exists else { return nil }
        let pool = try existingPool()
        return try Store.mapErrors(path: path) { try pool.read { db in try SQLiteTransaction(self, db).replicaHead(of: list) } }
    }

    /// Records that the outbox entry `answer.seq` of `list`, pushed under `client`, was pushed and
    /// how the source answered (nothing when the entry has moved to another client id meanwhile).
    package func recordPushed(_ answer: PushAnswer, client: String, of list: String) throws {
        try writing { try $0.recordPushed(answer, client: client, of: list) }
    }

    /// Moves the changes of `list` that a source refused under `id` to a new client id, because the
    /// source recorded `id` for a change other than this replica's (its file was copied or restored,
    /// or a push was forged): the entries from `id.seq` on that are still under `id.client` and were
    /// not answered move to `PushRule.clientID(replacing:)`, in one transaction; the store's later
    /// local changes get a new random id when the store's id was `id.client`. Entries the source
    /// answered stay where the source recorded them. Returns the id the entries moved to.
    package func takeNewClientID(for list: String, replacing id: PushID) throws -> String {
        try writing { try $0.takeNewClientID(for: list, replacing: id) }
    }

    /// Commits a pull of a replica list with local changes, in one transaction: `merged` (the
    /// remaining outbox rebased onto `confirmed`) becomes the head unless the head moved past
    /// `expectedVersion` (`.versionConflict`: a local change landed meanwhile), `position` the
    /// confirmed source version, the outbox loses the entries `confirmedSeqs` and the others get the
    /// source version their push was recorded as (or none: pushed again), and the confirmed state is
    /// kept while entries remain. Non-empty `conflicts` (of answers learned late) become the last
    /// push's conflicts. `check` runs inside the transaction first and may throw.
    package func commitPull(
        _ merged: [ListSection], to list: String, expectedVersion: Int, position: ReplicaSource, previous: ReplicaSource,
        confirmed: [ListSection], confirmedSeqs: [Int], remaining: [(seq: Int, pushedVersion: Int?)],
        conflicts: [Conflict], message: String, check: (CommitResult) throws -> Void
    ) throws -> CommitResult {
        try Store.validateListName(list)
        return try writing(creating: true) { transaction in
            try transaction.commitPull(
                merged, to: list, expectedVersion: expectedVersion, position: position, previous: previous, confirmed: confirmed,
                confirmedSeqs: confirmedSeqs, remaining: remaining, conflicts: conflicts, message: message, check: check)
        }
    }

    // MARK: - Internals

    /// The row of `list`, or `nil` when there is none.
    private func listInfoIfAny(_ db: Database, list: String) throws -> ListRow? {
        do {
            return try listInfo(db, list: list)
        } catch StoreError.Code.listNotFound {
            return nil
        }
    }

    /// The pending state of the list `info` names, or `nil` when it is not a replica.
    func pendingState(_ db: Database, info: ListRow) throws -> PendingState? {
        try SQLiteTransaction(self, db).pendingState(of: info)
    }

    func outbox(_ db: Database, listID: Int64, list: String) throws -> [OutboxEntry] {
        try Row.fetchAll(
            db,
            sql: """
                SELECT seq, intents, author, message, created_at, local_version, pushed_version,
                    coalesce(client_id, (SELECT client_id FROM store WHERE id = 1), '')
                FROM outbox WHERE list_id = ? ORDER BY seq
                """,
            arguments: [listID]
        ).map { row in
            let seq: Int = row[0]
            let text: String = row[1]
            let intents: [Intent]
            do {
                intents = try Intent.intents(decoding: try JSONParser().parse(Array(text.utf8)))
            } catch {
                throw StoreError(.damaged, "local change \(seq) of list '\(list)' does not decode: \(error)")
            }
            return OutboxEntry(
                seq: seq, intents: intents, author: row[2], message: row[3], createdAt: row[4], localVersion: row[5],
                pushedVersion: row[6], client: row[7])
        }
    }

    private static func position(_ db: Database, listID: Int64) throws -> ReplicaSource? {
        guard let row = try Row.fetchOne(
            db, sql: "SELECT store_uuid, store_epoch, list_name, version, digest FROM replica_source WHERE list_id = ?",
            arguments: [listID])
        else { return nil }
        return ReplicaSource(
            store: StoreIdentity(uuid: row[0], epoch: row[1]), list: row[2], version: row[3], digest: ListDigest(hex: row[4]))
    }

    /// The client id of the store, made anew first when the store's file is not the one the id was
    /// made for: a copy of the file, or the file restored from a backup, is another file (another
    /// device and inode), and must not push under the id its original goes on pushing under
    /// (ListMerge's article "Offline Writes and Conflicts", "What a replica promises"). Moving or
    /// renaming the file keeps it; a file the identity cannot be read of keeps the id, and the
    /// source's record tells of a reuse instead.
    func clientIDOfThisFile(_ db: Database) throws -> String {
        let client = try Self.clientID(db, path: path)
        guard let file = _FileIdentity.of(path) else { return client }
        let recorded = try String.fetchOne(db, sql: "SELECT file_identity FROM store WHERE id = 1")
        if recorded == file { return client }
        guard recorded != nil else {
            try db.execute(sql: "UPDATE store SET file_identity = ? WHERE id = 1", arguments: [file])
            return client
        }
        let fresh = UUID().uuidString.lowercased()
        try db.execute(sql: "UPDATE store SET client_id = ?, file_identity = ? WHERE id = 1", arguments: [fresh, file])
        return fresh
    }

    static func clientID(_ db: Database, path: String) throws -> String {
        guard let id = try String.fetchOne(db, sql: "SELECT client_id FROM store WHERE id = 1") else {
            throw StoreError(.damaged, "the store at \(path) is damaged: it has no client id")
        }
        return id
    }
}
