import GRDB

extension Store {
    /// Drops old journal entries of `list`. The snapshot at the new oldest retained version (the
    /// base) is kept, so every version from the base to the head can still be shown and diffed.
    /// Pruning stops at the lowest version acknowledged by a registered consumer unless `force` is
    /// set; consumers whose cursor is then older than the base get "resync required" (pruned).
    ///
    /// ```swift
    /// let result = try store.prune("inbox", .keepLast(1_000))
    /// result.base        // the oldest version still available
    /// result.heldBy      // consumers that kept older entries
    /// ```
    /// - Throws: `StoreError` `.invalidArgument` (a negative count), `.versionNotFound` (`before` a
    ///   version outside the history), `.listNotFound`, `.storeNotFound`, `.damaged`, `.io`. Nothing
    ///   is changed when it throws.
    /// - Complexity: that of `snapshot(of:at:)` to rebuild the base snapshot, plus the rows removed.
    @discardableResult
    public func prune(_ list: String, _ rule: PruneRule, force: Bool = false) throws -> PruneResult {
        let pool = try existingPool()
        let pruned = try Store.mapErrors(path: path) {
            try pool.writeWithoutTransaction { db in
                var result: PruneResult?
                try db.inTransaction(.immediate) {
                    let info = try listInfo(db, list: list)
                    let (base, heldBy) = try rule.base(for: info, consumers: try consumers(db, list: info), force: force)
                    result = PruneResult(
                        list: list, previousBase: info.baseVersion, base: base, head: info.headVersion,
                        removedEntries: 0, heldBy: heldBy)
                    guard base > info.baseVersion else { return .commit }
                    let snapshot = try snapshot(db, list: list, at: base)
                    try snapshot.checkDigest()
                    try db.execute(
                        sql: "DELETE FROM journal WHERE list_id = ? AND version <= ?", arguments: [info.id, base])
                    result?.removedEntries = db.changesCount
                    let update = try _RawStatement(db, "UPDATE list SET base_version = ?, base_snapshot = ? WHERE id = ?")
                    update.bind(1, base)
                    update.bind(2, textBytes: snapshot.documentJSON)
                    update.bind(3, info.id)
                    _ = try update.execute()
                    // The base is now the newest stored point at or before itself: stored snapshots up to
                    // it go; the list keeps counting from its newest stored point.
                    try db.execute(
                        sql: "DELETE FROM stored_snapshot WHERE list_id = ? AND version <= ?", arguments: [info.id, base])
                    try db.execute(
                        sql: """
                            UPDATE list SET snapshot_version = ?1,
                                bytes_since_snapshot = (SELECT coalesce(sum(length(CAST(stages AS BLOB))), 0) FROM journal
                                    WHERE list_id = ?2 AND version > ?1)
                            WHERE id = ?2 AND snapshot_version < ?1
                            """, arguments: [base, info.id])
                    return .commit
                }
                return result!
            }
        }
        // Readers that keep what they read per commit generation (the server's pages) read anew.
        if pruned.base > pruned.previousBase { CommitSignal.shared.notify(path: path) }
        return pruned
    }
}
