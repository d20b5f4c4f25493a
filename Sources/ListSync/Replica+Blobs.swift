import ListJSON
import ListMerge
@_spi(Replication) import ListStore
@_spi(Replication) import ListStoreCore

extension Replica {
    /// Makes the replica hold the bytes of the blob `reference` names, which its list refers to:
    /// at once when it holds them, otherwise fetched from the source's list a few MiB at a time
    /// (`progress` hears the bytes held so far and the size after each piece), hashed as they
    /// come, and kept in the replica, where `store.readBlob` reads them. A fetch cut off resumes
    /// where it stopped. Either way the blob is the one the replica used last, which
    /// `trimBlobCache(to:)` drops after every other.
    ///
    /// ```swift
    /// let photo = try BlobReference.references(in: element.content)[0]
    /// try await replica.fetchBlob(photo, from: source) { received, size in print("\(received) of \(size)") }
    /// let jpeg = try await replica.store.readBlob(photo.hash, of: replica.list, from: 0, maxBytes: photo.size)
    /// ```
    /// - Returns: the blob's status in the replica (`BlobStatus.isStored`).
    /// - Throws: `SyncError.refused` when the list follows no source or `source` is not its own;
    ///   `StoreError.missingBlob` when the source's list does not have the blob's bytes;
    ///   `StoreError.invalidArgument` when the bytes are not the reference's (nothing of them is
    ///   kept); what either store throws.
    /// - Complexity: the bytes the replica lacks, in requests of 4 MiB.
    @discardableResult
    public func fetchBlob(
        _ reference: BlobReference, from source: some ListSource, progress: (@Sendable (_ received: Int, _ size: Int) -> Void)? = nil
    ) async throws -> BlobStatus {
        let here = try await store.blob(reference.hash, of: list)
        if let here, here.isStored {
            // A use is a hint for trimming: a store that cannot write it (opened read-only, or
            // busy) still answers.
            try? await store.touchBlob(reference.hash, of: list)
            return here
        }
        guard let position = try await position() else { throw SyncError.refused("list '\(list)' follows no source: it has no blob to fetch") }
        try await checkIsSource(source, of: position, sourceList: position.list)
        let (size, from) = (reference.size, here?.size == reference.size ? here?.uploaded ?? 0 : 0)
        let (hash, sourceList) = (reference.hash, position.list)
        progress?(from, size)
        let bytes = _BlobPieces(range: from..<size, pieceSize: HTTPSource.blobPieceBytes) { offset, count in
            let piece = try await source.readBlob(hash, of: sourceList, from: offset, maxBytes: count)
            progress?(offset + piece.count, size)
            return piece
        }
        return try await store.storeBlob(BlobReference(hash: hash, size: size), to: list, from: bytes, startingAt: from)
    }

    /// Drops the bytes of the source's blobs the replica holds, the ones it used longest ago first
    /// (a fetch is a use), until it holds at most `maxBytes` of them: an app's photo cache, not its
    /// data. Only blobs that the source's contents referred to (as pulled) go, and not one a change
    /// waiting to be pushed refers to, so nothing the source lacks goes: a photo stored here for a
    /// change to come stays until a pull brings the source's version that refers to it. A dropped
    /// blob is fetched again when it is shown (`fetchBlob(_:from:progress:)`).
    ///
    /// ```swift
    /// // When the app goes to the background: keep at most 200 MB of photos.
    /// let trim = try await replica.trimBlobCache(to: 200_000_000)
    /// print("\(trim.droppedBytes) bytes dropped, \(trim.heldBytes) held")
    /// ```
    /// - Returns: what was dropped, and how many bytes the replica's blobs still hold (above
    ///   `maxBytes` only when changes waiting to be pushed need them).
    /// - Throws: `StoreError.listNotFound` for a list the store does not have; `SyncError.refused`
    ///   when the list follows no source (its blobs are its own);
    ///   `StoreError.invalidArgument` for a negative `maxBytes`; what the store throws.
    /// - Complexity: O(the blobs the replica holds + its changes not pushed yet), in one
    ///   transaction.
    @discardableResult
    public func trimBlobCache(to maxBytes: Int) async throws -> BlobCacheTrim {
        guard try await position() != nil else {
            _ = try await store.summary(of: list)
            throw SyncError.refused("list '\(list)' follows no source: its blobs are its own, not a cache")
        }
        return try await store.trimBlobs(of: list, toBytes: maxBytes)
    }

    /// Uploads to the source's list the blobs that the contents `push` brings refer to and that
    /// it does not have, from this replica's bytes (those `storeBlob` put in the local list),
    /// resuming an upload the source has under way: what a push sends before the change, so that
    /// the source does not refuse it (409 `missingBlob`). A blob whose bytes the replica does not
    /// hold either is left to the source, which refuses the change if its list lacks it.
    /// - Throws: what the source's `blob` and `storeBlob` throw (the change stays pending).
    /// - Complexity: one request per blob referred to, and the bytes of those the source lacks.
    func uploadBlobs(of push: Push, to source: some ListSource, sourceList: String) async throws {
        for reference in try push.blobReferences() {
            let there = try await source.blob(reference.hash, of: sourceList)
            if there?.isStored == true { continue }
            guard let here = try await store.blob(reference.hash, of: list), here.isStored, let size = here.size else { continue }
            // An upload that sent every byte but did not end (its server stopped before) is
            // ended by sending its last part again.
            let from = there?.size == size ? min(there?.uploaded ?? 0, _BlobParts.start(of: max(0, size - 1))) : 0
            let (store, list, hash) = (store, list, reference.hash)
            let bytes = _BlobPieces(range: from..<size, pieceSize: _BlobParts.partSize) { offset, count in
                try await store.readBlob(hash, of: list, from: offset, maxBytes: count)
            }
            try await source.storeBlob(BlobReference(hash: hash, size: size), to: sourceList, from: bytes, startingAt: from)
        }
    }
}

extension Push {
    /// The blobs that the contents this push brings (inserted and updated) refer to, each once,
    /// in the order they first appear.
    /// - Throws: `StoreError.invalidSnapshot` for an object with the key `"$blob"` that is not a
    ///   blob reference.
    func blobReferences() throws -> [BlobReference] {
        try _BlobMentions.references(in: intents)
    }
}
