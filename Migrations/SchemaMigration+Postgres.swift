extension SchemaMigration {
    /// Every PostgreSQL migration (`Migrations/postgres/*.sql`), in the order they apply. Version 1
    /// is the schema that SQLite's versions 1 to 3 make, version 2 SQLite's version 4, version 3 its
    /// version 5, version 4 its version 6, version 5 its version 7, version 6 its version 8, version 7
    /// its version 9, version 8 its version 10, version 9 its version 11, version 10 its version 14, version 11
    /// its version 15.
    package static let postgres: [SchemaMigration] = [
        SchemaMigration(
            version: 1, name: "v0001_postgres_initial.sql", bytes: PackageResources.v0001_postgres_initial_sql,
            formerChecksums: ["60fcdaa7e2b26acbf51ad44ec0f5340fcbad0aae6c995ccdfb83fa4162685b08"]),
        SchemaMigration(version: 2, name: "v0002_postgres_stored_snapshots.sql", bytes: PackageResources.v0002_postgres_stored_snapshots_sql),
        SchemaMigration(version: 3, name: "v0003_postgres_push_identity.sql", bytes: PackageResources.v0003_postgres_push_identity_sql),
        SchemaMigration(version: 4, name: "v0004_postgres_store_feed.sql", bytes: PackageResources.v0004_postgres_store_feed_sql),
        SchemaMigration(version: 5, name: "v0005_postgres_replica_sets.sql", bytes: PackageResources.v0005_postgres_replica_sets_sql),
        SchemaMigration(version: 6, name: "v0006_postgres_push_retention.sql", bytes: PackageResources.v0006_postgres_push_retention_sql),
        SchemaMigration(version: 7, name: "v0007_postgres_deleted_sections.sql", bytes: PackageResources.v0007_postgres_deleted_sections_sql),
        SchemaMigration(version: 8, name: "v0008_postgres_list_identity.sql", bytes: PackageResources.v0008_postgres_list_identity_sql),
        SchemaMigration(version: 9, name: "v0009_postgres_paged_sync.sql", bytes: PackageResources.v0009_postgres_paged_sync_sql),
        SchemaMigration(version: 10, name: "v0010_postgres_staging_lists.sql", bytes: PackageResources.v0010_postgres_staging_lists_sql),
        SchemaMigration(version: 11, name: "v0011_postgres_blobs.sql", bytes: PackageResources.v0011_postgres_blobs_sql),
        SchemaMigration(version: 12, name: "v0012_postgres_blob_use.sql", bytes: PackageResources.v0012_postgres_blob_use_sql),
    ]

    /// The SQL text's statements, in order: the text split after each semicolon that ends a line
    /// (the migration files are written so), without comment-only or blank pieces.
    package var statements: [String] {
        var statements: [String] = []
        var current = ""
        for line in sql.split(separator: "\n", omittingEmptySubsequences: false) {
            current += line + "\n"
            if line.trimmingSuffixSpaces.hasSuffix(";") {
                statements.append(current)
                current = ""
            }
        }
        statements.append(current)
        return statements.filter { statement in
            statement.split(separator: "\n").contains { line in
                let text = line.drop { $0 == " " }
                return !text.isEmpty && !text.hasPrefix("--")
            }
        }
    }
}

extension Substring {
    fileprivate var trimmingSuffixSpaces: Substring {
        var text = self
        while let last = text.last, last == " " || last == "\t" || last == "\r" { text.removeLast() }
        return text
    }
}
