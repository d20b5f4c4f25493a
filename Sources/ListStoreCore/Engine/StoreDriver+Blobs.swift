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
        do {
            guard (0...uploaded).contains(offset) else {
                throw StoreError(
                    .invalidArgument,
                    "the upload of blob \(reference.id) to list '\(list)' sent \(uploaded) bytes: it resumes at byte \(uploaded) or before, not \(offset)")
            }
            // An upload that starts here hashes the bytes as they come; one that resumes reads every
            // part back for the hash once it is whole (each part was checked against the part the
            // store has as it came), so an upload in many parts reads its bytes back once, not at each.
            var hasher: SHA256? = uploaded == 0 ? SHA256() : nil
            // The stream's bytes before those the upload sent are passed over.
            var (skip, next) = (uploaded - offset, uploaded)
            var pending = [UInt8]()
            pending.reserveCapacity(min(partSize, size - next))
            /// Writes the part pending; `false` when the list has the blob now (another upload of it
            /// to the list ended first).
            func write() async throws -> Bool {
                let (start, part) = (next, pending)
                // Made durable by the upload's last write, which acknowledges it.
                switch try await run(.writeBytes, { try $0.steps.writeBlobPart(hash, listID: listID, start: start, bytes: part) }) {
                case .written:
                    hasher?.update(data: part)
                    next += part.count
                case .sentAlready(let received):
                    // Another upload of the blob to the list is ahead, with the same bytes: this one
                    // passes over what it sent (and reads the blob back for the hash).
                    hasher = nil
                    (skip, next) = (received - (start + part.count), received)
                case .listHasBlob:
                    return false
                case .wrongBytes:
                    throw StoreError(
                        .invalidArgument,
                        "the bytes from byte \(start) are not those of blob \(reference.id) the store has: they are not the blob's, and nothing of them was kept")
                }
                pending.removeAll(keepingCapacity: true)
                return true
            }
            for try await piece in bytes {
                var rest = piece[...]
                while !rest.isEmpty {
                    if skip > 0 {
                        let passed = min(skip, rest.count)
                        (rest, skip) = (rest.dropFirst(passed), skip - passed)
                        continue
                    }
                    let taken = rest.prefix(partSize - pending.count)
                    guard next + pending.count + taken.count <= size else {
                        try await run(.write) { try $0.steps.giveUpBlobUpload(hash, listID: listID) }
                        throw StoreError(.invalidArgument, "blob \(reference.id) has \(size) bytes, and more came: they are not its bytes, and nothing of them was kept")
                    }
                    pending += taken
                    rest = rest.dropFirst(taken.count)
                    if pending.count == partSize, try await !write() { return stored }
                }
            }
            // The bytes ended early (an upload in parts): the whole parts stay, and it resumes after them.
            guard next + pending.count == size else {
                // What the status tells is flushed first (the parts were not).
                try await run(.write) { try $0.steps.flushBlobUpload(hash, listID: listID) }
                return BlobStatus(hash: hash, size: size, uploaded: next, isStored: false)
            }
            if !pending.isEmpty, try await !write() { return stored }
            if hasher == nil {
                if try await blob(hash, of: list)?.isStored == true { return stored }
                var whole = SHA256()
                for start in stride(from: 0, to: size, by: partSize) { whole.update(data: try await part(hash, at: start)) }
                hasher = whole
            }
            let made = hasher!.finalize().withUnsafeBytes { ContentHash(bytes: $0)! }
            guard made == hash else {
                try await run(.write) { try $0.steps.giveUpBlobUpload(hash, listID: listID) }
                throw StoreError(
                    .invalidArgument,
                    "the bytes' SHA-256 is \(BlobReference.id(of: made)), not \(reference.id): they are not the blob's, and nothing of them was kept")
            }
            try await run(.write) { try $0.steps.endBlobUpload(hash, size: size, list: list, listID: listID) }
            return stored
        } catch let error as StoreError where error.code == .storageFull {
            // A full disk ends the upload: its parts would hold the room the disk needs. They go
            // unless another upload of the blob goes on, in the room the store keeps (SQLite); if
            // the disk has none even for that, a prune gives the upload up after a week idle.
            let left = (try? await run(.write) { try $0.steps.leaveBlobUpload(hash, listID: listID) }) != nil
            throw StoreError(
                .storageFull,
                error.message
                    + (left
                        ? "; the upload of blob \(reference.id) to list '\(list)' was given up: send it again once there is room"
                        : "; the upload of blob \(reference.id) to list '\(list)' keeps the parts it sent"))
        }
    }

    /// The part of blob `hash` that starts at `start`, which an upload sent.
    private func part(_ hash: ContentHash, at start: Int) async throws -> [UInt8] {
        guard let part = try await run(.readBytes, { try $0.steps.blobPart(hash, start: start) }) else {
            throw StoreError.blobUploadGivenUp(hash)
        }
        return part
    }

    public func readBlob(_ hash: ContentHash, of list: String, from offset: Int, maxBytes: Int) async throws -> [UInt8] {
        try await run(.readBytes) { try $0.steps.readBlob(hash, of: list, from: offset, maxBytes: min(maxBytes, _BlobParts.maxRead)) }
    }

    @_spi(Replication) public func touchBlob(_ hash: ContentHash, of list: String) async throws {
        // A use that a crash loses only makes the blob's bytes go a little sooner.
        try await run(.writeUnflushed) { try $0.steps.touchBlob(hash, of: list) }
    }

    @_spi(Replication) public func trimBlobs(of list: String, toBytes budget: Int) async throws -> BlobCacheTrim {
        try await run(.write) { try $0.steps.trimBlobs(of: list, toBytes: budget) }
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
    /// - Throws: as `storeBlob(_:to:from:startingAt:)`; `StoreError` `.invalidArgument` when
    ///   `bytes` are not as many as the reference's size.
    @discardableResult
    public func storeBlob(_ reference: BlobReference, to list: String, bytes: [UInt8]) async throws -> BlobStatus {
        guard bytes.count == reference.size else {
            throw StoreError(.invalidArgument, "blob \(reference.id) has \(reference.size) bytes, not \(bytes.count)")
        }
        return try await storeBlob(reference, to: list, from: _OnePiece(bytes: bytes), startingAt: 0)
    }
}

/// An async sequence of one piece of bytes.
package struct _OnePiece: AsyncSequence, Sendable {
    package typealias Element = [UInt8]
    let bytes: [UInt8]

    package init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    package struct AsyncIterator: AsyncIteratorProtocol {
        var bytes: [UInt8]?
        package mutating func next() async -> [UInt8]? {
            defer { bytes = nil }
            return bytes
        }
    }

    package func makeAsyncIterator() -> AsyncIterator { AsyncIterator(bytes: bytes) }
}
