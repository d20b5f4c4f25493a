import Foundation
import ListStore
import ListStorePostgres

/// Every store a command opened, closed before the process ends.
///
/// The process ends with `exit`, which runs no deinitializers; a task that still held a store then
/// would leave the file's `-wal` and `-shm` beside it, or a PostgreSQL session open until the
/// server notices. Closing each store first removes them, so a command leaves behind exactly the
/// files it meant to.
enum OpenStores {
    private static let opened = _Locked([Store]())
    private static let databases = _Locked([PostgresStore]())

    /// Opens the store at `path` (see `Store.init(path:)`) and remembers it.
    /// - Throws: `CommandFailure` with the exit code of the store's error.
    static func open(_ path: String) async throws -> Store {
        let store = try await StoreFailure.mapping { try Store(path: path) }
        opened.withLock { $0.append(store) }
        return store
    }

    /// Connects to the PostgreSQL store at `url` (see `PostgresStore.init(configuration:)`) and
    /// remembers it; unless `creating`, a database without tables is `.storeNotFound` (66) and is
    /// left untouched.
    /// - Throws: `CommandFailure` with the exit code of the store's error.
    static func open(postgres url: String, creating: Bool) async throws -> PostgresStore {
        let store = try await StoreFailure.mapping {
            var configuration = try PostgresStore.Configuration(url: url)
            configuration.createsStore = creating
            return try await PostgresStore(configuration: configuration)
        }
        databases.withLock { $0.append(store) }
        return store
    }

    /// Closes every store opened so far; a file store that is still in use stays open.
    static func closeAll() async {
        let stores = opened.withLock { opened in
            defer { opened = [] }
            return opened
        }
        for store in stores { try? store.close() }
        let databases = databases.withLock { databases in
            defer { databases = [] }
            return databases
        }
        for store in databases { await store.close() }
    }
}
