import Foundation
import GRDB
import ListMerge

extension Store {
    /// Which source `list` replicates, and up to which version; `nil` for a list that is not a
    /// replica (or does not exist).
    /// - Throws: `StoreError` `.storeNotFound`, `.io`.
    public func replicaSource(of list: String) throws -> ReplicaSource? {
        let pool = try existingPool()
        return try Store.mapErrors(path: path) {
            try pool.read { db in
                guard let row = try Row.fetchOne(
                    db,
                    sql: """
                        SELECT r.store_uuid, r.store_epoch, r.list_name, r.version, r.digest
                        FROM replica_source r JOIN list l ON l.id = r.list_id WHERE l.name = ?
                        """,
                    arguments: [list])
                else { return nil }
                return ReplicaSource(
                    store: StoreIdentity(uuid: row[0], epoch: row[1]), list: row[2], version: row[3],
                    digest: ListDigest(hex: row[4]))
            }
        }
    }

    /// Commits `sections` as the head of the replica list `list` and records `source` as its
    /// position, in one transaction; `check` runs inside it first (with the result) and may throw to
    /// roll everything back. The list row is created if needed, even when nothing changes.
    ///
    /// Not API (package-visible: ListSync's replicas write through it).
    package func commitReplica(
        _ sections: [ListSection], to list: String, source: ReplicaSource, author: String?, message: String?,
        check: (CommitResult) throws -> Void
    ) throws -> CommitResult {
        try commitReplica(to: list, source: source, author: author, message: message, check: check) { _ in sections }
    }

    /// Applies the stages of the source's journal entry `entry` to the head of the replica list
    /// `list` (which must equal the entry's parent version) and records `source` as its position, in
    /// one transaction, without diffing: the rows are written along the stages, and the journal keeps
    /// the entry's JSON, author and message. `check` runs inside the transaction first (with the
    /// result) and may throw to roll everything back.
    ///
    /// Not API (package-visible: ListSync's replicas write through it).
    /// - Throws: `StoreError` `.invalidEdit` when the stages do not apply to the head; the errors of
    ///   `commit`.
    package func commitReplica(
        _ entry: JournalEntry, to list: String, source: ReplicaSource, check: (CommitResult) throws -> Void
    ) throws -> CommitResult {
        let what = "the stages of source version \(entry.version) of list '\(entry.list)'"
        return try commitReplica(
            to: list, source: source, author: entry.author, message: entry.message, stages: (entry.stagesJSON, what),
            copying: entry, check: check) { _ in [] }
    }

    private func commitReplica(
        to list: String, source: ReplicaSource, author: String?, message: String?,
        stages: (json: [UInt8], what: String)? = nil, copying entry: JournalEntry? = nil,
        check: (CommitResult) throws -> Void, makeTarget: ([ListSection]) throws -> [ListSection]
    ) throws -> CommitResult {
        try withoutActuallyEscaping(check) { check in
        try commit(
            to: list, expectedVersion: nil, author: author, message: message, makeTarget: makeTarget, replaying: stages,
            queueLocalChange: false,
            alsoWrite: { db, listID, result in
                try check(result)
                if let entry, result.changed, entry.pushID != nil || !entry.conflicts.isEmpty {
                    // The source's entry names the push that made it: keep that, as author and message.
                    try db.execute(
                        sql: "UPDATE journal SET push_client = ?, push_seq = ?, conflicts = ? WHERE list_id = ? AND version = ?",
                        arguments: [
                            entry.pushID?.client, entry.pushID?.seq,
                            entry.conflicts.isEmpty ? nil : Conflict.jsonValue(entry.conflicts).serialized(), listID, result.version,
                        ])
                }
                var listID = listID
                let now = _Time.iso8601(Date())
                if listID == 0 {
                    try Store.validateNewListName(list)
                    try db.execute(
                        sql: "INSERT INTO list (name, head_version, head_digest, base_version, created_at) VALUES (?, 0, ?, 0, ?)",
                        arguments: [list, result.digest.hex, now])
                    listID = db.lastInsertedRowID
                }
                try db.execute(
                    sql: """
                        INSERT INTO replica_source (list_id, store_uuid, store_epoch, list_name, version, digest, updated_at)
                        VALUES (?, ?, ?, ?, ?, ?, ?)
                        ON CONFLICT (list_id) DO UPDATE SET store_uuid = excluded.store_uuid, store_epoch = excluded.store_epoch,
                            list_name = excluded.list_name, version = excluded.version, digest = excluded.digest,
                            updated_at = excluded.updated_at
                        """,
                    arguments: [listID, source.store.uuid, source.store.epoch, source.list, source.version, source.digest.hex, now])
                // The file the client id is made for, from the replica's first pull on.
                _ = try self.clientIDOfThisFile(db)
            },
            checkFirst: { db, head in
                // The source's entry applies to the version it follows: another pull of this replica
                // may have applied it meanwhile.
                guard head.listID != 0 else { return }
                if try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM outbox WHERE list_id = ?", arguments: [head.listID]) != 0 {
                    // A local change landed since the replica looked: the pull must rebase it instead.
                    throw StoreError(
                        .versionConflict, "list '\(list)' has local changes: a pull rebases them onto the source's head",
                        expectedVersion: head.version, currentVersion: head.version)
                }
                guard let entry else { return }
                let recorded = try Int.fetchOne(
                    db, sql: "SELECT version FROM replica_source WHERE list_id = ?", arguments: [head.listID])
                if recorded != entry.parentVersion {
                    throw StoreError(
                        .versionConflict,
                        "the replica list '\(list)' is at source version \(recorded ?? 0), not \(entry.parentVersion): another pull moved it",
                        expectedVersion: entry.parentVersion, currentVersion: recorded ?? 0)
                }
            }
        )
        }
    }
}
