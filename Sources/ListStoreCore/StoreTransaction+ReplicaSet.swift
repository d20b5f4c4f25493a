import Foundation
import ListJSON
import ListMerge

// Replica sets: a replica store that follows the lists of a pattern over its source's feed, with
// one cursor for the set written in the same transaction as what it applies.

extension StoreTransaction {
    /// The replica set's recorded position, decoded.
    /// - Throws: `StoreError` `.damaged` for a conflict report that does not decode.
    package func replicaSetPosition(_ pattern: String) throws -> ReplicaSetPosition? {
        guard let (store, position, report, updatedAt) = try replicaSet(pattern) else { return nil }
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
        return ReplicaSetPosition(pattern: pattern, store: store, position: position, lastConflicts: conflicts, updatedAt: updatedAt)
    }

    /// Moves the replica set `pattern` to `position` of `store`'s feed (events it had nothing to
    /// apply for: other lists', or commits its lists already hold).
    package func moveReplicaSet(_ pattern: String, store: StoreIdentity, to position: Int) throws {
        try setReplicaSet(pattern, store: store, position: position, lastConflicts: nil, updatedAt: _Time.iso8601(Date()))
    }

    /// Removes the replica list `list`, which its source `source` deleted, and moves the replica set
    /// to `position` of `store`'s feed, in one transaction. Each change of the list's outbox
    /// (pending, or pushed and not yet confirmed) is reported as a `listDeleted` conflict with its
    /// content: returned, and kept in the set's last conflicts under the list's name (replacing an
    /// earlier report of that name). A list the store does not hold, or one that is not a replica
    /// of that list of `source` (a list of its own, or of another store, by the same name), is
    /// left as it is: only the set moves.
    /// - Throws: `StoreError` of the reads and writes.
    /// - Complexity: O(rows of the list).
    package func dropReplicaList(
        _ list: String, of source: StoreIdentity, set pattern: String, store: StoreIdentity, position: Int
    ) throws -> [Conflict] {
        var conflicts: [Conflict] = []
        let info: ListRow?
        do {
            info = try listRow(list, locking: true)
        } catch let error as StoreError where error.code == .listNotFound {
            info = nil
        }
        if let info, let replica = try replicaSource(listID: info.id), replica.store.uuid == source.uuid, replica.list == list {
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
            _ = try deleteList(list)
        }
        var report: [UInt8]?
        if !conflicts.isEmpty {
            var all = try replicaSetPosition(pattern)?.lastConflicts ?? [:]
            all[list] = conflicts
            let members = all.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }.map { ($0.key, Conflict.jsonValue($0.value)) }
            report = Array(JSONValue.object(JSONObject(uniqueKeysWithValues: members)).serialized().utf8)
        }
        try setReplicaSet(pattern, store: store, position: position, lastConflicts: report, updatedAt: _Time.iso8601(Date()))
        return conflicts
    }
}
