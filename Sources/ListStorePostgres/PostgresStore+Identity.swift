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
    /// - Complexity: O(1), one round trip.
    public func identity() async throws -> StoreIdentity {
        try await withConnection { connection in
            try await Self.identity(connection, self)
        }
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
    /// - Complexity: O(1), one round trip.
    @discardableResult
    public func advanceEpoch() async throws -> StoreIdentity {
        try await withConnection { connection in
            let rows = try await connection.query(
                "UPDATE store SET epoch = epoch + 1, client_id = \(UUID().uuidString.lowercased()) WHERE id = 1 RETURNING uuid, epoch",
                logger: logger)
            for try await (uuid, epoch) in rows.decode((String, Int).self) {
                return StoreIdentity(uuid: uuid, epoch: epoch)
            }
            throw StoreError(.damaged, "the store at \(location) is damaged: it has no identity row")
        }
    }

    static func identity(_ connection: PostgresConnection, _ store: PostgresStore) async throws -> StoreIdentity {
        let rows = try await connection.query("SELECT uuid, epoch FROM store WHERE id = 1", logger: store.logger)
        for try await (uuid, epoch) in rows.decode((String, Int).self) {
            return StoreIdentity(uuid: uuid, epoch: epoch)
        }
        throw StoreError(.damaged, "the store at \(store.location) is damaged: it has no identity row")
    }
}
