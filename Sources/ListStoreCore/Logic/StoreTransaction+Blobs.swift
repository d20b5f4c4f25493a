import Crypto
import ListJSON

/// How a store keeps blobs' bytes: in parts of `partSize`, each part written once (the parts of a
/// blob are the same bytes whoever uploads them).
///
/// Not API: package-visible for the engines.
package enum _BlobParts {
    /// The bytes of a part (the last part of a blob may hold fewer): what an upload or a read holds
    /// in memory at once.
    package static let partSize = 1 << 20

    /// The most bytes one read of a blob answers (`readBlob`).
    package static let maxRead = 16 << 20

    /// The part that holds byte `offset`, by its first byte.
    package static func start(of offset: Int) -> Int { offset - offset % partSize }
}

extension StoreTransaction {
    /// The blob `hash` as list `list` has it (`nil`: the list neither has it nor uploads it).
    /// - Throws: `StoreError` `.listNotFound`.
    package func blobStatus(_ hash: ContentHash, of list: String) throws -> BlobStatus? {
        let info = try listRow(list, locking: false)
        let row = try blobRow(hash)
        if try !listBlobs(listID: info.id, among: [hash]).isEmpty {
            let whole = row?.whole ?? false
            return BlobStatus(hash: hash, size: row?.size, uploaded: whole ? row!.size : 0, isStored: whole)
        }
        guard let uploaded = try blobUpload(listID: info.id, hash: hash) else { return nil }
        return BlobStatus(hash: hash, size: row?.size, uploaded: uploaded, isStored: false)
    }

    /// Starts (or resumes) the upload of the blob `reference` names to `list`: makes the blob's row
    /// when the store has none, and the list's upload when it has none under way. Returns the list's
    /// row id and how many bytes its upload sent (the next byte it takes); `nil` when the list has
    /// the blob already.
    /// - Throws: `StoreError` `.listNotFound`; `.invalidArgument` when the store has the blob with
    ///   another size (one of the two sizes is not the bytes').
    package func beginBlobUpload(_ reference: BlobReference, to list: String) throws -> (listID: Int64, uploaded: Int)? {
        let info = try listRow(list, locking: true)
        try insertBlob(reference.hash, size: reference.size)
        if let size = try blobRow(reference.hash)?.size, size != reference.size {
            throw StoreError(.invalidArgument, "blob \(reference.id) has \(size) bytes, not \(reference.size): its size is not \(reference.size)")
        }
        if try !listBlobs(listID: info.id, among: [reference.hash]).isEmpty, try blobRow(reference.hash)?.whole == true { return nil }
        if let uploaded = try blobUpload(listID: info.id, hash: reference.hash) { return (info.id, uploaded) }
        try setBlobUpload(listID: info.id, hash: reference.hash, received: 0)
        return (info.id, 0)
    }

    /// Writes the part of blob `hash` that starts at `start` for the upload to list `listID`, which
    /// then sent `start + bytes.count` bytes; a part written already (by another upload of the same
    /// blob) is kept as it is. Whether the part now holds `bytes`.
    /// - Throws: `StoreError` `.invalidArgument` when the upload is no longer under way (another
    ///   upload of the blob failed its hash and took every upload of it with it).
    package func writeBlobPart(_ hash: ContentHash, listID: Int64, start: Int, bytes: [UInt8]) throws -> Bool {
        guard try blobUpload(listID: listID, hash: hash) != nil else {
            throw StoreError(
                .invalidArgument, "the upload of blob \(BlobReference.id(of: hash)) was given up (an upload of it failed its hash): upload it again")
        }
        let same = try insertBlobPart(hash, start: start, bytes: bytes) || blobPart(hash, start: start) == bytes
        try setBlobUpload(listID: listID, hash: hash, received: start + bytes.count)
        return same
    }

    /// Ends the upload of blob `hash` to list `listID`: with `verified` (every byte sent, their
    /// hash `hash`, every part holding them), the list has the blob and the blob is whole;
    /// otherwise the upload goes, and unless the blob is whole, so do its row, its parts and every
    /// other upload of it (parts another upload wrote may not be its bytes).
    package func endBlobUpload(_ hash: ContentHash, listID: Int64, verified: Bool) throws {
        if verified {
            try markBlobWhole(hash)
            try insertListBlobs(listID: listID, hashes: [hash])
            try setBlobUpload(listID: listID, hash: hash, received: nil)
        } else if try blobRow(hash)?.whole == true {
            try setBlobUpload(listID: listID, hash: hash, received: nil)
        } else {
            try deleteBlob(hash)
        }
    }

