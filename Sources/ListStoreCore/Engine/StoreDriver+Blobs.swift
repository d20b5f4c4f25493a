import Crypto

extension StoreDriver {
    public func blob(_ hash: ContentHash, of list: String) async throws -> BlobStatus? {
        try await run(.read) { try $0.steps.blobStatus(hash, of: list) }
    }

    @discardableResult
    public func storeBlob<Bytes: AsyncSequence>(_ reference: BlobReference, to list: String, from bytes: Bytes, startingAt offset: Int) async throws
        -> BlobStatus where Bytes.Element == [UInt8]
    {
        let (hash, size, partSize) = (reference.hash, reference.size, _BlobParts.partSize)
        let stored = BlobStatus(hash: hash, size: size, uploaded: size, isStored: true)
        guard let (listID, uploaded) = try await run(.write, { try $0.steps.beginBlobUpload(reference, to: list) }) else { return stored }
        guard (0...uploaded).contains(offset) else {
            throw StoreError(
                .invalidArgument,
                "the upload of blob \(reference.id) to list '\(list)' sent \(uploaded) bytes: it resumes at byte \(uploaded) or before, not \(offset)")
        }
        // The bytes the upload sent before `offset` are read back (the store checked them against
        // the parts as they came): the whole parts into the hash, the rest of the last into the
        // part being gathered.
        var hasher = SHA256()
        var next = _BlobParts.start(of: offset)
        for start in stride(from: 0, to: next, by: partSize) {
            hasher.update(data: try await part(hash, at: start))
        }
        var pending = [UInt8]()
        pending.reserveCapacity(min(partSize, size - next))
        if offset > next { pending += try await part(hash, at: next)[..<(offset - next)] }
        // Whether a part written by another upload of the blob holds other bytes than these.
        var otherBytes = false
        func write() async throws {
            let (start, part) = (next, pending)
            if try await !run(.write, { try $0.steps.writeBlobPart(hash, listID: listID, start: start, bytes: part) }) { otherBytes = true }
            hasher.update(data: pending)
            next += pending.count
            pending.removeAll(keepingCapacity: true)
        }
        for try await piece in bytes {
            var rest = piece[...]
            while !rest.isEmpty {
                let taken = rest.prefix(partSize - pending.count)
                guard next + pending.count + taken.count <= size else {
                    throw StoreError(.invalidArgument, "blob \(reference.id) has \(size) bytes, and more came: they are not its bytes")
                }
                pending += taken
                rest = rest.dropFirst(taken.count)
                if pending.count == partSize { try await write() }
            }
        }
        guard next + pending.count == size else {
            throw StoreError(
                .invalidArgument, "blob \(reference.id) has \(size) bytes, and the bytes ended after \(next + pending.count): the upload resumes at byte \(next)")
        }
        if !pending.isEmpty { try await write() }
        let made = hasher.finalize().withUnsafeBytes { ContentHash(bytes: $0)! }
        let verified = made == hash && !otherBytes
        try await run(.write) { try $0.steps.endBlobUpload(hash, listID: listID, verified: verified) }
        guard verified else {
            throw StoreError(
                .invalidArgument,
                made == hash
                    ? "another upload of blob \(reference.id) wrote other bytes, and was given up with this one: upload it again"
                    : "the bytes' SHA-256 is \(BlobReference.id(of: made)), not \(reference.id): they are not the blob's, and nothing of them was kept")
        }
        return stored
    }

    /// The part of blob `hash` that starts at `start`, which an upload sent.
    private func part(_ hash: ContentHash, at start: Int) async throws -> [UInt8] {
        guard let part = try await run(.read, { try $0.steps.blobPart(hash, start: start) }) else {
            throw StoreError(
                .invalidArgument, "the upload of blob \(BlobReference.id(of: hash)) was given up (an upload of it failed its hash): upload it again")
        }
        return part
    }

    public func readBlob(_ hash: ContentHash, of list: String, from offset: Int, maxBytes: Int) async throws -> [UInt8] {
        try await run(.read) { try $0.steps.readBlob(hash, of: list, from: offset, maxBytes: min(maxBytes, _BlobParts.maxRead)) }
    }
}

extension ListStoreEngine {
    /// Uploads the bytes of the blob `reference` names to `list`, all of them
    /// (`storeBlob(_:to:from:startingAt:)` from byte 0).
    ///
    /// ```swift
    /// let photo = BlobReference(of: jpeg, type: "image/jpeg")
    /// try await store.storeBlob(photo, to: "inbox", bytes: jpeg)
    /// ```
    /// - Throws: as `storeBlob(_:to:from:startingAt:)`.
    @discardableResult
    public func storeBlob(_ reference: BlobReference, to list: String, bytes: [UInt8]) async throws -> BlobStatus {
        try await storeBlob(reference, to: list, from: _OnePiece(bytes: bytes), startingAt: 0)
    }
}

/// An async sequence of one piece of bytes.
package struct _OnePiece: AsyncSequence, Sendable {
    package typealias Element = [UInt8]
    let bytes: [UInt8]

    package struct AsyncIterator: AsyncIteratorProtocol {
        var bytes: [UInt8]?
        package mutating func next() async -> [UInt8]? {
            defer { bytes = nil }
            return bytes
        }
    }

    package func makeAsyncIterator() -> AsyncIterator { AsyncIterator(bytes: bytes) }
}
