import Foundation
import GRDB

extension Store {
    /// Copies every committed page from the write-ahead log (`<path>-wal`) back into the store file,
    /// waiting for readers that still use the log; the next commit writes the log from its start
    /// (the file keeps its size up to 64 MiB, so that commits overwrite it rather than grow it, and
    /// is cut back to 64 MiB when a larger write grew it).
    ///
    /// Commits do this on their own: in the background each time the log has grown by about 4 MiB,
    /// and on the committing connection past 10,000 pages, as SQLite does. Call it when the
    /// store file alone must hold everything (before copying the file elsewhere), or after a bulk
    /// import, so that the next commits do not share the machine with a large background copy.
    /// This store's versions kept for paged reads are let go first (those reads start again at the
    /// head); those another `Store` or process keeps hold the checkpoint until they go or the busy
    /// timeout passes.
    ///
    /// ```swift
    /// try store.commit(everything, to: "catalog")
    /// try store.checkpoint()   // the store file alone now holds the import
    /// ```
    ///
    /// - Throws: `StoreError` `.storeNotFound`, `.notAStore`, `.unsupportedSchema`, `.io` (for example
    ///   when a reader holds the log past the busy timeout), `.storageFull` (the file cannot grow).
    /// - Complexity: O(pages in the log).
    public func checkpoint() throws {
        let pool = try existingPool()
        // The snapshots paged reads keep would hold the log: they go (those reads start again).
        pins.removeAll()
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
