import Foundation
import GRDB

extension Store {
    /// Copies every committed page from the write-ahead log (`<path>-wal`) back into the store file,
    /// waiting for readers that still use the log; the next commit writes the log from its start
    /// (the file keeps its size, so that commits overwrite it rather than grow it).
    ///
    /// Commits do this on their own, in the background, once the log passes 4 MiB; call it when the
    /// store file alone must hold everything (before copying the file elsewhere), or after a bulk
    /// import, so that the next commits do not share the machine with a large background copy.
    ///
    /// ```swift
    /// try store.commit(everything, to: "catalog")
    /// try store.checkpoint()   // the store file alone now holds the import
    /// ```
    ///
    /// - Throws: `StoreError` `.storeNotFound`, `.notAStore`, `.unsupportedSchema`, `.io` (for example
    ///   when a reader holds the log past the busy timeout).
    /// - Complexity: O(pages in the log).
    public func checkpoint() throws {
        let pool = try existingPool()
        // SQLite refuses a second checkpointer (the store's own background one) at once, without
        // calling the busy handler: wait for it as for any lock, up to the busy timeout.
        let deadline = ContinuousClock.now + .seconds(configuration.busyTimeout)
        try Store.mapErrors(path: path) {
            while true {
                do {
                    return try pool.writeWithoutTransaction { db in
                        _ = try db.checkpoint(.restart)
                    }
                } catch let error as DatabaseError
                    where [.SQLITE_BUSY, .SQLITE_LOCKED].contains(error.resultCode) && ContinuousClock.now < deadline
                {
                    Thread.sleep(forTimeInterval: 0.01)
                }
            }
        }
    }
}
