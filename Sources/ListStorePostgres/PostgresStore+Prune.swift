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
        try await writing { try $0.prune(list, rule, force: force) }
    }
}
