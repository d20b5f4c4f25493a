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
        try Store.mapErrors(path: path) {
            try pool.writeWithoutTransaction { db in
                _ = try db.checkpoint(.restart)
            }
        }
    }
}
