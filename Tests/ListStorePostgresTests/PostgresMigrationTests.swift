import Foundation
import ListStore
import ListStorePostgres
import ListStorePostgresTestSupport
import ListStoreTestSupport
import PostgresNIO
import Testing

/// Fails in CI when the PostgreSQL tests would be skipped; says they were skipped elsewhere.
@Suite struct PostgresEnvironmentTests {
    @Test func postgresTestsRunInCI() {
        guard PostgresTestEnvironment.url == nil else { return }
        if PostgresTestEnvironment.inCI {
            Issue.record("PostgreSQL tests must run in CI, but LISTSTORE_TEST_POSTGRES is not set (.ci/run starts a throwaway cluster)")
        } else {
            print("ListStorePostgresTests: \(PostgresTestEnvironment.skipped)")
        }
    }

    @Test func unreachableServerIsAnIOError() async throws {
        var configuration = try PostgresStore.Configuration(url: "postgres://postgres@127.0.0.1:1/liststore")
        configuration.openTimeout = .seconds(2)
        let error = await #expect(throws: StoreError.self) { try await PostgresStore(configuration: configuration) }
        #expect(error?.code == .io)
    }

    /// A refused connection or a name that does not resolve fails the open at once, with the
    /// reason, instead of after the open timeout (postgres-nio's pool retries a refused connection).
    @Test(.timeLimit(.minutes(2))) func aRefusedOrUnknownServerFailsAtOnce() async throws {
        for url in ["postgres://postgres@127.0.0.1:1/liststore", "postgres://postgres@no-such-host.invalid/liststore"] {
            var configuration = try PostgresStore.Configuration(url: url)
            // Only a refusal answered at once ends the open within the test's time limit.
            configuration.openTimeout = .seconds(3600)
            let error = await #expect(throws: StoreError.self) { try await PostgresStore(configuration: configuration) }
            #expect(error?.code == .io)
            #expect(error?.message.contains(url.contains("invalid") ? "no-such-host.invalid" : "refused") == true, "\(error.map { "\($0)" } ?? "")")
        }
    }

    /// A database or role the server does not have fails the open at once with the server's own
    /// refusal, instead of "no answer" after the open timeout (the pool retries a refused session).
    @Test(.timeLimit(.minutes(2))) func aMissingDatabaseOrRoleFailsAtOnceWithTheServersReason() async throws {
        guard let base = PostgresTestEnvironment.url, var components = URLComponents(string: base) else { return }
        let suffix = String(UInt32.random(in: 0...UInt32.max), radix: 36)
        var missingDatabase = components
        missingDatabase.path = "/liststore_missing_\(suffix)"
        components.user = "nobody_\(suffix)"
        for (url, reason) in [(missingDatabase.string!, "does not exist"), (components.string!, "nobody_\(suffix)")] {
            var configuration = try PostgresStore.Configuration(url: url)
            // Only a refusal answered at once ends the open within the test's time limit.
            configuration.openTimeout = .seconds(3600)
            let error = await #expect(throws: StoreError.self) { try await PostgresStore(configuration: configuration) }
            #expect(error?.code == .io)
            #expect(error?.message.contains(reason) == true, "\(error.map { "\($0)" } ?? "")")
        }
    }

    @Test func urlsAreParsed() throws {
        let configuration = try PostgresStore.Configuration(url: "postgresql://ana:p%40ss@db.example:6543/lists?sslmode=disable")
        #expect(configuration.postgres.host == "db.example")
        #expect(configuration.postgres.port == 6543)
        #expect(configuration.postgres.username == "ana")
        #expect(configuration.postgres.password == "p@ss")
        #expect(configuration.postgres.database == "lists")
        let socket = try PostgresStore.Configuration(url: "postgres://postgres@/liststore?host=/tmp/pg")
        #expect(socket.postgres.unixSocketPath == "/tmp/pg/.s.PGSQL.5432")
        for bad in ["mysql://x@y/z", "postgres:///nohost", "postgres://a@b/c?sslmode=sometimes"] {
            #expect(throws: StoreError.self) { try PostgresStore.Configuration(url: bad) }
        }
    }
}

