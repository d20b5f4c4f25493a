import Foundation
import ListStore
import ListStoreCore
import ListStoreTestSupport
import Testing

/// The room a SQLite store keeps on its disk from blobs' bytes, on any disk: a store that keeps
/// more room than any disk has (`blobRoomKeptMiB`) stands for a full one. Its uploads fail with
/// `storageFull` and are given up without taking another upload's parts; a blob it holds whole
/// for another list takes no new bytes and still lands; everything else goes on. (`DiskFullTests`
/// fill a real small disk.)
@Suite struct BlobRoomTests {
    static let part = 1 << 20

    /// A store on `path` that finds no disk roomy enough for a blob's bytes.
    static func starved(_ path: String) throws -> Store {
        var configuration = Store.Configuration()
        configuration.blobRoomKeptMiB = 1 << 30
        return try Store(path: path, configuration: configuration)
    }

    @Test func anUploadWithoutRoomIsGivenUpAndTakesNoOtherUploadsParts() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("room.liststore")
        let roomy = try Store(path: path)
        defer { try? roomy.close() }
        for list in ["a", "b"] { try await roomy.commit(linearList(1), to: list) }
        let starved = try Self.starved(path)
        defer { try? starved.close() }
        let photo = (0..<(3 * Self.part + 11)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
        let reference = BlobReference(of: photo, type: "image/jpeg")

        // List a's upload sent two parts; list b's finds no room.
        #expect(try await roomy.storeBlob(reference, to: "a", from: _OnePiece(bytes: Array(photo[..<(2 * Self.part)])), startingAt: 0).uploaded == 2 * Self.part)
        let refused = await #expect(throws: StoreError.self) { try await starved.storeBlob(reference, to: "b", bytes: photo) }
        #expect(refused?.code == .storageFull, "\(String(describing: refused))")
        #expect(refused?.message.contains("given up") == true, "\(String(describing: refused))")
        #expect(try await roomy.blob(reference.hash, of: "b") == nil)
        #expect(try await roomy.blob(reference.hash, of: "a")?.uploaded == 2 * Self.part)
        // A commit needs no room kept from blobs.
        try await starved.commit(linearList(2), to: "b")

        // List a's upload ends; then list b's takes no new bytes, and lands on the starved store.
        #expect(try await roomy.storeBlob(reference, to: "a", from: _OnePiece(bytes: photo), startingAt: 0).isStored)
        #expect(try await starved.storeBlob(reference, to: "b", bytes: photo).isStored)
        #expect(try await starved.readBlob(reference.hash, of: "b", from: 0, maxBytes: photo.count) == photo)
        #expect(try await roomy.verify().isValid)
    }

    /// Parts another list's upload of the blob wrote take no new bytes: a store without room takes
    /// them for its own upload (compared), and refuses the first part nobody wrote.
    @Test func partsAnotherUploadWroteTakeNoRoom() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("shared.liststore")
        let roomy = try Store(path: path)
        defer { try? roomy.close() }
        for list in ["a", "b"] { try await roomy.commit(linearList(1), to: list) }
        let starved = try Self.starved(path)
        defer { try? starved.close() }
        let photo = (0..<(3 * Self.part + 5)).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 1) }
        let reference = BlobReference(of: photo, type: "image/png")

        let firstTwo = _OnePiece(bytes: Array(photo[..<(2 * Self.part)]))
        #expect(try await roomy.storeBlob(reference, to: "a", from: firstTwo, startingAt: 0).uploaded == 2 * Self.part)
        #expect(try await starved.storeBlob(reference, to: "b", from: firstTwo, startingAt: 0).uploaded == 2 * Self.part)
        let refused = await #expect(throws: StoreError.self) {
            try await starved.storeBlob(reference, to: "b", from: _OnePiece(bytes: Array(photo[(2 * Self.part)...])), startingAt: 2 * Self.part)
        }
        #expect(refused?.code == .storageFull, "\(String(describing: refused))")
        #expect(try await roomy.storeBlob(reference, to: "a", from: _OnePiece(bytes: Array(photo[(2 * Self.part)...])), startingAt: 2 * Self.part).isStored)
        #expect(try await roomy.verify().isValid)
    }

    @Test func anUploadWithoutRoomAloneKeepsNothingAndTheStoreVerifies() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("alone.liststore")
        let starved = try Self.starved(path)
        defer { try? starved.close() }
        try await starved.commit(linearList(1), to: "l")
        let video = (0..<(2 * Self.part)).map { UInt8(truncatingIfNeeded: $0 >> 3) }
        let reference = BlobReference(of: video, type: "video/mp4")
        let refused = await #expect(throws: StoreError.self) { try await starved.storeBlob(reference, to: "l", bytes: video) }
        #expect(refused?.code == .storageFull)
        #expect(try await starved.blob(reference.hash, of: "l") == nil)
        #expect(try await starved.verify().isValid)
        // The same store with the check off takes it.
        try starved.close()
        var configuration = Store.Configuration()
        configuration.blobRoomKeptMiB = 0
        let unchecked = try Store(path: path, configuration: configuration)
        defer { try? unchecked.close() }
        #expect(try await unchecked.storeBlob(reference, to: "l", bytes: video).isStored)
    }
}
