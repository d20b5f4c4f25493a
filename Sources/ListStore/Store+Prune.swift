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
        try writing { try $0.prune(list, rule, force: force) }
    }

    /// `prune(_:_:force:)`, written off the cooperative thread pool (GRDB's async access).
    @discardableResult
    public func prune(_ list: String, _ rule: PruneRule, force: Bool = false) async throws -> PruneResult {
        try await writing { try $0.prune(list, rule, force: force) }
    }
}
