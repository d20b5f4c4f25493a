/// One schema migration: a `Migrations/*.sql` file embedded in the code at build time.
///
/// Not API: the store applies these in order and records each one with its checksum.
package struct SchemaMigration: Sendable {
    /// The schema version this migration produces (1, 2, 3, …).
    package var version: Int
    /// The file name, e.g. `v0001_initial.sql`.
    package var name: String
    /// The SQL text.
    package var sql: String

    /// Every migration, in the order they apply.
    package static let all: [SchemaMigration] = [
        SchemaMigration(version: 1, name: "v0001_initial.sql", bytes: PackageResources.v0001_initial_sql),
        SchemaMigration(version: 2, name: "v0002_sync.sql", bytes: PackageResources.v0002_sync_sql),
        SchemaMigration(version: 3, name: "v0003_offline.sql", bytes: PackageResources.v0003_offline_sql),
        SchemaMigration(version: 4, name: "v0004_stored_snapshots.sql", bytes: PackageResources.v0004_stored_snapshots_sql),
        SchemaMigration(version: 5, name: "v0005_push_identity.sql", bytes: PackageResources.v0005_push_identity_sql),
    ]

    init(version: Int, name: String, bytes: [UInt8]) {
        self.version = version
        self.name = name
        self.sql = String(decoding: bytes, as: UTF8.self)
    }
}
