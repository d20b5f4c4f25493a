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

    /// Once the write-ahead log has grown past 4 MiB, copies it back into the database file on a
    /// background thread through a connection of its own: a passive checkpoint takes no write lock,
    /// so neither this commit nor the next one waits for it. SQLite's own automatic checkpoint stays
    /// as a backstop at 10,000 pages. The copy runs on a serial dispatch queue of its own (one per
    /// process), never on Swift's cooperative thread pool.
    func checkpointIfLarge() {
        var info = stat()
        guard stat(path + "-wal", &info) == 0, info.st_size > 4 << 20 else { return }
        let start = state.withLock { state -> Bool in
            if state.checkpointing { return false }
            state.checkpointing = true
            return true
        }
        guard start else { return }
        let path = self.path
        let state = self.state
        Store.checkpoints.async {
            defer { state.withLock { $0.checkpointing = false } }
            // A store closed meanwhile is not opened again (a file deleted or restored meanwhile
            // is not made again): `close()` waits for a checkpoint that started before.
            guard state.withLock({ $0.pool != nil }) else { return }
            var configuration = GRDB.Configuration()
            configuration.journalMode = .default
            guard let queue = try? DatabaseQueue(path: path, configuration: configuration) else { return }
            _ = try? queue.writeWithoutTransaction { db in try db.checkpoint(.passive) }
            try? queue.close()
        }
    }

    /// The size to which the first commit after a checkpoint cuts a larger write-ahead log back
    /// (`journal_size_limit`): 64 MiB, above SQLite's own checkpoint at 10,000 pages (40 MiB), so
    /// that the log of ordinary work (commits and blobs' parts, checkpointed in the background or
    /// at 10,000 pages) is overwritten rather than cut and grown again (a limit of 4 MiB made
    /// uploads about a tenth slower, one of 16 MiB a few hundredths), and only a larger write (a
    /// bulk import, an upload whose parts outran the checkpoints) gives its room back.
    static let logKeptBytes = 64 << 20

    /// Where background checkpoints run, one after another.
    private static let checkpoints = DispatchQueue(label: "ListStore.checkpoint", qos: .utility)

    /// Returns once the background checkpoints queued before the call have run.
    static func waitForCheckpoints() {
        checkpoints.sync {}
    }
}
