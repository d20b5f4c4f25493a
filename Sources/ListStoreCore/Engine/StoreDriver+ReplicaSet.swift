import ListMerge

// The writes of ListSync's replica sets for every driver: each applied event and the set's cursor
// in one transaction of the driver's.

extension StoreDriver {
    /// Where the replica set `pattern` stands: its source, the feed position it applied up to, the
    /// changes it dropped with deleted lists; `nil` when the store follows no such set.
    ///
    /// ```swift
    /// let position = try await store.replicaSetPosition(of: "users/ana/**")   // e.g. position 812
    /// ```
    /// - Throws: `StoreError` `.storeNotFound`, `.damaged`, `.io`.
    /// - Complexity: O(1) plus the size of the set's last conflict report.
    public func replicaSetPosition(of pattern: String) async throws -> ReplicaSetPosition? {
        do {
            return try await run(.read) { try $0.steps.replicaSetPosition(pattern) }
        } catch let error as StoreError where error.code == .storeNotFound {
            return nil
        }
    }

    /// Applies the source's journal entry to the replica list `list` (as
    /// `commitReplica(_:to:source:check:)`) and moves the replica set `pattern` to `position` of
    /// the `feed` store's feed (`place` as the source wrote it), in one transaction.
    @_spi(Replication) public func commitReplica(
        _ entry: JournalEntry, to list: String, source: ReplicaSource, set pattern: String, feed: StoreIdentity, position: Int,
        place: String, check: @escaping @Sendable (CommitResult) throws -> Void
    ) async throws -> CommitResult {
        try _Names.checkList(list)
        return try await run(.create) { transaction in
            try transaction.steps.commitReplica(
                to: list, source: source, author: entry.author, message: entry.message, entry: entry,
                target: .stages(json: entry.stagesJSON, what: "the stages of source version \(entry.version) of list '\(entry.list)'"),
                check: { result in try CallerError.passing { try check(result) } },
                then: { try transaction.steps.moveReplicaSet(pattern, store: feed, to: position, place: place) })
        }
    }

    /// Moves the replica set `pattern` to `position` of the `feed` store's feed (past events it had
    /// nothing to apply for).
    @_spi(Replication) public func moveReplicaSet(_ pattern: String, feed: StoreIdentity, to position: Int, place: String) async throws {
        try await run(.create) { try $0.steps.moveReplicaSet(pattern, store: feed, to: position, place: place) }
    }

    /// Removes the replica list `list`, which its source `source` deleted (when it is a replica of
    /// that list of that store), and moves the replica set `pattern` to `position`, in one
    /// transaction; returns its local changes, each as a `listDeleted` conflict (see
    /// `ReplicaSetPosition.lastConflicts`).
    @_spi(Replication) public func dropReplicaList(
        _ list: String, of source: StoreIdentity, listID: String?, set pattern: String, feed: StoreIdentity, position: Int, place: String
    ) async throws -> [Conflict] {
        try await run(.create) {
            try $0.steps.dropReplicaList(list, of: source, listID: listID, set: pattern, store: feed, position: position, place: place)
        }
    }
}
