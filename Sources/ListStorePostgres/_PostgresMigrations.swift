import Foundation
import ListStoreCore
import ListStoreMigrations
import PostgresNIO

/// Applies `Migrations/postgres/*.sql` and checks the migration record, as `Store` does for SQLite.
enum _PostgresMigrations {
    /// The advisory lock that migrations hold ("LIST"): servers starting at once migrate one by one.
    static let lockKey: Int64 = 0x4C49_5354

    /// Checks the migration record and applies what this release adds, in one transaction under
    /// the advisory lock; on a database with no tables, creates the store (record, schema, identity).
    ///
    /// - Throws: `StoreError` `.notAStore` (tables but no migration record), `.unsupportedSchema` (a
    ///   recorded version this release does not have, or one whose name or checksum differs).
    ///   Nothing is written when it throws.
    static func migrate(_ store: PostgresStore) async throws {
        let known = SchemaMigration.postgres
        let location = store.location
        let logger = store.logger
        try await store.transaction(.writing) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(lockKey))", logger: logger)
            let recorded = try await record(connection, store)
            if recorded == nil {
                let tables = try await connection.query(
                    "SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = current_schema()", logger: logger
                ).collect()
                let count = try tables.first?.decode(Int.self) ?? 0
                guard count == 0 else {
                    throw StoreError(
                        .notAStore,
                        "\(location) holds \(count) tables but no ListStore migration record, so it is not a ListStore database; it was left untouched")
                }
                guard store.createsStore else {
                    throw StoreError(.storeNotFound, "no store in \(location) (the database has no tables); it was left untouched")
                }
                try await connection.query(
                    """
                    CREATE TABLE schema_migration (
                        version INTEGER PRIMARY KEY, name TEXT NOT NULL, checksum TEXT NOT NULL, applied_at TEXT NOT NULL)
                    """, logger: logger)
            }
            for migration in try SchemaMigration.pending(after: recorded ?? [], in: known, at: location) {
                for statement in migration.statements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.query(
                    """
                    INSERT INTO schema_migration (version, name, checksum, applied_at)
                    VALUES (\(migration.version), \(migration.name), \(migration.checksum), \(unescaped: _PostgresTime.now))
                    """, logger: logger)
                if migration.version == 1 {
                    // The store's identity is made with its schema.
                    try await connection.query(
                        """
                        INSERT INTO store (id, uuid, epoch, created_at, client_id)
                        VALUES (1, \(UUID().uuidString.lowercased()), 1, \(unescaped: _PostgresTime.now), \(UUID().uuidString.lowercased()))
                        """, logger: logger)
                }
            }
        }
    }

    /// The recorded migrations, or `nil` when the database has no migration record.
    private static func record(
        _ connection: PostgresConnection, _ store: PostgresStore
    ) async throws -> [SchemaMigration.Recorded]? {
        let exists = try await connection.query(
            "SELECT to_regclass('schema_migration') IS NOT NULL", logger: store.logger
        ).collect()
        guard try exists.first?.decode(Bool.self) == true else { return nil }
        var rows: [SchemaMigration.Recorded] = []
        let sequence = try await connection.query(
            "SELECT version::bigint, name, checksum FROM schema_migration ORDER BY version", logger: store.logger)
        for try await (version, name, checksum) in sequence.decode((Int, String, String).self) {
            rows.append(SchemaMigration.Recorded(version: version, name: name, checksum: checksum))
        }
        return rows
    }
}
