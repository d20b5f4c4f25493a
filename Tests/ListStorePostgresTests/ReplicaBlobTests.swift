import ListJSON
@_spi(Replication) import ListStore
import ListStorePostgresTestSupport
import ListStoreTestSupport
import ListSync
import Testing

/// A replica's blobs on every engine: as a cache of its source's, trimmed to a budget, the ones
/// used longest ago first (a fetch is a use), never one a change waiting to be pushed refers to
/// (a dropped blob is fetched again); kept through a prune while a change waiting to be pushed
/// refers to them.
@Suite(.serialized) struct ReplicaBlobTests {
    static func photo(_ k: Int) -> (BlobReference, [UInt8]) {
        let bytes = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* (k + 3)) }
        return (BlobReference(of: bytes, type: "image/jpeg"), bytes)
    }

    static func album(_ photos: [BlobReference]) -> [ListSection] {
        [ListSection(model: ListItem("s"), elements: photos.enumerated().map { k, photo in ListItem(id: "p\(k)", json: ["photo": photo.json]) })]
    }

    @Test(arguments: EngineKind.available)
    func aReplicaTrimsItsBlobsLeastRecentlyUsedFirstAndKeepsWhatIsPending(_ engine: EngineKind) async throws {
        try await engine.withStore { stores in try await Self.trim(in: stores[0]) }
    }

    static func trim(in replicaStore: some ReplicaStore) async throws {
        let source = InMemoryStore()
        let photos = (0..<6).map(photo)
        try await source.commit(album([]), to: "l", expectedVersion: nil, author: nil, message: nil)
        for (photo, bytes) in photos.prefix(4) { try await source.storeBlob(photo, to: "l", bytes: bytes) }
        try await source.commit(album(photos.prefix(4).map(\.0)), to: "l", expectedVersion: nil, author: nil, message: nil)
        let replica = Replica(store: replicaStore, list: "l")
        try await replica.pull(from: LocalSource(source))
        for (photo, _) in photos.prefix(4) { try await replica.fetchBlob(photo, from: LocalSource(source)) }
        // Shown again: p0 is now used after p1, p2 and p3.
        try await replica.fetchBlob(photos[0].0, from: LocalSource(source))
        // Offline, a fifth photo, and a change that refers to it and to p3; a sixth photo stored
        // for a change still to come.
        let (offline, offlineBytes) = photos[4]
        try await replicaStore.storeBlob(offline, to: "l", bytes: offlineBytes)
        try await replica.edit {
            try $0.append(ListItem(id: "p4", json: ["photo": offline.json]), toSection: "s")
            try $0.append(ListItem(id: "again", json: ["photo": photos[3].0.json]), toSection: "s")
        }
        try await replicaStore.storeBlob(photos[5].0, to: "l", bytes: photos[5].1)

        func held() async throws -> [Bool] {
            var held = [Bool]()
            for (photo, _) in photos { held.append(try await replicaStore.blob(photo.hash, of: "l")?.isStored == true) }
            return held
        }
        #expect(try await held() == [true, true, true, true, true, true])
        // The budget counts the source's photos: p0 to p3.
        #expect(try await replica.trimBlobCache(to: 5000) == BlobCacheTrim(droppedBlobs: 0, droppedBytes: 0, heldBytes: 4000))
        // p1 and p2 were used longest ago (p3 is the pending change's).
        #expect(try await replica.trimBlobCache(to: 2500) == BlobCacheTrim(droppedBlobs: 2, droppedBytes: 2000, heldBytes: 2000))
        #expect(try await held() == [true, false, false, true, true, true])
        // Whatever the budget, the pending change's photos stay, and so does the one stored for a
        // change to come (the source does not have it).
        #expect(try await replica.trimBlobCache(to: 0) == BlobCacheTrim(droppedBlobs: 1, droppedBytes: 1000, heldBytes: 1000))
        #expect(try await held() == [false, false, false, true, true, true])
        await #expect(throws: StoreError.self) { _ = try await replicaStore.readBlob(photos[1].0.hash, of: "l", from: 0, maxBytes: 10) }
        // A dropped photo is fetched again when it is shown.
        #expect(try await replica.fetchBlob(photos[1].0, from: LocalSource(source)).isStored)
        #expect(try await readWholeBlob(photos[1].0.hash, of: "l", in: replicaStore) == photos[1].1)
        // Pushed, and confirmed by the pull, the offline photo is the source's too, and may go;
        // the sixth is still no content's.
        try await replica.sync(with: LocalSource(source))
        #expect(try await source.blob(offline.hash, of: "l")?.isStored == true)
        #expect(try await replica.trimBlobCache(to: 0) == BlobCacheTrim(droppedBlobs: 3, droppedBytes: 3000, heldBytes: 0))
        #expect(try await held() == [false, false, false, false, false, true])
        #expect(try await replica.fetchBlob(offline, from: LocalSource(source)).isStored)
        #expect(try await readWholeBlob(offline.hash, of: "l", in: replicaStore) == offlineBytes)
        #expect(try await replicaStore.verify(list: nil, progress: nil).isValid)

        // A negative budget, and a list that follows no source, are refused.
        await #expect(throws: StoreError.self) { try await replica.trimBlobCache(to: -1) }
        try await replicaStore.commit(album([]), to: "own", expectedVersion: nil, author: nil, message: nil)
        await #expect(throws: SyncError.self) { try await Replica(store: replicaStore, list: "own").trimBlobCache(to: 0) }
        await #expect(throws: StoreError.self) { try await replicaStore.trimBlobs(of: "own", toBytes: 0) }
        await #expect(throws: StoreError.self) { try await Replica(store: replicaStore, list: "nope").trimBlobCache(to: 0) }
    }

    /// A prune of a replica list keeps the blobs its changes not pushed yet refer to, though no kept
    /// version does (the photo was attached, then removed, offline), and the source's photo its
    /// confirmed state refers to; the push then uploads the photo before the changes, as it must.
    @Test(arguments: EngineKind.available)
    func pruningAReplicaKeepsWhatItsPendingChangesReferTo(_ engine: EngineKind) async throws {
        try await engine.withStore { stores in try await Self.prune(in: stores[0]) }
    }

    static func prune(in replicaStore: some ReplicaStore) async throws {
        let source = InMemoryStore()
        let (photo, photoBytes) = photo(0)
        try await source.commit(album([]), to: "l", expectedVersion: nil, author: nil, message: nil)
        try await source.storeBlob(photo, to: "l", bytes: photoBytes)
        try await source.commit(album([photo]), to: "l", expectedVersion: nil, author: nil, message: nil)
        let replica = Replica(store: replicaStore, list: "l")
        try await replica.pull(from: LocalSource(source))
        let (offline, bytes) = Self.photo(1)
        try await replicaStore.storeBlob(offline, to: "l", bytes: bytes)
        try await replica.edit { try $0.append(ListItem(id: "b", json: ["photo": offline.json]), toSection: "s") }
        try await replica.edit { try $0.removeElement("b") }
        try await replica.edit { try $0.removeElement("p0") }
        let pruned = try await replicaStore.prune("l", .keepLast(0), force: true)
        #expect(pruned.base == pruned.head && pruned.releasedBlobs == 0)
        #expect(try await replicaStore.blob(offline.hash, of: "l")?.isStored == true)
        #expect(try await replicaStore.blob(photo.hash, of: "l") != nil)
        let pushed = try await replica.push(to: LocalSource(source))
        #expect(pushed.pushed == 3)
        #expect(try await source.blob(offline.hash, of: "l")?.isStored == true)
        #expect(try await source.snapshot(of: "l", at: nil).sections[0].elements.isEmpty)
        #expect(try await replicaStore.verify(list: nil, progress: nil).isValid)
    }
}
