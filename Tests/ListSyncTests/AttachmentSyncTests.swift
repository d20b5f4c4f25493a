import ListJSON
import ListStore
import ListStoreTestSupport
import ListSync
import Testing

/// Attachments' references through replicas: a replica list has the blobs its source's contents
/// refer to (their bytes stay at the source), whether it pulled entries or a first sync in pages;
/// its own changes may refer to those and to blobs uploaded to it, and to no other; a push uploads
/// the blobs its changes refer to that the source's list lacks before the changes.
@Suite struct AttachmentSyncTests {
    static let photoBytes = Array("the bytes of a photo".utf8)
    static let photo = BlobReference(of: photoBytes, type: "image/jpeg", name: "IMG_1.jpg")

    static func element(_ id: String, _ title: String, _ blob: BlobReference) -> ListItem {
        ListItem(id: id, json: ["title": .string(title), "photo": blob.json])
    }

    /// A source list "l" whose version 2 has an element with the photo.
    static func source() async throws -> InMemoryStore {
        let source = InMemoryStore()
        try await source.commit([ListSection(model: ListItem("s"), elements: [])], to: "l", expectedVersion: nil, author: nil, message: nil)
        try await source.storeBlob(photo, to: "l", bytes: photoBytes)
        try await source.commit(
            [ListSection(model: ListItem("s"), elements: [element("a", "Beach", photo)])], to: "l", expectedVersion: nil, author: nil, message: nil)
        return source
    }

    @Test func aReplicaHasItsSourcesBlobsByReferenceAndPushesOnlyWhatTheSourceHas() async throws {
        let source = try await Self.source()
        let replica = Replica(store: InMemoryStore(), list: "l")
        // Another list of the replica's store has the photo's bytes: the replica list still has
        // the photo by reference only (knowing a hash grants nothing).
        try await replica.store.commit([ListSection(model: ListItem("s"), elements: [])], to: "own", expectedVersion: nil, author: nil, message: nil)
        try await replica.store.storeBlob(Self.photo, to: "own", bytes: Self.photoBytes)
        #expect(try await replica.pull(from: LocalSource(source)).version == 2)
        #expect(try await replica.store.blob(Self.photo.hash, of: "l") == BlobStatus(hash: Self.photo.hash, size: Self.photoBytes.count, uploaded: 0, isStored: false))
        await #expect(throws: StoreError.self) { _ = try await replica.store.readBlob(Self.photo.hash, of: "l", from: 0, maxBytes: 10) }
        #expect(try await replica.store.verify(list: nil, progress: nil).isValid)

        // Offline: a change that refers to the source's photo again commits; one that refers to a
        // blob the replica has not got is refused until it is uploaded to the replica's list.
        try await replica.edit { try $0.append(Self.element("b", "Beach again", Self.photo), toSection: ExactString("s")) }
        let other = BlobReference(of: Array("another photo".utf8))
        await #expect {
            try await replica.edit { try $0.append(Self.element("c", "Dunes", other), toSection: ExactString("s")) }
        } throws: { ($0 as? StoreError)?.code == .missingBlob }
        try await replica.store.storeBlob(other, to: "l", bytes: Array("another photo".utf8))
        try await replica.edit { try $0.append(Self.element("c", "Dunes", other), toSection: ExactString("s")) }
        #expect(try await replica.status()?.pending == 2)

        // The source's list has the first photo, not the second: the push uploads the second
        // from the replica's bytes before the change that refers to it.
        #expect(try await source.blob(other.hash, of: "l") == nil)
        #expect(try await replica.push(to: LocalSource(source)).pushed == 2)
        #expect(try await source.blob(other.hash, of: "l")?.isStored == true)
        _ = try await replica.pull(from: LocalSource(source))
        #expect(try await replica.status()?.pending == 0)
        #expect(try await source.snapshot(of: "l", at: nil).sections.first?.elements.map(\.id) == ["a", "b", "c"])
        #expect(try await source.verify(list: nil, progress: nil).isValid)
        #expect(try await replica.store.verify(list: nil, progress: nil).isValid)
    }

    /// A first sync in pages (the source's journal pruned): the replica's list has the blobs the
    /// pages refer to.
    @Test func aFirstSyncInPagesTakesTheReferences() async throws {
        let source = try await Self.source()
        _ = try await source.prune("l", .keepLast(0), force: false)
        let replica = Replica(store: InMemoryStore(), list: "l")
        var options = ReplicaPullOptions()
        options.pageBytes = 200
        let result = try await replica.pull(from: LocalSource(source), options: options)
        #expect(result.resynced && (result.pages?.pages ?? 0) > 1)
        #expect(try await replica.store.blob(Self.photo.hash, of: "l")?.isStored == false)
        try await replica.edit { try $0.append(Self.element("b", "Beach again", Self.photo), toSection: ExactString("s")) }
        #expect(try await replica.store.verify(list: nil, progress: nil).isValid)
    }
}
