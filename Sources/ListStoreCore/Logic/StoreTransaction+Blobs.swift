import Foundation
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

    /// How long an upload under way may send nothing before a prune of its list gives it up, in
    /// seconds: a week.
    package static let idleUploadLifetime: Double = 7 * 24 * 3600

    /// The part that holds byte `offset`, by its first byte.
    package static func start(of offset: Int) -> Int { offset - offset % partSize }

    /// Whether `part`, the part of a blob of `size` bytes that starts at `start`, is as long as
    /// that part is.
    package static func isWhole(_ part: [UInt8]?, at start: Int, of size: Int) -> Bool {
        part?.count == min(partSize, size - start)
    }
}

/// What became of a part an upload sent (`StoreTransaction.writeBlobPart`).
///
/// Not API: package-visible for the engines.
package enum _BlobPartWrite: Sendable, Equatable {
    /// Written (or found the same in the store): the upload sent the bytes up to the part's end.
    case written
    /// Not the blob's bytes: the upload was given up.
    case wrongBytes
    /// Another upload of the blob to the same list sent the part already, with the same bytes,
    /// and has sent `received` bytes now: this one goes on from there.
    case sentAlready(received: Int)
    /// The list has the blob: another upload of it to the list ended.
    case listHasBlob
}

extension StoreError {
    /// The upload of blob `hash` is no longer under way: another upload of it failed, and gave up
    /// its bytes with its own.
    package static func blobUploadGivenUp(_ hash: ContentHash) -> StoreError {
        StoreError(.uploadGivenUp, "the upload of blob \(BlobReference.id(of: hash)) was given up (another upload of it failed): upload it again")
    }
}

extension StoreTransaction {
    /// The blob `hash` as list `list` has it (`nil`: the list neither has it nor uploads it).
    /// - Throws: `StoreError` `.listNotFound`.
    package func blobStatus(_ hash: ContentHash, of list: String) throws -> BlobStatus? {
        let info = try listRow(list, locking: false)
        let row = try blobRow(hash)
        if try hasUploadedBlob(listID: info.id, hash: hash), let row, row.whole {
            return BlobStatus(hash: hash, size: row.size, uploaded: row.size, isStored: true)
        }
        let uploaded = try blobUpload(listID: info.id, hash: hash)
        let known = try !listBlobs(listID: info.id, among: [hash]).isEmpty
        guard uploaded != nil || known else { return nil }
        return BlobStatus(hash: hash, size: row?.size, uploaded: uploaded ?? 0, isStored: false)
    }

    /// Starts (or resumes) the upload of the blob `reference` names to `list`: makes the blob's row
    /// when the store has none, and the list's upload when it has none under way. Returns the list's
    /// row id and how many bytes its upload sent (the next byte it takes); `nil` when the list has
    /// the blob already. A blob that is not whole yet, of another size, was started by an upload
    /// whose size or bytes were not the blob's, or by this one: it is given up, and this upload
    /// starts it anew (so no upload holds a hash for the others).
    /// - Throws: `StoreError` `.listNotFound`; `.invalidArgument` when the store holds the blob
    ///   whole with another size (the reference's size is not the bytes').
    package func beginBlobUpload(_ reference: BlobReference, to list: String) throws -> (listID: Int64, uploaded: Int)? {
        let info = try listRow(list, locking: true)
        let hash = reference.hash
        try insertBlob(hash, size: reference.size)
        try lockBlob(hash)
        // Made again when a transaction that held the row deleted the blob meanwhile.
        try insertBlob(hash, size: reference.size)
        if let row = try blobRow(hash), row.size != reference.size {
            guard !row.whole else {
                throw StoreError(.invalidArgument, "blob \(reference.id) has \(row.size) bytes, not \(reference.size): its size is not \(reference.size)")
            }
            try deleteBlob(hash)
            try insertBlob(hash, size: reference.size)
        }
        if try hasUploadedBlob(listID: info.id, hash: hash), try blobRow(hash)?.whole == true { return nil }
        if let uploaded = try blobUpload(listID: info.id, hash: hash) {
            // A resumed upload is under way again.
            try setBlobUpload(listID: info.id, hash: hash, received: uploaded, at: _Time.iso8601(Date()))
            return (info.id, uploaded)
        }
        try setBlobUpload(listID: info.id, hash: hash, received: 0, at: _Time.iso8601(Date()))
        return (info.id, 0)
    }

