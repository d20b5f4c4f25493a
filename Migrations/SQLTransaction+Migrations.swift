import Foundation
import ListStoreCore

// The migration runner of both SQL engines: the record check (`SchemaMigration.pending`), making a
// store in an empty database, and applying what a release adds, in the transaction the engine
// opened (SQLite's `IMMEDIATE` one; PostgreSQL's, under an advisory lock that servers starting at
// once take in turn).

extension SQLTransaction {
    /// This engine's migrations: `Migrations/*.sql` on SQLite, `Migrations/postgres/*.sql` on
    /// PostgreSQL.
    package var knownMigrations: [SchemaMigration] { dialect == .postgres ? SchemaMigration.postgres : SchemaMigration.all }

    /// The database's migration record; `nil` when it has none.
    package func recordedMigrations() throws -> [SchemaMigration.Recorded]? {
        let exists = switch dialect {
        case .sqlite: "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migration'"
        case .postgres: "SELECT to_regclass('schema_migration') IS NOT NULL"
        }
        guard try row(exists)?.bool(0) == true else { return nil }
        return try rows("SELECT version, name, checksum FROM schema_migration ORDER BY version", []).map { row in
            SchemaMigration.Recorded(version: try row.int(0), name: try row.string(1), checksum: try row.string(2))
        }
    }

    /// The migrations this release adds to the store, in order (none when it is current).
    /// - Throws: `StoreError` `.notAStore` when the database has no migration record;
    ///   `.unsupportedSchema` when the record names a migration this release does not have, or one
    ///   whose checksum differs (`SchemaMigration.pending(after:in:at:)`).
    package func pendingMigrations() throws -> ArraySlice<SchemaMigration> {
        guard let recorded = try recordedMigrations() else { throw notAStore(tables: nil) }
        return try SchemaMigration.pending(after: recorded, in: knownMigrations, at: "the store \(location)")
    }

    /// Applies the migrations this release adds; in a database without tables, makes the store
    /// first (its migration record, its schema, its identity).
    /// - Parameter creating: whether an empty database becomes a store (otherwise
    ///   `.storeNotFound`).
    /// - Throws: as `pendingMigrations()`; `.notAStore` for a database with tables and no record;
    ///   `.storeNotFound`. Nothing is written when it throws before its first statement.
    package func migrate(creating: Bool) throws {
        let creates = try recordedMigrations() == nil
        if creates {
            let tables = switch dialect {
            case .sqlite: "SELECT count(*) FROM sqlite_master WHERE type = 'table'"
            case .postgres: "SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = current_schema()"
            }
            let count = try row(tables)?.int(0) ?? 0
            guard count == 0 else { throw notAStore(tables: count) }
            guard creating else {
                throw StoreError(.storeNotFound, "no store in \(location) (the database has no tables); it was left untouched")
            }
            try run(
                """
                CREATE TABLE schema_migration (
                    version INTEGER PRIMARY KEY, name TEXT NOT NULL, checksum TEXT NOT NULL, applied_at TEXT NOT NULL)
                """, [])
        }
        let now = _Time.iso8601(Date())
        for migration in try pendingMigrations() {
            for statement in migration.statements { try run(statement, []) }
            try run(
                "INSERT INTO schema_migration (version, name, checksum, applied_at) VALUES (?, ?, ?, ?)",
                [SQLValue(migration.version), .text(migration.name), .text(migration.checksum), .text(now)])
            if dialect == .sqlite {
                // What SQLite's own tools show of the schema's version.
                try run("PRAGMA user_version = \(migration.version)", [])
            }
        }
        if creates {
            // The store's identity is made with its schema.
            try run(
                "INSERT INTO store (id, uuid, epoch, created_at, client_id, feed_secret) VALUES (1, ?, 1, ?, ?, ?)",
                [
                    .text(UUID().uuidString.lowercased()), .text(now), .text(UUID().uuidString.lowercased()),
                    .text(_Hex.string((0..<32).map { _ in UInt8.random(in: 0...255) })),
                ])
        }
    }

    private func notAStore(tables: Int?) -> StoreError {
        StoreError(
            .notAStore,
            "\(location) holds \(tables.map { "\($0) tables but " } ?? "")no ListStore migration record, so it is not a ListStore store; it was left untouched")
    }
}
