// A stored snapshot of a list's head written from its rows in pieces, for a commit that holds the
// head's contents nowhere else (a replayed entry, a merged push) on an engine that writes in pieces
// (SQLite): a replica of a million-element list stores one without holding the list.

extension StoreTransaction {
    /// Stores the head of the list `list` (row `listID`), just written at `version` with `digest`, as
    /// its newest stored snapshot: its records are read from the rows a run of `copyRun` at a time,
    /// twice (the document's length, then its pieces, for
    /// `insertStoredSnapshot(version:listID:count:document:)`); the document is the bytes
    /// `ListSnapshot.documentJSON` writes for the same head.
    /// - Complexity: O(records + their bytes), holding one run of records at a time (on engines that
    ///   write a value in pieces).
    func insertStoredSnapshotReadingRows(of list: String, listID: Int64, version: Int, digest: ListDigest) throws {
        func document(_ write: ([UInt8]) throws -> Void) throws {
            var writer = _SectionsWriter.snapshotDocument(list: list, version: version, digest: digest)
            try forEachHeadRun(listID: listID, runs: Self.copyRun) { run, last in
                for (_, record) in run { writer.add(record) }
                if last { writer.finish() }
                try write(writer.take())
                return true
            }
        }
        var count = 0
        try document { count += $0.count }
        try insertStoredSnapshot(version: version, listID: listID, count: count, document: document)
    }
}
