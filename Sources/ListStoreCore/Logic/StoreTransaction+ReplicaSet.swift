import Foundation
import ListJSON
import ListMerge

// Replica sets: a replica store that follows the lists of a pattern over its source's feed, with
// one cursor for the set written in the same transaction as what it applies.

extension StoreTransaction {
    /// The replica set's recorded position, decoded.
    /// - Throws: `StoreError` `.damaged` for a conflict report that does not decode.
    package func replicaSetPosition(_ pattern: String) throws -> ReplicaSetPosition? {
        guard let (store, position, place, report, updatedAt) = try replicaSet(pattern) else { return nil }
        var conflicts: [String: [Conflict]] = [:]
        if let report {
            do {
                for (list, value) in try JSONValue(parsing: report).objectValue ?? JSONObject() {
                    conflicts[list] = try Conflict.conflicts(decoding: value)
                }
            } catch {
                throw StoreError(.damaged, "the conflict report of replica set '\(pattern)' does not decode: \(error)")
            }
        }
        return ReplicaSetPosition(
            pattern: pattern, store: store, position: position, place: place ?? "\(position)", lastConflicts: conflicts, updatedAt: updatedAt)
    }

    /// Moves the replica set `pattern` to `position` of `store`'s feed, `place` as the source wrote
    /// it (events it had nothing to apply for: other lists', or commits its lists already hold).
    package func moveReplicaSet(_ pattern: String, store: StoreIdentity, to position: Int, place: String) throws {
        try setReplicaSet(pattern, store: store, position: position, place: place, lastConflicts: nil, updatedAt: _Time.iso8601(Date()))
    }

    /// Removes the replica list `list`, which its source `source` deleted, and moves the replica set
    /// to `position` of `store`'s feed, in one transaction. Each change of the list's outbox
    /// (pending, or pushed and not yet confirmed) is reported as a `listDeleted` conflict with its
    /// content: returned, and kept in the set's last conflicts under the list's name (replacing an
    /// earlier report of that name). A list the store does not hold, or one that is not a replica
    /// of that list of `source` (a list of its own, or of another store, by the same name, or a
    /// replica of another list of that name than `listID`, the deleted one's identity), is left as
    /// it is: only the set moves.
    /// - Throws: `StoreError` of the reads and writes.
    /// - Complexity: O(rows of the list).
    package func dropReplicaList(
        _ list: String, of source: StoreIdentity, listID: String? = nil, set pattern: String, store: StoreIdentity, position: Int,
        place: String
    ) throws -> [Conflict] {
        var conflicts: [Conflict] = []
        let info: ListRow?
        do {
            info = try listRow(list, locking: true)
        } catch let error as StoreError where error.code == .listNotFound {
            info = nil
        }
        if let info, let replica = try replicaSource(listID: info.id), replica.store.uuid == source.uuid, replica.list == list,
            replica.listID == nil || listID == nil || replica.listID == listID
        {
            conflicts = try deletedListConflicts(of: list)
            _ = try deleteList(list, discardingPending: true)
        }
        var report: [UInt8]?
        if !conflicts.isEmpty {
            var all = try replicaSetPosition(pattern)?.lastConflicts ?? [:]
            all[list] = conflicts
            let members = all.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }.map { ($0.key, Conflict.jsonValue($0.value)) }
            report = Array(JSONValue.object(JSONObject(uniqueKeysWithValues: members)).serialized().utf8)
        }
        try setReplicaSet(pattern, store: store, position: position, place: place, lastConflicts: report, updatedAt: _Time.iso8601(Date()))
        return conflicts
    }

    /// Replaces the replica list `list`, whose source list (of identity `previous`) was deleted and
    /// whose name a new list took, by a replica of the new list (see
    /// `ReplicaStore.replaceReplicaList`); `nil`, changing nothing, when the replica no longer
    /// follows `previous` (another pull replaced it meanwhile). Its outbox
    /// becomes `listDeleted` conflicts, kept as the new list's last conflicts, the list goes with
    /// its history, and `sections` become version 1 of a new list at `source`.
    /// - Throws: `StoreError` `.listNotFound`; what `commitReplica` and `check` throw.
    /// - Complexity: O(rows of the list and of `sections`).
    package func replaceReplicaList(
        _ list: String, following previous: String, with sections: [ListSection], source: ReplicaSource, message: String,
        check: (CommitResult) throws -> Void
    ) throws -> [Conflict]? {
        // Another pull may have replaced it meanwhile (and the new list may have local changes).
        guard try replicaSource(listID: try listRow(list, locking: true).id)?.listID == previous else { return nil }
        let conflicts = try deletedListConflicts(of: list)
        _ = try deleteList(list, discardingPending: true)
        _ = try commitReplica(
            to: list, source: source, author: nil, message: message, entry: nil, target: .snapshot(sections), check: check)
        if !conflicts.isEmpty {
            try setLastConflicts(Array(Conflict.jsonValue(conflicts).serialized().utf8), listID: try listRow(list, locking: false).id)
        }
        return conflicts
    }

    /// Reports the local changes of the replica list `list`, whose source list no longer exists, as
    /// `listDeleted` conflicts (returned, and kept as its last conflicts), and takes them out of its
    /// outbox, in this transaction: they can be pushed nowhere. The list keeps what it holds.
    /// - Throws: `StoreError` `.listNotFound`. - Complexity: O(size of the outbox).
    package func reportChangesToDeletedSource(of list: String) throws -> [Conflict] {
        let info = try listRow(list, locking: true)
        let outbox = try outbox(of: info)
        guard !outbox.isEmpty else { return [] }
        let conflicts = try deletedListConflicts(of: list)
        try deleteOutbox(listID: info.id, seqs: outbox.map(\.seq))
        try setLastConflicts(Array(Conflict.jsonValue(conflicts).serialized().utf8), listID: info.id)
        return conflicts
    }

    /// Records `id` as the identity of the source list the replica list `list` follows (nothing for
    /// a list that is not a replica).
    /// - Throws: `StoreError` `.listNotFound`. - Complexity: O(1).
    package func setSourceListID(_ id: String, of list: String) throws {
        let info = try listRow(list, locking: true)
        guard var source = try replicaSource(listID: info.id) else { return }
        source.listID = id
        try setReplicaSource(source, listID: info.id, updatedAt: _Time.iso8601(Date()))
    }

    /// Each change of `list`'s outbox (pending, or pushed and not yet confirmed), intent by intent,
    /// as a `listDeleted` conflict with its content: what a replica reports when its source list is
    /// gone.
    /// - Complexity: O(size of the outbox).
    private func deletedListConflicts(of list: String) throws -> [Conflict] {
        var conflicts: [Conflict] = []
        for entry in try outbox(of: list) {
            for intent in entry.intents {
                let section: ItemRef? =
                    switch intent {
                    case .insertElement(_, _, let section, _, _), .moveElement(_, let section, _, _), .updateElement(_, let section, _, _):
                        section
                    default: nil
                    }
                conflicts.append(Conflict(.listDeleted, intent.ref, section: section, mine: intent.jsonValue))
            }
        }
        return conflicts
    }
}