    /// Writes the part of blob `hash` that starts at `start` for the upload to list `listID`, which
    /// then sent `start + bytes.count` bytes; a part written already (by another upload of the same
    /// blob) must hold the same bytes: otherwise this upload goes, and unless the blob is whole
    /// (its parts are then right, and these bytes are not), the blob with every upload of it
    /// (`.wrongBytes`: the transaction is to commit that). Another upload of the blob to the same
    /// list that sent the part already (`.sentAlready`) or ended (`.listHasBlob`) is not an error:
    /// the uploads of one list go on together.
    /// - Throws: `StoreError` `.uploadGivenUp` when the upload is no longer under way (given up
    ///   with its blob by another upload's).
    package func writeBlobPart(_ hash: ContentHash, listID: Int64, start: Int, bytes: [UInt8]) throws -> _BlobPartWrite {
        try lockBlob(hash)
        guard let received = try blobUpload(listID: listID, hash: hash) else {
            if try hasUploadedBlob(listID: listID, hash: hash), try blobRow(hash)?.whole == true { return .listHasBlob }
            throw StoreError.blobUploadGivenUp(hash)
        }
        if received > start {
            guard try blobPart(hash, start: start) == bytes else {
                try giveUpBlobUpload(hash, listID: listID)
                return .wrongBytes
            }
            return .sentAlready(received: received)
        }
        guard received == start else { throw StoreError.blobUploadGivenUp(hash) }
        // A part the store holds already (of a blob it holds whole for another list, or that
        // another list's upload of it wrote) takes no new bytes: it is compared.
        let held = try blobPart(hash, start: start)
        if held == nil { try ensureRoom(forBlobBytes: bytes.count) }
        guard try held == bytes || (held == nil && insertBlobPart(hash, start: start, bytes: bytes)) else {
            try giveUpBlobUpload(hash, listID: listID)
            return .wrongBytes
        }
        try setBlobUpload(listID: listID, hash: hash, received: start + bytes.count, at: _Time.iso8601(Date()))
        return .written
    }

    /// Ends the upload of blob `hash` to list `list` (row `listID`) whose every byte was sent and
    /// hashed to `hash` (each part holding them): the blob is whole, and the list has it (as it
    /// has already when another upload of it to the list ended first).
    /// - Throws: `StoreError` `.uploadGivenUp` when the upload is no longer under way, or its blob
    ///   is not the one it wrote (given up meanwhile); `.listNotFound`.
    package func endBlobUpload(_ hash: ContentHash, size: Int, list: String, listID: Int64) throws {
        // The list's row before the blob's, as every transaction that takes both does.
        guard try listRow(list, locking: true).id == listID else { throw StoreError.blobUploadGivenUp(hash) }
        try lockBlob(hash)
        let received = try blobUpload(listID: listID, hash: hash)
        if received == nil, try hasUploadedBlob(listID: listID, hash: hash), try blobRow(hash)?.whole == true { return }
        guard received == size, try blobRow(hash)?.size == size else { throw StoreError.blobUploadGivenUp(hash) }
        try markBlobWhole(hash)
        try insertListBlobs(listID: listID, hashes: [hash], uploaded: true)
        try touchListBlob(listID: listID, hash: hash)
        try setBlobUpload(listID: listID, hash: hash, received: nil, at: "")
    }

    /// Marks blob `hash` as the one list `list` used last (when the list has it), so that trimming
    /// its blobs drops it after every other.
    /// - Throws: `StoreError` `.listNotFound`.
    package func touchBlob(_ hash: ContentHash, of list: String) throws {
        try touchListBlob(listID: try listRow(list, locking: false).id, hash: hash)
    }

    /// Drops the bytes of the blobs replica list `list` holds that its source's contents referred
    /// to (the source has them), the ones it used longest ago first, until it holds at most
    /// `budget` bytes of those, passing over those its changes not pushed yet refer to (all of them
    /// when what those refer to is unknown): the list has the dropped ones by reference from then
    /// on, as it has its source's blobs before it fetches them, and a blob no other list holds or
    /// uploads goes from the store. A blob uploaded to the list that no content of its source
    /// referred to yet (a photo for a change to come) is never dropped.
    /// - Throws: `StoreError` `.listNotFound`; `.invalidArgument` for a negative budget, or a list
    ///   that follows no source (its blobs are its own, not a cache of its source's).
    /// - Complexity: O(the list's blobs + its changes not pushed yet).
    package func trimBlobs(of list: String, toBytes budget: Int) throws -> BlobCacheTrim {
        guard budget >= 0 else { throw StoreError(.invalidArgument, "a budget of \(budget) bytes: it is 0 or more") }
        let info = try listRow(list, locking: true)
        guard try replicaSource(listID: info.id) != nil else {
            throw StoreError(.invalidArgument, "list '\(list)' follows no source: its blobs are not a cache of a source's, and stay")
        }
        let held = try cachedBlobs(listID: info.id)
        var trim = BlobCacheTrim(droppedBlobs: 0, droppedBytes: 0, heldBytes: held.reduce(0) { $0 + $1.size })
        guard trim.heldBytes > budget else { return trim }
        let pending = try outbox(of: info).map { try? _BlobMentions.references(in: $0.intents) }
        guard !pending.contains(where: { $0 == nil }) else { return trim }
        let needed = Set(pending.flatMap { $0! }.map(\.hash))
        var dropped = Set<ContentHash>()
        for (hash, size) in held where trim.heldBytes > budget && !needed.contains(hash) {
            dropped.insert(hash)
            trim.droppedBlobs += 1
            trim.droppedBytes += size
            trim.heldBytes -= size
        }
        try unholdListBlobs(listID: info.id, hashes: dropped)
        try deleteUnclaimedBlobs(among: dropped)
        return trim
    }

