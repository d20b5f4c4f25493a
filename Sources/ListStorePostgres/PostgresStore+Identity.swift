import Foundation
import ListStoreCore
import PostgresNIO

extension PostgresStore {
    /// The store's identity: its UUID, made with the store, and its epoch.
    ///
    /// ```swift
    /// let id = try await store.identity()    // e.g. 1f0c…/1
    /// ```
    /// - Throws: `StoreError` `.damaged` (no identity row), `.io`; `CancellationError` when the task
    ///   is cancelled before the read starts.
    /// - Complexity: O(1), one read-only transaction.
    public func identity() async throws -> StoreIdentity {
        try await writing(.readOnly) { try $0.identity() }
    }

    /// Bumps the epoch, telling every consumer that this store's history may not be the one they
    /// followed (after restoring the database from a backup, or rewriting history), and gives the
    /// store a new client id for its pushes, as `Store.advanceEpoch()` does.
    ///
    /// ```swift
    /// let restored = try await store.advanceEpoch()    // e.g. 1f0c…/2
    /// ```
    /// - Returns: the new identity.
    /// - Throws: `StoreError` `.damaged` (no identity row), `.io`; `CancellationError` when the task
    ///   is cancelled before the write starts.
    /// - Complexity: O(1), one transaction.
    @discardableResult
    public func advanceEpoch() async throws -> StoreIdentity {
        try await writing { try $0.advanceEpoch() }
    }
}
