import ListStore
import ListStorePostgres
import ListStoreTestSupport
import Testing

/// An engine the contract suite runs on.
public enum EngineKind: String, CustomTestStringConvertible, Sendable {
    case sqlite
    case postgres
    case memory

    public var testDescription: String { rawValue }

    /// SQLite and memory always; PostgreSQL when `LISTSTORE_TEST_POSTGRES` names a server (in CI it
    /// must: `PostgresEnvironmentTests` fails without it).
    public static let available: [EngineKind] = PostgresTestEnvironment.url == nil ? [.sqlite, .memory] : [.sqlite, .postgres, .memory]

    /// Runs `body` with `handles` handles on one new, empty store of this engine (two handles reach
    /// the same data as two processes would), closed afterwards.
    public func withStore<T: Sendable>(handles: Int = 1, _ body: ([any ReplicaStore]) async throws -> T) async throws -> T {
        switch self {
        case .sqlite:
            let directory = try TemporaryDirectory()
            let path = directory.file("contract.liststore")
            let stores = try (0..<handles).map { _ in try Store(path: path) }
            defer { for store in stores { try? store.close() } }
            return try await body(stores)
        case .memory:
            // Several references to one in-memory store are several handles on it.
            let store = InMemoryStore()
            return try await body(Array(repeating: store, count: handles))
        case .postgres:
            return try await PostgresTestDatabase.withFresh { database in
                var stores: [PostgresStore] = []
                do {
                    for _ in 0..<handles { stores.append(try await database.open()) }
                    let value = try await body(stores)
                    for store in stores { await store.close() }
                    return value
                } catch {
                    for store in stores { await store.close() }
                    throw error
                }
            }
        }
    }
}
