import ListDiff
import ListMerge
@_spi(Replication) import ListStore
@_spi(Replication) import ListStoreCore

extension Replica {
    /// Checks that the source list is still the list the replica follows, by its identity
    /// (`ListSummary.id`), before a pull applies anything: a list of the same name made after the
    /// followed one was deleted is another list. Returns the replica's head to pull from.
    ///
    /// - A replica that does not know its source list's identity yet (a first pull, a replica made
    ///   before lists had one, a source that does not tell) learns it here.
    /// - When the source list is another list, the replica is replaced by a replica of it, in one
    ///   transaction (`ReplicaStore.replaceReplicaList`): its local changes are reported as
    ///   `listDeleted` conflicts (in `result`, and in its status), never merged into the new list;
    ///   its history goes, and the new list's head becomes its version 1. With
    ///   `ReplicaPullOptions.replacing`, the replica follows the new list instead, keeping its local
    ///   changes, which the pull rebases onto it and the next push sends there.
    /// - When the source has no list of the name any more (deleted, or no longer readable with the
    ///   token), the replica's local changes are reported as `listDeleted` conflicts, kept in its
    ///   status, and taken out of its outbox (they can be pushed nowhere), in one transaction; the
    ///   pull then fails with `StoreError.Code.listNotFound` saying so. The list keeps what it holds
    ///   (`Store.deleteList(_:)` removes it).
    func checkListIdentity(
        _ current: ReplicaHead?, source: some ListSource, sourceList: String, identity: StoreIdentity, options: PullOptions,
        into result: inout PullResult
    ) async throws -> ReplicaHead? {
        guard let position = current?.position else { return current }
        // A replica pointed at another store or list (`replacing`) follows that list from here on.
        let sameSource = position.store.uuid == identity.uuid && position.list == sourceList
        while true {
            let summary: ListSummary
            do {
                summary = try await source.summary(of: sourceList)
            } catch let error as StoreError where error.code == .listNotFound {
                guard sameSource, position.listID != nil, current?.hasLocalChanges == true else { throw error }
                let reported = try await store.reportChangesToDeletedSource(of: list)
                throw StoreError(
                    .listNotFound,
                    "list '\(sourceList)' is no longer at the source (deleted, or not readable with this token): the replica's local changes are reported as \(reported.count) listDeleted conflict\(reported.count == 1 ? "" : "s") (see its status), and it keeps what it held")
            }
            guard let id = summary.id, id != position.listID else { return current }
            guard sameSource, position.listID != nil, !options.replacing else {
                // Learnt now (or, with `replacing`, the new list is followed from here on).
                try await store.setSourceListID(id, of: list)
                return try await store.replicaHead(of: list)
            }
            // Another list took the name. Its head is read, then its identity again: a head read
            // while the list was replaced once more is not taken for this one.
            let head = try await source.snapshot(of: sourceList, at: nil)
            guard try await source.summary(of: sourceList).id == id else { continue }
            let next = ReplicaSource(store: identity, list: sourceList, version: head.version, digest: head.digest, listID: id)
            guard let previous = position.listID else { continue }
            let replaced = try await store.replaceReplicaList(
                list, following: previous, with: head.sections, source: next,
                message: "the source list was deleted and another list took its name: replica of the new list at source version \(head.version)"
            ) { committed in
                guard committed.digest == next.digest else {
                    throw SyncError.diverged(version: next.version, expected: next.digest, actual: committed.digest)
                }
            }
            guard let conflicts = replaced else {
                // Another pull replaced it meanwhile: it follows the new list already.
                return try await store.replicaHead(of: list)
            }
            result.applied += 1
            result.resynced = true
            result.reason = .listReplaced
            result.conflicts += conflicts
            return try await store.replicaHead(of: list)
        }
    }
}