    /// Writes the upload of blob `hash` to list `listID` as it is (when it is still under way), in
    /// a flushed transaction: the parts written before it without a flush of their own are then
    /// durable (`StoreAccess.writeUnflushed`).
    package func flushBlobUpload(_ hash: ContentHash, listID: Int64) throws {
        guard let received = try blobUpload(listID: listID, hash: hash) else { return }
        try setBlobUpload(listID: listID, hash: hash, received: received, at: _Time.iso8601(Date()))
    }

    /// Gives up the upload of blob `hash` to list `listID` (its bytes were not the blob's): the
    /// upload goes, and unless the blob is whole, so do its row, its parts and every other upload
    /// of it (the parts this upload wrote are not the blob's); a whole blob no list has any more
    /// goes too.
    package func giveUpBlobUpload(_ hash: ContentHash, listID: Int64) throws {
        try lockBlob(hash)
        guard try blobRow(hash)?.whole == true else { return try deleteBlob(hash) }
        try setBlobUpload(listID: listID, hash: hash, received: nil, at: "")
        if try !unclaimedBlobs(among: [hash]).isEmpty { try deleteBlob(hash) }
    }

    /// The bytes of blob `hash` of `list` from `offset`, at most `maxBytes` (fewer only at the end).
    /// - Throws: `StoreError` `.listNotFound`; `.missingBlob` when the list does not have the blob,
    ///   or the store does not hold its bytes; `.invalidArgument` for an offset past its end;
    ///   `.damaged` for a part that is not there.
    package func readBlob(_ hash: ContentHash, of list: String, from offset: Int, maxBytes: Int) throws -> [UInt8] {
        let info = try listRow(list, locking: false)
        guard try hasUploadedBlob(listID: info.id, hash: hash), let row = try blobRow(hash), row.whole else {
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
            let part = try blobPart(hash, start: start)
            guard let part, _BlobParts.isWhole(part, at: start, of: row.size) else {
                throw StoreError(.damaged, "the store at \(location) is damaged: blob \(BlobReference.id(of: hash)) has no part of the right size at byte \(start)")
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
        guard checking else { return try insertListBlobs(listID: listID, hashes: hashes, uploaded: false) }
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
        let blobs = try listBlobs(listID: listID)
        let has = Set(blobs.map(\.hash))
        for item in sections.lazy.flatMap({ [$0.model] + $0.elements }) {
            let content = item.content
            guard BlobReference.mayAppear(in: content) else { continue }
            let references = _BlobReferences()
            try _ContentChecks.checkCanonical(content, references: references) { "item '\(item.id)'" }
            for reference in references.all where !has.contains(reference.hash) {
                return "item '\(item.id)' refers to blob \(reference.id), which the list does not have"
            }
        }
        for (hash, uploaded) in blobs {
            let id = BlobReference.id(of: hash)
            guard uploaded else {
                // A replica's list has its source's blobs by reference.
                if replica { continue }
                return "the list has blob \(id) by reference only, and it is not a replica list"
            }
            guard let row = try blobRow(hash), row.whole else { return "the list has blob \(id), and the store does not hold its bytes" }
            var hasher = SHA256()
            for start in stride(from: 0, to: row.size, by: _BlobParts.partSize) {
                let part = try blobPart(hash, start: start)
                guard let part, _BlobParts.isWhole(part, at: start, of: row.size) else {
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
        try deleteUnclaimedBlobs(among: hashes)
    }

    /// Takes from list `info` the blobs that the versions a prune to `base` drops referred to (the
    /// old base snapshot's, and the contents of entries `info.baseVersion+1 ... base`) and that
    /// nothing kept refers to: the snapshot at `base` (`baseDocument`), the entries after it, and
    /// for a replica list its source's state and its changes not pushed yet. Deletes those no other
    /// list has or uploads. A blob no version referred to stays: it was uploaded for a commit still
    /// to come. Returns how many blobs the list no longer has. When what a kept document refers to
    /// is unknown (it does not parse), nothing is released.
    /// - Complexity: nothing read for a list that has no blobs; otherwise O(the list's blobs + the
    ///   bytes of its journal and snapshots that may hold a reference). The entries after `base` are
    ///   read only while a blob may still be released; entries are read a few MiB at a time.
    package func releasePrunedBlobs(of info: ListRow, through base: Int, baseDocument: [UInt8]) throws -> Int {
        // A list without blobs has none to release: its journal is not read.
        guard try !listBlobs(listID: info.id).isEmpty else { return 0 }
        var dropped = info.baseSnapshot.flatMap(_BlobMentions.hashes(inDocument:)) ?? []
        try forEachEntry(of: info, after: info.baseVersion, through: base) { stages in
            dropped.formUnion(_BlobMentions.hashes(inDocument: stages) ?? [])
            return true
        }
        guard !dropped.isEmpty else { return 0 }
        var released = try listBlobs(listID: info.id, among: dropped)
        func keep(_ mentioned: Set<ContentHash>?) -> Bool {
            guard let mentioned else {
                released = []
                return false
            }
            released.subtract(mentioned)
            return !released.isEmpty
        }
        guard keep(_BlobMentions.hashes(inDocument: baseDocument)) else { return 0 }
        if try replicaSource(listID: info.id) != nil {
            guard keep(try confirmedState(listID: info.id).map { _BlobMentions.hashes(inDocument: $0) } ?? []) else { return 0 }
            let pending = try outbox(of: info).map { try? _BlobMentions.references(in: $0.intents) }
            guard keep(pending.contains(where: { $0 == nil }) ? nil : Set(pending.flatMap { $0! }.map(\.hash))) else { return 0 }
        }
        try forEachEntry(of: info, after: base, through: info.headVersion) { keep(_BlobMentions.hashes(inDocument: $0)) }
        guard !released.isEmpty else { return 0 }
        try deleteListBlobs(listID: info.id, among: released)
        try deleteUnclaimedBlobs(among: released)
        return released.count
    }

    /// Ends the upload of blob `hash` to list `listID` without the blob (the store had no room for
    /// it): its parts go unless another list has the blob or uploads it.
    package func leaveBlobUpload(_ hash: ContentHash, listID: Int64) throws {
        try lockBlob(hash)
        try setBlobUpload(listID: listID, hash: hash, received: nil, at: "")
        try deleteUnclaimedBlobs(among: [hash])
    }

    /// Gives up the uploads to list `listID` that sent nothing for `_BlobParts.idleUploadLifetime`
    /// (their clients went away); the parts of a blob that no list has or uploads any more go.
    /// Returns how many were given up.
    /// - Complexity: O(the list's uploads under way).
    package func giveUpIdleBlobUploads(listID: Int64) throws -> Int {
        let cutoff = _Time.iso8601(Date().addingTimeInterval(-_BlobParts.idleUploadLifetime))
        let idle = try idleBlobUploads(listID: listID, before: cutoff)
        for hash in idle { try setBlobUpload(listID: listID, hash: hash, received: nil, at: "") }
        try deleteUnclaimedBlobs(among: Set(idle))
        return idle.count
    }

    /// Calls `body` with the stages of the entries of list `info` `after+1 ... through`, oldest
    /// first, while it answers `true`: read `_BlobParts.maxRead` bytes of stages at a time (an
    /// entry larger than that alone).
    private func forEachEntry(of info: ListRow, after: Int, through: Int, _ body: ([UInt8]) throws -> Bool) throws {
        var last = after
        while last < through {
            let sizes = try journalSizes(listID: info.id, after: last, through: through, limit: 256)
            var (count, bytes) = (0, 0)
            for size in sizes {
                guard count == 0 || bytes + size <= _BlobParts.maxRead else { break }
                (count, bytes) = (count + 1, bytes + size)
            }
            let entries = try entries(of: info, after: last, through: through, limit: max(1, count))
            guard let newest = entries.last else { return }
            for entry in entries { guard try body(entry.stagesJSON) else { return } }
            last = newest.version
        }
    }

    /// Deletes those of `hashes` that no list has or uploads (their rows locked first).
    private func deleteUnclaimedBlobs(among hashes: Set<ContentHash>) throws {
        // In one order, so that two transactions that release the same blobs do not deadlock.
        for hash in hashes.sorted(by: { $0.hex < $1.hex }) { try lockBlob(hash) }
        for hash in try unclaimedBlobs(among: hashes) { try deleteBlob(hash) }
    }
}
