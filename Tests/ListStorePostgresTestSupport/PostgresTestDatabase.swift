#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import ListStore
import ListStorePostgres
import Logging
import PostgresNIO

/// Where the PostgreSQL tests run: the server named by `LISTSTORE_TEST_POSTGRES`
/// (`Tools/throwaway-postgres start` prints one; `.ci/run` exports it). Without it the tests are
/// skipped, except in CI (`CI=true`), where `PostgresEnvironmentTests` fails.
public enum PostgresTestEnvironment {
    /// The URL of a database on the server, whose user may create databases.
    public static let url: String? = ProcessInfo.processInfo.environment["LISTSTORE_TEST_POSTGRES"].flatMap { $0.isEmpty ? nil : $0 }
    /// Whether this is a CI run, where the PostgreSQL tests must run.
    public static let inCI = ProcessInfo.processInfo.environment["CI"] == "true"
    /// Why the tests are skipped.
    public static let reason =
        "LISTSTORE_TEST_POSTGRES is not set (to run them: export LISTSTORE_TEST_POSTGRES=$(Tools/throwaway-postgres start))"
    /// What a skipped run says.
    public static let skipped = "skipped: " + reason
}

/// A database of its own for one test: created with a random name on the test server, dropped
/// (with its connections) when the test is done.
public struct PostgresTestDatabase: Sendable {
    /// The name of the database.
    public let name: String
    /// The configuration that reaches it.
    public let configuration: PostgresStore.Configuration
    /// Its URL (the test server's, with this database's name).
    public let url: String

    /// Runs `body` with a new, empty database whose tables live in `directory` (made here, empty):
    /// a tablespace there, dropped with the database afterwards. The server must run on this
    /// machine; as root, the directory is given to the `postgres` user the server runs as.
    public static func withFresh<T: Sendable>(inDirectory directory: String, _ body: (PostgresTestDatabase) async throws -> T) async throws -> T {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        if getuid() == 0, let owner = getpwnam("postgres") {
            guard chown(directory, owner.pointee.pw_uid, owner.pointee.pw_gid) == 0 else {
                throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: directory])
            }
        }
        let tablespace = "liststore_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        return try await between(
            "tablespace \(tablespace) in \(directory)", create: "CREATE TABLESPACE \(tablespace) LOCATION '\(directory)'",
            drop: "DROP TABLESPACE IF EXISTS \(tablespace)"
        ) { _ in try await withFresh(tablespace: tablespace, body) }
    }

    /// Runs `body` with a new, empty database.
    public static func withFresh<T: Sendable>(_ body: (PostgresTestDatabase) async throws -> T) async throws -> T {
        try await withFresh(tablespace: nil, body)
    }

    /// Runs `body` with a new, empty database, in `tablespace` (the server's default: `nil`).
    private static func withFresh<T: Sendable>(tablespace: String?, _ body: (PostgresTestDatabase) async throws -> T) async throws -> T {
        let name = "liststore_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        return try await between(
            "database \(name)", create: "CREATE DATABASE \(name)" + (tablespace.map { " TABLESPACE \($0)" } ?? ""),
            drop: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"
        ) { admin in
            var configuration = admin
            configuration.postgres.database = name
            // Migrating a fresh database takes a few DDL statements; with every suite starting at
            // once on a small machine it can take longer than the default open timeout, which these
            // tests are not about (PostgresMigrationTests sets its own where it is).
            configuration.openTimeout = .seconds(120)
            // `between` ran only with a URL.
            var components = URLComponents(string: PostgresTestEnvironment.url ?? "")!
            components.path = "/" + name
            return try await body(PostgresTestDatabase(name: name, configuration: configuration, url: components.string!))
        }
    }

    /// Runs `create` on the test server, then `body` with the server's configuration, then `drop`
    /// whatever `body` did; `what` names what they make in their errors.
    private static func between<T: Sendable>(
        _ what: String, create: String, drop: String, _ body: (PostgresStore.Configuration) async throws -> T
    ) async throws -> T {
        guard let url = PostgresTestEnvironment.url else {
            throw StoreError(.invalidArgument, PostgresTestEnvironment.skipped)
        }
        var logger = Logger(label: "ListStorePostgresTests")
        logger.logLevel = .critical
        let admin = try PostgresStore.Configuration(url: url, logger: logger)
        try await telling("creating \(what)") {
            try await withClient(admin) { client in _ = try await client.query(PostgresQuery(unsafeSQL: create), logger: logger) }
        }
        let result: Result<T, any Error>
        do {
            result = .success(try await body(admin))
        } catch {
            result = .failure(error)
        }
        try await telling("dropping \(what)") {
            try await withClient(admin) { client in _ = try await client.query(PostgresQuery(unsafeSQL: drop), logger: logger) }
        }
        return try result.get()
    }

    /// `body`, with a PostgreSQL error it throws told in full (`PSQLError`'s description hides
    /// what the server said), naming `what` was done.
    static func telling(_ what: String, _ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch let error as PSQLError {
            throw StoreError(.io, "\(what): \(String(reflecting: error))")
        }
    }

    /// Opens a store on the database.
    public func open() async throws -> PostgresStore {
        try await PostgresStore(configuration: configuration)
    }

    /// Runs `body` with a store on the database, closed afterwards.
    public func withStore<T: Sendable>(_ body: (PostgresStore) async throws -> T) async throws -> T {
        let store = try await open()
        do {
            let value = try await body(store)
            await store.close()
            return value
        } catch {
            await store.close()
            throw error
        }
    }

    /// Runs `body` with a plain client of the database (for SQL the store does not offer).
    public func withSQL<T: Sendable>(_ body: (PostgresClient) async throws -> T) async throws -> T {
        try await Self.withClient(configuration, body)
    }

    /// Runs `body` with a plain client of the test server's own database (for SQL about this
    /// database that cannot run inside it, such as refusing its connections).
    public func withServerSQL<T: Sendable>(_ body: (PostgresClient) async throws -> T) async throws -> T {
        var logger = Logger(label: "ListStorePostgresTests")
        logger.logLevel = .critical
        guard let url = PostgresTestEnvironment.url else { throw StoreError(.invalidArgument, PostgresTestEnvironment.skipped) }
        return try await Self.withClient(try PostgresStore.Configuration(url: url, logger: logger), body)
    }

    /// Runs `body` with a running client for `configuration`.
    public static func withClient<T: Sendable>(
        _ configuration: PostgresStore.Configuration, _ body: (PostgresClient) async throws -> T
    ) async throws -> T {
        let client = PostgresClient(configuration: configuration.postgres, backgroundLogger: configuration.logger)
        let running = Task { await client.run() }
        defer { running.cancel() }
        let value = try await body(client)
        running.cancel()
        await running.value
        return value
    }
}
