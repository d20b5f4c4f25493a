import ListStoreCore
import PostgresNIO

extension PostgresStore {
    /// The size of the store's database (`pg_database_size`), indexes and write-ahead-logged pages
    /// included, for monitoring.
    ///
    /// ```swift
    /// print(try await store.sizeInBytes())    // e.g. 8413283
    /// ```
    /// - Throws: `StoreError` `.io` when the server does not answer; `CancellationError` when the
    ///   task is cancelled before the read starts.
    /// - Complexity: O(1), one round trip.
    public func sizeInBytes() async throws -> Int {
        let logger = self.logger
        return try await withConnection { connection, _ in
            let rows = try await connection.query("SELECT pg_database_size(current_database())", logger: logger)
            for try await size in rows.decode(Int.self) { return size }
            return 0
        }
    }
}
