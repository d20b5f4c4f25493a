import Foundation
import ListStore

/// Every store a command opened, closed before the process ends.
///
/// The process ends with `exit`, which runs no deinitializers; a task that still held a store then
/// would leave the file's `-wal` and `-shm` beside it. Closing each store first removes them, so a
/// command leaves behind exactly the files it meant to.
enum OpenStores {
    private static let opened = _Locked([Store]())

    /// Opens the store at `path` (see `Store.init(path:)`) and remembers it.
    /// - Throws: `CommandFailure` with the exit code of the store's error.
    static func open(_ path: String) throws -> Store {
        let store = try StoreFailure.mapping { try Store(path: path) }
        opened.withLock { $0.append(store) }
        return store
    }

    /// Closes every store opened so far; one that is still in use stays open.
    static func closeAll() {
        let stores = opened.withLock { opened in
            defer { opened = [] }
            return opened
        }
        for store in stores { try? store.close() }
    }
}
