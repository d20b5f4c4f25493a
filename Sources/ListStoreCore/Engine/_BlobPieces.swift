/// The bytes of blob `hash` of `list` in `store` from byte `offset` on, as an async sequence of
/// pieces of at most `pieceSize` bytes, each read from the store when it is asked for: a blob goes
/// somewhere (an answer, an upload to another store, a file) a piece in memory at a time.
///
/// Not API: package-visible for the server, the sync client and the command line.
package struct _BlobPieces: AsyncSequence, Sendable {
    package typealias Element = [UInt8]
    let read: @Sendable (_ offset: Int, _ maxBytes: Int) async throws -> [UInt8]
    let range: Range<Int>
    let pieceSize: Int

    /// The bytes `range` of a blob, read with `read(offset, maxBytes)` (a store's or a source's
    /// `readBlob`), `pieceSize` at a time.
    package init(range: Range<Int>, pieceSize: Int = _BlobParts.partSize, read: @escaping @Sendable (_ offset: Int, _ maxBytes: Int) async throws -> [UInt8]) {
        self.read = read
        self.range = range
        self.pieceSize = pieceSize
    }

    package struct AsyncIterator: AsyncIteratorProtocol {
        let pieces: _BlobPieces
        var next: Int

        package mutating func next() async throws -> [UInt8]? {
            guard next < pieces.range.upperBound else { return nil }
            let piece = try await pieces.read(next, Swift.min(pieces.pieceSize, pieces.range.upperBound - next))
            guard !piece.isEmpty else {
                throw StoreError(.damaged, "the blob ended at byte \(next), before byte \(pieces.range.upperBound)")
            }
            next += piece.count
            return piece
        }
    }

    package func makeAsyncIterator() -> AsyncIterator { AsyncIterator(pieces: self, next: range.lowerBound) }
}
