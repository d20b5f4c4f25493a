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
        try Store.validateListName(list)
        return try writing(creating: true) { transaction in
            try transaction.commitReplica(
                to: list, source: source, author: author, message: message, entry: nil, target: .snapshot { _ in sections },
                check: check)
        }
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
        try Store.validateListName(list)
        let what = "the stages of source version \(entry.version) of list '\(entry.list)'"
        return try writing(creating: true) { transaction in
            try transaction.commitReplica(
                to: list, source: source, author: entry.author, message: entry.message, entry: entry,
                target: .stages(json: entry.stagesJSON, what: what), check: check)
        }
    }
}
