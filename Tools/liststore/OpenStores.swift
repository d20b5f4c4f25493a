import Foundation
import ListStore

/// Every store a command opened, closed before the process ends.
///
/// The process ends with `exit`, which runs no deinitializers; a task that still held a store then
/// would leave the file's `-wal` and `-shm` beside it. Closing each store first removes them, so a
/// command leaves behind exactly the files it meant to.
enum OpenStores {
    private static let opened = _OpenedList()

    /// Opens the store at `path` (see `Store.init(path:)`) and remembers it.
    /// - Throws: `CommandFailure` with the exit code of the store's error.
    static func open(_ path: String) throws -> Store {
        let store = try StoreFailure.mapping { try Store(path: path) }
        opened.append(store)
        return store
    }

    /// Closes every store opened so far; one that is still in use stays open.
    static func closeAll() {
        for store in opened.takeAll() { try? store.close() }
    }

    private final class _OpenedList: @unchecked Sendable {
        // Safe: `stores` is only read and written under `lock`.
        private var stores: [Store] = []
        private let lock = NSLock()

        func append(_ store: Store) { lock.withLock { stores.append(store) } }

        func takeAll() -> [Store] {
            lock.withLock {
                defer { stores = [] }
                return stores
            }
        }
    }
}