// Skipped, with this comment, when LISTSTORE_TEST_POSTGRES is not set.
@Suite(.serialized, .enabled(if: PostgresTestEnvironment.url != nil, Comment(rawValue: PostgresTestEnvironment.reason)))
struct PostgresMigrationTests {
    @Test func freshDatabaseIsMigratedAndRecorded() async throws {
        try await PostgresTestDatabase.withFresh { database in
            let identity = try await database.withStore { store in
                #expect(try await store.lists().isEmpty)
                return try await store.identity()
            }
            #expect(identity.epoch == 1)
            #expect(identity.uuid.count == 36)
            let record = try await database.withSQL { client in
                var rows: [String] = []
                for try await (version, name, checksum) in try await client.query(
                    "SELECT version::bigint, name, checksum FROM schema_migration ORDER BY version", logger: database.configuration.logger
                ).decode((Int, String, String).self) {
                    rows.append("\(version) \(name) \(checksum.count)")
                }
                return rows
            }
            #expect(record == [
                "1 v0001_postgres_initial.sql 64", "2 v0002_postgres_stored_snapshots.sql 64", "3 v0003_postgres_push_identity.sql 64",
                "4 v0004_postgres_store_feed.sql 64", "5 v0005_postgres_replica_sets.sql 64",
                "6 v0006_postgres_push_retention.sql 64", "7 v0007_postgres_deleted_sections.sql 64",
                "8 v0008_postgres_list_identity.sql 64", "9 v0009_postgres_paged_sync.sql 64",
                "10 v0010_postgres_staging_lists.sql 64", "11 v0011_postgres_blobs.sql 64",
                "12 v0012_postgres_blob_use.sql 64",
            ])
            #expect(PostgresStore.schemaVersion == 12)
        }
    }

    /// A tool that only reads does not turn an empty database into a store.
    @Test func anEmptyDatabaseOpenedWithoutCreatingIsNotFoundAndUntouched() async throws {
        try await PostgresTestDatabase.withFresh { database in
            var configuration = database.configuration
            configuration.createsStore = false
            await expectError(.storeNotFound) { try await PostgresStore(configuration: configuration) }
            let tables = try await database.withSQL { client in
                try await client.query(
                    "SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = current_schema()", logger: database.configuration.logger
                ).collect().first?.decode(Int.self)
            }
            #expect(tables == 0)
            // Once a store, it opens either way.
            _ = try await database.withStore { try await $0.identity() }
            let store = try await PostgresStore(configuration: configuration)
            #expect(try await store.lists().isEmpty)
            await store.close()
        }
    }

    @Test func reopeningChangesNothing() async throws {
        try await PostgresTestDatabase.withFresh { database in
            let first = try await database.withStore { try await $0.identity() }
            let second = try await database.withStore { try await $0.identity() }
            #expect(first == second)
            #expect(try await count("schema_migration", database) == PostgresStore.schemaVersion)
            #expect(try await count("store", database) == 1)
        }
    }

    @Test func storesOpeningAtOnceMigrateOnce() async throws {
        try await PostgresTestDatabase.withFresh { database in
            let identities = try await withThrowingTaskGroup(of: StoreIdentity.self) { group in
                for _ in 0..<4 {
                    group.addTask { try await database.withStore { try await $0.identity() } }
                }
                return try await group.reduce(into: Set<StoreIdentity>()) { $0.insert($1) }
            }
            #expect(identities.count == 1)
            #expect(try await count("schema_migration", database) == PostgresStore.schemaVersion)
            #expect(try await count("store", database) == 1)
        }
    }

    @Test func newerSchemaIsRefusedUntouched() async throws {
        try await PostgresTestDatabase.withFresh { database in
            _ = try await database.withStore { try await $0.identity() }
            let future = PostgresStore.schemaVersion + 1
            try await sql(
                "INSERT INTO schema_migration VALUES (\(future), 'v9999_future.sql', 'abc', '2030-01-01T00:00:00.000Z')", database)
            let error = await #expect(throws: StoreError.self) { try await database.open() }
            #expect(error?.code == .unsupportedSchema)
            #expect(error?.message.contains("newer than this release supports") == true)
            #expect(try await count("schema_migration", database) == future)
        }
    }

    @Test func changedMigrationIsRefused() async throws {
        try await PostgresTestDatabase.withFresh { database in
            _ = try await database.withStore { try await $0.identity() }
            try await sql("UPDATE schema_migration SET checksum = repeat('0', 64) WHERE version = 1", database)
            let error = await #expect(throws: StoreError.self) { try await database.open() }
            #expect(error?.code == .unsupportedSchema)
            #expect(error?.message.contains("differs") == true)
        }
    }

    /// A store migrated by a release whose migration file differed in comments only (it recorded
    /// that text's checksum) opens, and keeps its record.
    @Test func aFormerTextOfAMigrationIsTheSameMigration() async throws {
        try await PostgresTestDatabase.withFresh { database in
            _ = try await database.withStore { try await $0.commit(linearList(2), to: "l") }
            let former = "60fcdaa7e2b26acbf51ad44ec0f5340fcbad0aae6c995ccdfb83fa4162685b08"
            try await sql("UPDATE schema_migration SET checksum = '\(former)' WHERE version = 1", database)
            #expect(try await database.withStore { try await $0.summary(of: "l").version } == 1)
            #expect(try await count("schema_migration", database) == PostgresStore.schemaVersion)
        }
    }

    @Test func databaseOfAnotherApplicationIsRefusedUntouched() async throws {
        try await PostgresTestDatabase.withFresh { database in
            try await sql("CREATE TABLE invoices (id BIGINT PRIMARY KEY)", database)
            let error = await #expect(throws: StoreError.self) { try await database.open() }
            #expect(error?.code == .notAStore)
            #expect(try await count("pg_catalog.pg_tables WHERE schemaname = 'public'", database) == 1)
        }
    }
}

/// The number of rows of `table` (or of `table WHERE …`).
func count(_ table: String, _ database: PostgresTestDatabase) async throws -> Int {
    try await database.withSQL { client in
        let rows = try await client.query(PostgresQuery(unsafeSQL: "SELECT count(*) FROM \(table)"), logger: database.configuration.logger)
        for try await count in rows.decode(Int.self) { return count }
        return 0
    }
}

/// Runs one SQL statement on the database.
func sql(_ statement: String, _ database: PostgresTestDatabase) async throws {
    try await database.withSQL { client in
        _ = try await client.query(PostgresQuery(unsafeSQL: statement), logger: database.configuration.logger)
    }
}
