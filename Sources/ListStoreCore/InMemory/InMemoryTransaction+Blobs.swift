extension InMemoryTransaction {
    // MARK: Blobs

    func blobRow(_ hash: ContentHash) throws -> (size: Int, whole: Bool)? { tables.blobs[hash] }

    func insertBlob(_ hash: ContentHash, size: Int) throws { if tables.blobs[hash] == nil { tables.blobs[hash] = (size, false) } }

    func markBlobWhole(_ hash: ContentHash) throws { tables.blobs[hash]?.whole = true }

    func lockBlob(_ hash: ContentHash) throws {}

    func blobPart(_ hash: ContentHash, start: Int) throws -> [UInt8]? { tables.blobParts[hash]?[start] }

    func insertBlobPart(_ hash: ContentHash, start: Int, bytes: [UInt8]) throws -> Bool {
        guard tables.blobParts[hash]?[start] == nil else { return false }
        tables.blobParts[hash, default: [:]][start] = bytes
        return true
    }

    func deleteBlob(_ hash: ContentHash) throws {
        (tables.blobs[hash], tables.blobParts[hash]) = (nil, nil)
        for list in tables.blobUploads.keys {
            tables.blobUploads[list]?[hash] = nil
            tables.blobUploadTimes[list]?[hash] = nil
        }
    }

    func blobUpload(listID: Int64, hash: ContentHash) throws -> Int? { tables.blobUploads[listID]?[hash] }

    func setBlobUpload(listID: Int64, hash: ContentHash, received: Int?, at time: String) throws {
        tables.blobUploads[listID, default: [:]][hash] = received
        tables.blobUploadTimes[listID, default: [:]][hash] = received == nil ? nil : time
    }

    func idleBlobUploads(listID: Int64, before time: String) throws -> [ContentHash] {
        (tables.blobUploadTimes[listID] ?? [:]).filter { $0.value < time }.map(\.key).sorted { $0.hex < $1.hex }
    }

    func listBlobs(listID: Int64, among hashes: Set<ContentHash>) throws -> Set<ContentHash> {
        hashes.filter { tables.listBlobs[listID]?[$0] != nil }
    }

    func listBlobs(listID: Int64) throws -> [(hash: ContentHash, uploaded: Bool)] {
        (tables.listBlobs[listID] ?? [:]).sorted { $0.key.bytes.lexicographicallyPrecedes($1.key.bytes) }.map { ($0.key, $0.value) }
    }

    func hasUploadedBlob(listID: Int64, hash: ContentHash) throws -> Bool { tables.listBlobs[listID]?[hash] == true }

    func insertListBlobs(listID: Int64, hashes: Set<ContentHash>, uploaded: Bool) throws {
        for hash in hashes where uploaded || tables.listBlobs[listID]?[hash] == nil { tables.listBlobs[listID, default: [:]][hash] = uploaded }
        if !uploaded { tables.blobsFromSource[listID, default: []].formUnion(hashes) }
    }

    func deleteListBlobs(listID: Int64) throws -> Set<ContentHash> {
        defer {
            (tables.listBlobs[listID], tables.blobUploads[listID]) = (nil, nil)
            (tables.blobUses[listID], tables.blobUploadTimes[listID], tables.blobsFromSource[listID]) = (nil, nil, nil)
        }
        return Set(tables.listBlobs[listID].map { Array($0.keys) } ?? []).union(tables.blobUploads[listID].map { Array($0.keys) } ?? [])
    }

    func deleteListBlobs(listID: Int64, among hashes: Set<ContentHash>) throws {
        for hash in hashes {
            tables.listBlobs[listID]?[hash] = nil
            tables.blobUses[listID]?[hash] = nil
            tables.blobsFromSource[listID]?.remove(hash)
        }
    }

    func touchListBlob(listID: Int64, hash: ContentHash) throws {
        guard tables.listBlobs[listID]?[hash] != nil else { return }
        tables.blobUses[listID, default: [:]][hash] = (tables.blobUses[listID]?.values.max() ?? 0) + 1
    }

    func cachedBlobs(listID: Int64) throws -> [(hash: ContentHash, size: Int)] {
        let (uses, fromSource) = (tables.blobUses[listID] ?? [:], tables.blobsFromSource[listID] ?? [])
        return (tables.listBlobs[listID] ?? [:]).compactMap { hash, uploaded in
            guard uploaded, fromSource.contains(hash), let row = tables.blobs[hash], row.whole else { return nil }
            return (hash, row.size)
        }.sorted { ((uses[$0.hash] ?? 0), $0.hash.hex) < ((uses[$1.hash] ?? 0), $1.hash.hex) }
    }

    func unholdListBlobs(listID: Int64, hashes: Set<ContentHash>) throws {
        for hash in hashes where tables.listBlobs[listID]?[hash] != nil { tables.listBlobs[listID]?[hash] = false }
    }

    func unclaimedBlobs(among hashes: Set<ContentHash>) throws -> Set<ContentHash> {
        hashes.filter { hash in
            !tables.listBlobs.values.contains { $0[hash] == true } && !tables.blobUploads.values.contains { $0[hash] != nil }
        }
    }
}