    /// The bytes of blob `hash` of `list` from `offset`, at most `maxBytes` (fewer only at the end).
    /// - Throws: `StoreError` `.listNotFound`; `.missingBlob` when the list does not have the blob,
    ///   or the store does not hold its bytes; `.invalidArgument` for an offset past its end;
    ///   `.damaged` for a part that is not there.
    package func readBlob(_ hash: ContentHash, of list: String, from offset: Int, maxBytes: Int) throws -> [UInt8] {
        let info = try listRow(list, locking: false)
        guard try !listBlobs(listID: info.id, among: [hash]).isEmpty, let row = try blobRow(hash), row.whole else {
            throw StoreError(.missingBlob, "list '\(list)' has no blob \(BlobReference.id(of: hash))")
        }
        guard (0...row.size).contains(offset) else {
            throw StoreError(.invalidArgument, "blob \(BlobReference.id(of: hash)) has \(row.size) bytes: there is no byte \(offset)")
        }
        let end = min(row.size, offset + max(0, maxBytes))
        var bytes = [UInt8]()
        bytes.reserveCapacity(end - offset)
        var start = _BlobParts.start(of: offset)
        while start < end {
            guard let part = try blobPart(hash, start: start) else {
                throw StoreError(.damaged, "the store at \(location) is damaged: blob \(BlobReference.id(of: hash)) has no part at byte \(start)")
            }
            bytes += part[max(offset, start) - start..<min(part.count, end - start)]
            start += _BlobParts.partSize
        }
        return bytes
    }

    /// Takes in the blobs the contents a commit brings refer to (`references`), for list `listID`:
    /// with `checking` (a commit or push of this store's), each must be one the list has, with the
    /// size the store holds; otherwise (the source's entries a replica takes) the list has them
    /// from now on, whether or not the store holds their bytes.
    /// - Throws: `StoreError` `.missingBlob` naming the first the list does not have,
    ///   `.invalidSnapshot` for a reference that gives another size than the blob's.
    /// - Complexity: O(references), in bounded queries.
    package func takeBlobReferences(_ references: [BlobReference], listID: Int64, list: String, checking: Bool) throws {
        guard !references.isEmpty else { return }
        let hashes = Set(references.map(\.hash))
        guard checking else { return try insertListBlobs(listID: listID, hashes: hashes) }
        let has = try listBlobs(listID: listID, among: hashes)
        if let missing = references.first(where: { !has.contains($0.hash) }) {
            throw StoreError(
                .missingBlob, "list '\(list)' has no blob \(missing.id): upload it to the list before a content refers to it")
        }
        var sizes = [ContentHash: Int]()
        for reference in references {
            if sizes[reference.hash] == nil { sizes[reference.hash] = try blobRow(reference.hash)?.size ?? reference.size }
            guard sizes[reference.hash] == reference.size else {
                throw StoreError(
                    .invalidSnapshot, "a reference to blob \(reference.id) gives \(reference.size) bytes; the blob has \(sizes[reference.hash]!)")
            }
        }
    }

    /// What is wrong with the blobs of list `listID`, whose head holds `sections`, if anything: a
    /// blob a content of the head refers to that the list does not have; a blob the list has whose
    /// bytes are not all in the store (except in a replica list: its bytes may be at its source),
    /// or do not hash to it. One part in memory at a time.
    /// - Complexity: O(head contents + the bytes of the list's blobs).
    package func blobProblem(listID: Int64, head sections: [ListSection], replica: Bool) throws -> String? {
        let has = Set(try listBlobs(listID: listID))
        for item in sections.lazy.flatMap({ [$0.model] + $0.elements }) {
            let content = item.content
            guard BlobReference.mayAppear(in: content) else { continue }
            for reference in try BlobReference.references(in: try JSONParser(maxDepth: JSONParser.maxContentDepth).parse(content)) where !has.contains(reference.hash) {
                return "item '\(item.id)' refers to blob \(reference.id), which the list does not have"
            }
        }
        for hash in has.sorted(by: { $0.bytes.lexicographicallyPrecedes($1.bytes) }) {
            let id = BlobReference.id(of: hash)
            guard let row = try blobRow(hash), row.whole else {
                if replica { continue }
                return "the list has blob \(id), and the store does not hold its bytes"
            }
            var hasher = SHA256()
            for start in stride(from: 0, to: row.size, by: _BlobParts.partSize) {
                guard let part = try blobPart(hash, start: start), part.count == min(_BlobParts.partSize, row.size - start) else {
                    return "blob \(id) of \(row.size) bytes has no part of the right size at byte \(start)"
                }
                hasher.update(data: part)
            }
            if hasher.finalize().withUnsafeBytes({ ContentHash(bytes: $0)! }) != hash { return "the bytes of blob \(id) do not hash to it" }
        }
        return nil
    }

    /// Takes every blob from list `listID`, and deletes those no other list has or uploads.
    package func releaseBlobs(listID: Int64) throws {
        let hashes = try deleteListBlobs(listID: listID)
        for hash in try unclaimedBlobs(among: hashes) { try deleteBlob(hash) }
    }
}
