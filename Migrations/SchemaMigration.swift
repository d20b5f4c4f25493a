import Crypto
import ListStoreCore

/// One migration file of `Migrations/` (SQLite) or `Migrations/postgres/` (PostgreSQL).
package struct SchemaMigration: Sendable {
    /// The schema version this migration produces (1, 2, 3, …).
    package var version: Int
    /// The file name, e.g. `v0001_initial.sql`.
    package var name: String
    /// The SQL text.
    package var sql: String
    /// The checksums of the file's earlier texts, which differ from this one in comments only: a
    /// store migrated by an earlier release recorded one of them, and is the same store.
    package var formerChecksums: Set<String>

    /// Every migration, in the order they apply.
    package static let all: [SchemaMigration] = [
        SchemaMigration(version: 1, name: "v0001_initial.sql", bytes: PackageResources.v0001_initial_sql),
        SchemaMigration(version: 2, name: "v0002_sync.sql", bytes: PackageResources.v0002_sync_sql),
        SchemaMigration(
            version: 3, name: "v0003_offline.sql", bytes: PackageResources.v0003_offline_sql,
            formerChecksums: ["132b93d5dd35f39f06111ab51bea39df4800f1ecaa45deae008262b193d17d1b"]),
        SchemaMigration(
            version: 4, name: "v0004_stored_snapshots.sql", bytes: PackageResources.v0004_stored_snapshots_sql,
            formerChecksums: ["8aa24e54d92576af66a45d2bba828265cf37fc1abe34de207ed55b71598a7687"]),
        SchemaMigration(
            version: 5, name: "v0005_push_identity.sql", bytes: PackageResources.v0005_push_identity_sql,
            formerChecksums: ["c440ffb0790d90651d4ccd297f21216c008395aaaa0adaa3f35a700d42cd1acf"]),
        SchemaMigration(version: 6, name: "v0006_store_feed.sql", bytes: PackageResources.v0006_store_feed_sql),
        SchemaMigration(version: 7, name: "v0007_replica_sets.sql", bytes: PackageResources.v0007_replica_sets_sql),
        SchemaMigration(version: 8, name: "v0008_push_retention.sql", bytes: PackageResources.v0008_push_retention_sql),
        SchemaMigration(version: 9, name: "v0009_deleted_sections.sql", bytes: PackageResources.v0009_deleted_sections_sql),
        SchemaMigration(version: 10, name: "v0010_list_identity.sql", bytes: PackageResources.v0010_list_identity_sql),
        SchemaMigration(version: 11, name: "v0011_paged_sync.sql", bytes: PackageResources.v0011_paged_sync_sql),
        SchemaMigration(version: 12, name: "v0012_large_rows.sql", bytes: PackageResources.v0012_large_rows_sql),
        SchemaMigration(version: 13, name: "v0013_element_records.sql", bytes: PackageResources.v0013_element_records_sql),
        SchemaMigration(version: 14, name: "v0014_staging_lists.sql", bytes: PackageResources.v0014_staging_lists_sql),
        SchemaMigration(version: 15, name: "v0015_blobs.sql", bytes: PackageResources.v0015_blobs_sql),
        SchemaMigration(version: 16, name: "v0016_blob_use.sql", bytes: PackageResources.v0016_blob_use_sql),
    ]

    init(version: Int, name: String, bytes: [UInt8], formerChecksums: Set<String> = []) {
        self.version = version
        self.name = name
        self.sql = String(decoding: bytes, as: UTF8.self)
        self.formerChecksums = formerChecksums
    }

    /// What a store records of this migration: the SHA-256 of its SQL text, lowercase hex.
    package var checksum: String {
        SHA256.hash(data: Array(sql.utf8)).map { byte in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }.joined()
    }

    /// One row of a store's migration record.
    package struct Recorded: Sendable {
        package var version: Int
        package var name: String
        package var checksum: String

        package init(version: Int, name: String, checksum: String) {
            self.version = version
            self.name = name
            self.checksum = checksum
        }
    }

    /// The migrations of `known` that a store whose migration record is `recorded` has still to
    /// apply, in order. The one rule of both engines: every recorded migration must be one of
    /// `known`, by version, name and checksum (this text's or a former one's).
    ///
    /// ```swift
    /// let pending = try SchemaMigration.pending(after: rows, in: SchemaMigration.all, at: path)
    /// ```
    /// - Throws: `StoreError` `.unsupportedSchema` for a recorded version this release does not
    ///   have (a newer release migrated the store) or one whose name or checksum differs; the store
    ///   is left untouched.
    /// - Complexity: O(recorded + known).
    package static func pending(after recorded: [Recorded], in known: [SchemaMigration], at location: String) throws
        -> ArraySlice<SchemaMigration>
    {
        for row in recorded {
            guard row.version >= 1, row.version <= known.count else {
                throw StoreError(
                    .unsupportedSchema,
                    "\(location) has schema version \(row.version) (\(row.name)), newer than this release supports (\(known.count)); it was left untouched")
            }
            let migration = known[row.version - 1]
            guard row.name == migration.name, row.checksum == migration.checksum || migration.formerChecksums.contains(row.checksum)
            else {
                throw StoreError(
                    .unsupportedSchema,
                    "the migration \(row.version) (\(row.name)) of \(location) differs from this release's \(migration.name); it was left untouched")
            }
        }
        let applied = recorded.map(\.version).max() ?? 0
        return known[min(applied, known.count)...]
    }
}
