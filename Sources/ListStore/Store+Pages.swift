import GRDB
@_spi(StoreDriver) import ListStoreCore

// Paged reads of a SQLite store stay at their version while commits land: the first page of a
// list larger than one page is read in a snapshot connection (GRDB's `DatabaseSnapshot`, a read
// transaction kept open in the write-ahead log's mode), which the pages after it read too.

extension Store {
    /// A page of `list` (`ListStoreEngine.page(of:at:after:maxBytes:)`), read in a snapshot of the
    /// store while its version is pinned: pages stay at their version while commits land, as long
    /// as the reader goes on within a minute of its last page (and ten of its first), and while at
    /// most eight versions are being read at once.
    /// - Throws: as `ListStoreEngine.page(of:at:after:maxBytes:)`.
    /// - Complexity: that of a page; the first of a version not being read yet opens a connection.
    public func page(of list: String, at version: Int?, after cursor: ListPage.Cursor?, maxBytes: Int) async throws -> ListPage {
        try await page(
            of: list, at: version, after: cursor, maxBytes: maxBytes, pins: pins,
            pin: {
                let pool = try await existingPool()
                return try await onFiles { try Store.mapErrors(path: self.path) { try pool.makeSnapshot() } }
            },
            reading: { snapshot, body in try await reading(in: snapshot) { try body($0) } })
    }
}
