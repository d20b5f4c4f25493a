import ListStoreCore
import PostgresNIO

extension PostgresStore {
    /// Drops old journal entries of `list`, as `Store.prune(_:_:force:)` does: the snapshot at the
    /// new oldest retained version (the base) is kept, so every version from the base to the head
    /// can still be read and diffed. Pruning stops at the lowest version a registered consumer
    /// acknowledged unless `force` is set; consumers whose cursor is then older than the base get
    /// "resync required". The transaction holds the list's row lock, as commits do.
    ///
    /// ```swift
    /// let result = try await store.prune("inbox", .keepLast(1_000))
    /// result.base        // the oldest version still available
    /// result.heldBy      // consumers that kept older entries
    /// ```
    /// - Throws: `StoreError` `.invalidArgument` (a negative count), `.versionNotFound` (`before` a
    ///   version outside the history), `.listNotFound`, `.damaged`, `.io`; `CancellationError` when
    ///   the task is cancelled before the transaction starts. Nothing is changed when it throws.
    /// - Complexity: O(n × (new base − old base)) to rebuild the base snapshot, plus the rows removed.
    @discardableResult
    public func prune(_ list: String, _ rule: PruneRule, force: Bool = false) async throws -> PruneResult {
        let pruned = try await transaction(.writing) { connection in
            let info = try await listInfo(connection, list: list, locking: true)
            let (base, heldBy) = try rule.base(for: info, consumers: try await consumers(connection, list: info), force: force)
            var result = PruneResult(
                list: list, previousBase: info.baseVersion, base: base, head: info.headVersion, removedEntries: 0, heldBy: heldBy)
            guard base > info.baseVersion else { return result }
            let snapshot = try await snapshot(connection, list: list, at: base)
            try snapshot.checkDigest()
            let removed = try await connection.query(
                "WITH d AS (DELETE FROM journal WHERE list_id = \(info.id) AND version <= \(base) RETURNING 1) SELECT count(*) FROM d",
                logger: logger)
            for try await count in removed.decode(Int.self) { result.removedEntries = count }
            try await connection.query(
                """
                UPDATE list SET base_version = \(base), base_snapshot = \(ByteBuffer(bytes: snapshot.documentJSON))
                WHERE id = \(info.id)
                """, logger: logger)
            // The base is now the newest stored point at or before itself: stored snapshots up to it go;
            // the list keeps counting from its newest stored point.
            try await connection.query(
                "DELETE FROM stored_snapshot WHERE list_id = \(info.id) AND version <= \(Int64(base))", logger: logger)
            try await connection.query(
                """
                UPDATE list SET snapshot_version = \(Int64(base)),
                    bytes_since_snapshot = (SELECT coalesce(sum(octet_length(stages)), 0) FROM journal
                        WHERE list_id = \(info.id) AND version > \(Int64(base)))
                WHERE id = \(info.id) AND snapshot_version < \(Int64(base))
                """, logger: logger)
            // Readers that keep what they read per commit generation (the servers' pages) read anew.
            try await connection.query("SELECT pg_notify(\(Self.commitChannel), \(list))", logger: logger)
            return result
        }
        if pruned.base > pruned.previousBase { commits.notify(path: location) }
        return pruned
    }
}
