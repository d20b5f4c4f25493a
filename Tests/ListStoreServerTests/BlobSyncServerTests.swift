import Foundation
import ListDiffTestSupport
import ListJSON
import ListStore
@_spi(StoreDriver) import ListStoreCore
import ListStorePostgresTestSupport
import ListStoreTestSupport
import ListSync
import Testing

@testable import ListStoreServer

/// Attachments between devices over HTTP: a device attaches a photo offline, its sync uploads the
/// photo before the change, and another device fetches the photo when it shows it.
@Suite struct BlobSyncServerTests {
    static func photo(_ size: Int, seed: UInt64) -> (BlobReference, [UInt8]) {
        let bytes = BlobRouteTests.bytes(size, seed: seed)
        return (BlobReference(of: bytes, type: "image/jpeg", name: "IMG_\(seed).jpg"), bytes)
    }

    static let emptyList = [ListSection(model: ListItem(id: "s"), elements: [])]

    static func element(_ id: String, _ photo: BlobReference) -> ListItem {
        ListItem(id: id, json: ["title": .string(id), "photo": photo.json])
    }

    @Test(arguments: EngineKind.available)
    func aPhotoAttachedOfflineReachesAnotherDevice(_ engine: EngineKind) async throws {
        try await engine.withStore { stores in
            let server = stores[0]
            try await server.commit(Self.emptyList, to: "inbox", expectedVersion: nil, author: nil, message: nil)
            try await ServerHarness.with(server) { harness in
                let source = try harness.source()
                let phone = Replica(store: InMemoryStore(), list: "inbox")
                let tablet = Replica(store: InMemoryStore(), list: "inbox")
                try await phone.pull(from: source)
                try await tablet.pull(from: source)

                // Offline: the phone keeps the photo, and an element refers to it.
                let (photo, jpeg) = Self.photo(9 * _BlobParts.partSize + 123, seed: 1)
                try await phone.store.storeBlob(photo, to: "inbox", bytes: jpeg)
                try await phone.edit { try $0.append(Self.element("beach", photo), toSection: ExactString("s")) }

                // Online: the photo goes up first, then the change.
                let synced = try await phone.sync(with: source)
                #expect(synced.push.pushed == 1 && synced.pull.pending == 0)
                #expect(try await server.blob(photo.hash, of: "inbox")?.isStored == true)

                // The tablet sees the element, and fetches the photo when it shows it.
                try await tablet.pull(from: source)
                let content = try #require(try await tablet.store.snapshot(of: "inbox", at: nil).sections.first?.elements.first?.content)
                let shown = try #require(try BlobReference.references(in: try JSONValue(parsing: content)).first)
                #expect(shown == photo)
                #expect(try await tablet.store.blob(photo.hash, of: "inbox")?.isStored == false)
                let heard = Heard()
                let fetched = try await tablet.fetchBlob(shown, from: source) { received, size in heard.add(received, size) }
                #expect(fetched.isStored)
                #expect(heard.all.last == [jpeg.count, jpeg.count] && heard.all.count >= 3)
                #expect(try await readWholeBlob(photo.hash, of: "inbox", in: tablet.store) == jpeg)
                // Held now: no request.
                #expect(try await tablet.fetchBlob(shown, from: source) { _, _ in Issue.record("fetched again") }.isStored)
                for store in [server, tablet.store as any ListStoreEngine, phone.store] {
                    #expect(try await store.verify(list: nil, progress: nil).isValid)
                }
            }
        }
    }

    /// A push whose blob upload breaks halfway leaves the change pending and the parts sent on
    /// the server; the next sync resumes the upload where it stopped, and lands the change. In
    /// parts (as on Apple platforms) the parts kept are those answered; streamed, those the server
    /// got whole before the connection broke.
    @Test(arguments: [true, false])
    func aPushWhoseUploadBreaksStaysPendingAndResumes(inParts: Bool) async throws {
        let directory = try TemporaryDirectory()
        let server = try Store(path: directory.file("s.liststore"))
        try await server.commit(Self.emptyList, to: "inbox")
        try await ServerHarness.with(server) { harness in
            var source = try harness.source()
            source.uploadsBlobsInParts = inParts
            let phone = Replica(store: InMemoryStore(), list: "inbox")
            try await phone.pull(from: source)
            let (photo, jpeg) = Self.photo(10 * _BlobParts.partSize + 5, seed: 2)
            try await phone.store.storeBlob(photo, to: "inbox", bytes: jpeg)
            try await phone.edit { try $0.append(Self.element("dunes", photo), toSection: ExactString("s")) }

            let breaking = BreakingBlobSource(base: source, failAfter: 6 * _BlobParts.partSize)
            await #expect(throws: BreakingBlobSource.Broke.self) { try await phone.push(to: breaking) }
            #expect(try await phone.status()?.pending == 1)
            #expect(try await server.snapshot(of: "inbox").sections[0].elements.isEmpty)
            if inParts {
                let kept = try #require(try await source.blob(photo.hash, of: "inbox"))
                #expect(!kept.isStored && kept.uploaded == HTTPSourceBlobs.pieceBytes)
            }

            let counting = BreakingBlobSource(base: source, failAfter: nil)
            #expect(try await phone.sync(with: counting).push.pushed == 1)
            if inParts { #expect(counting.sent.withLock { $0 } == jpeg.count - HTTPSourceBlobs.pieceBytes) }
            #expect(try await server.snapshot(of: "inbox").sections[0].elements.map(\.id) == ["dunes"])
            #expect(try await readWholeBlob(photo.hash, of: "inbox", in: server) == jpeg)
            #expect(try await phone.status()?.pending == 0)
        }
    }

    /// A streamed upload resumes an upload another request left (here, parts of 3 MiB): it sends
    /// only the rest, in one request.
    @Test func aStreamedUploadSendsOnlyTheRest() async throws {
        let directory = try TemporaryDirectory()
        let server = try Store(path: directory.file("s.liststore"))
        try await server.commit(Self.emptyList, to: "inbox")
        try await ServerHarness.with(server) { harness in
            let (photo, jpeg) = Self.photo(7 * _BlobParts.partSize + 11, seed: 12)
            let first = 3 * _BlobParts.partSize
            let part = try await harness.request(
                BlobRouteTests.path("inbox", photo), method: "PUT", bytes: Array(jpeg[..<first]),
                headers: ["Content-Range": "bytes 0-\(first - 1)/\(jpeg.count)"])
            #expect(part.status == 200)
            let source = try harness.source()
            let status = try #require(try await source.blob(photo.hash, of: "inbox"))
            #expect(status.uploaded == first && !status.isStored)
            let counting = BreakingBlobSource(base: source, failAfter: nil)
            let rest = _BlobPieces(range: first..<jpeg.count) { offset, count in Array(jpeg[offset..<min(jpeg.count, offset + count)]) }
            #expect(try await counting.storeBlob(photo, to: "inbox", from: rest, startingAt: first).isStored)
            #expect(counting.sent.withLock { $0 } == jpeg.count - first)
            #expect(try await readWholeBlob(photo.hash, of: "inbox", in: server) == jpeg)
            // Bytes that end early: the whole parts that came stay, and the status says so.
            let (other, bytes) = Self.photo(5 * _BlobParts.partSize, seed: 13)
            let short = try await source.storeBlob(other, to: "inbox", from: _OnePiece(bytes: Array(bytes[..<(2 * _BlobParts.partSize + 10)])), startingAt: 0)
            #expect(!short.isStored && short.uploaded <= 2 * _BlobParts.partSize)
            // More bytes than the size: refused, nothing kept of them.
            await #expect { try await source.storeBlob(other, to: "inbox", from: _OnePiece(bytes: bytes + [1]), startingAt: 0) } throws: {
                ($0 as? StoreError)?.code == .invalidArgument
            }
        }
    }

    /// Two replicas upload the same photo at once, to the same list and to another: every upload
    /// lands, the store keeps one copy, and each list reads it whole.
    @Test(arguments: EngineKind.available)
    func twoReplicasUploadingTheSameBytesAtOnceBothLand(_ engine: EngineKind) async throws {
        try await engine.withStore { stores in
            let server = stores[0]
            for list in ["inbox", "other"] { try await server.commit(Self.emptyList, to: list, expectedVersion: nil, author: nil, message: nil) }
            try await ServerHarness.with(server) { harness in
                let source = try harness.source()
                let (photo, jpeg) = Self.photo(9 * _BlobParts.partSize + 7, seed: 5)
                let statuses = try await withThrowingTaskGroup(of: BlobStatus.self) { group in
                    for list in ["inbox", "inbox", "other", "other"] {
                        group.addTask {
                            // A transient failure (PostgreSQL's lock timeout on a loaded machine:
                            // 503 `unavailable`, nothing changed) is tried again, as a replica does.
                            var tries = 0
                            while true {
                                tries += 1
                                do {
                                    return try await source.storeBlob(photo, to: list, from: _OnePiece(bytes: jpeg), startingAt: 0)
                                } catch let error as SyncError where error.isTransient && tries < 5 {
                                    continue
                                }
                            }
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(statuses.count == 4 && statuses.allSatisfy(\.isStored))
                for list in ["inbox", "other"] {
                    #expect(try await readWholeBlob(photo.hash, of: list, in: server) == jpeg)
                }
                #expect(try await server.verify(list: nil, progress: nil).isValid)
            }
        }
    }

    /// A fetch cut off halfway keeps the whole parts it got, nothing of the blob readable; the next
    /// fetch asks only for the rest.
    @Test func aFetchCutOffResumesWhereItStopped() async throws {
        let directory = try TemporaryDirectory()
        let server = try Store(path: directory.file("s.liststore"))
        try await server.commit(Self.emptyList, to: "inbox")
        let (photo, jpeg) = Self.photo(11 * _BlobParts.partSize + 3, seed: 8)
        try await server.storeBlob(photo, to: "inbox", bytes: jpeg)
        try await server.commit([ListSection(model: ListItem(id: "s"), elements: [Self.element("big", photo)])], to: "inbox")
        try await ServerHarness.with(server) { harness in
            let source = try harness.source()
            let tablet = Replica(store: InMemoryStore(), list: "inbox")
            try await tablet.pull(from: source)
            let breaking = BreakingBlobSource(base: source, failAfter: nil, readsBeforeFailing: 2)
            await #expect(throws: BreakingBlobSource.Broke.self) { try await tablet.fetchBlob(photo, from: breaking) }
            let kept = try #require(try await tablet.store.blob(photo.hash, of: "inbox"))
            #expect(!kept.isStored && kept.uploaded == 2 * HTTPSourceBlobs.pieceBytes)
            await #expect(throws: StoreError.self) { _ = try await tablet.store.readBlob(photo.hash, of: "inbox", from: 0, maxBytes: 1) }
            let counting = BreakingBlobSource(base: source, failAfter: nil)
            #expect(try await tablet.fetchBlob(photo, from: counting).isStored)
            #expect(counting.read.withLock { $0 } == jpeg.count - kept.uploaded)
            #expect(try await readWholeBlob(photo.hash, of: "inbox", in: tablet.store) == jpeg)
        }
    }

    /// An upload whose every byte came but whose server stopped before it ended it (the read-back
    /// for the hash, cut off) is ended by the next push, which sends its last part again.
    @Test func anUploadWithEveryByteButNoEndIsEndedByTheNextPush() async throws {
        let directory = try TemporaryDirectory()
        let server = try Store(path: directory.file("s.liststore"))
        try await server.commit(Self.emptyList, to: "inbox")
        let (photo, jpeg) = Self.photo(2 * _BlobParts.partSize, seed: 6)
        // The parts, written as an upload writes them, and no end.
        let partSize = _BlobParts.partSize
        let begun = try await server.run(.write) { try $0.steps.beginBlobUpload(photo, to: "inbox") }
        let listID = try #require(begun?.listID)
        for start in [0, partSize] {
            let part = Array(jpeg[start..<(start + partSize)])
            #expect(try await server.run(.write) { try $0.steps.writeBlobPart(photo.hash, listID: listID, start: start, bytes: part) } == .written)
        }
        #expect(try await server.blob(photo.hash, of: "inbox") == BlobStatus(hash: photo.hash, size: jpeg.count, uploaded: jpeg.count, isStored: false))
        try await ServerHarness.with(server) { harness in
            let source = try harness.source()
            let phone = Replica(store: InMemoryStore(), list: "inbox")
            try await phone.pull(from: source)
            try await phone.store.storeBlob(photo, to: "inbox", bytes: jpeg)
            try await phone.edit { try $0.append(Self.element("late", photo), toSection: ExactString("s")) }
            #expect(try await phone.push(to: source).pushed == 1)
            #expect(try await server.blob(photo.hash, of: "inbox")?.isStored == true)
            #expect(try await readWholeBlob(photo.hash, of: "inbox", in: server) == jpeg)
        }
    }

    /// `HTTPSource`'s blob requests answer as a store does: the end of a blob, a byte past it, a
    /// blob the list lacks, bytes that are not the blob's.
    @Test func theHTTPSourceAnswersAsAStoreDoes() async throws {
        let directory = try TemporaryDirectory()
        let server = try Store(path: directory.file("s.liststore"))
        try await server.commit(Self.emptyList, to: "inbox")
        let (photo, jpeg) = Self.photo(3000, seed: 3)
        try await server.storeBlob(photo, to: "inbox", bytes: jpeg)
        try await ServerHarness.with(server) { harness in
            let source = try harness.source()
            #expect(try await source.blob(photo.hash, of: "inbox") == BlobStatus(hash: photo.hash, size: 3000, uploaded: 3000, isStored: true))
            #expect(try await source.readBlob(photo.hash, of: "inbox", from: 2990, maxBytes: 100) == Array(jpeg[2990...]))
            #expect(try await source.readBlob(photo.hash, of: "inbox", from: 3000, maxBytes: 100) == [])
            await #expect { _ = try await source.readBlob(photo.hash, of: "inbox", from: 3001, maxBytes: 1) } throws: {
                ($0 as? StoreError)?.code == .invalidArgument
            }
            let (other, bytes) = Self.photo(10, seed: 4)
            #expect(try await source.blob(other.hash, of: "inbox") == nil)
            await #expect { _ = try await source.readBlob(other.hash, of: "inbox", from: 0, maxBytes: 1) } throws: {
                ($0 as? StoreError)?.code == .missingBlob
            }
            await #expect { try await source.storeBlob(other, to: "inbox", from: _OnePiece(bytes: bytes.reversed()), startingAt: 0) } throws: {
                ($0 as? StoreError)?.code == .invalidArgument
            }
            #expect(try await source.blob(other.hash, of: "inbox") == nil)
            let empty = BlobReference(of: [])
            #expect(try await source.storeBlob(empty, to: "inbox", from: _OnePiece(bytes: []), startingAt: 0).isStored)
            #expect(try await source.readBlob(empty.hash, of: "inbox", from: 0, maxBytes: 10) == [])
        }
    }
}

/// The size of `HTTPSource`'s upload requests, as the tests see it.
enum HTTPSourceBlobs {
    static let pieceBytes = 4 * _BlobParts.partSize
}

/// What a progress callback heard.
final class Heard: Sendable {
    private let heard = _Locked<[[Int]]>([])
    func add(_ received: Int, _ size: Int) { heard.withLock { $0.append([received, size]) } }
    var all: [[Int]] { heard.withLock { $0 } }
}

/// A source whose blob uploads break after `failAfter` bytes, and whose reads of blobs after
/// `readsBeforeFailing` reads (a connection lost halfway); it counts the bytes uploads were given
/// and reads got.
struct BreakingBlobSource: _ForwardingSource {
    struct Broke: Error {}
    let base: any ListSource
    let failAfter: Int?
    let readsBeforeFailing: Int?
    let sent = _Locked(0)
    let read = _Locked(0)
    private let reads = _Locked(0)

    init(base: any ListSource, failAfter: Int?, readsBeforeFailing: Int? = nil) {
        self.base = base
        self.failAfter = failAfter
        self.readsBeforeFailing = readsBeforeFailing
    }

    func readBlob(_ hash: ContentHash, of list: String, from offset: Int, maxBytes: Int) async throws -> [UInt8] {
        if let readsBeforeFailing, reads.withLock({ $0 += 1; return $0 }) > readsBeforeFailing { throw Broke() }
        let bytes = try await base.readBlob(hash, of: list, from: offset, maxBytes: maxBytes)
        read.withLock { $0 += bytes.count }
        return bytes
    }

    func storeBlob<Bytes: AsyncSequence>(_ reference: BlobReference, to list: String, from bytes: Bytes, startingAt offset: Int) async throws
        -> BlobStatus where Bytes.Element == [UInt8]
    {
        var pieces = [[UInt8]]()
        for try await piece in bytes { pieces.append(piece) }
        let (failAfter, sent) = (failAfter, sent)
        let stream = AsyncThrowingStream<[UInt8], any Error> { continuation in
            var given = 0
            for piece in pieces {
                if let failAfter, given + piece.count > failAfter {
                    continuation.yield(Array(piece.prefix(failAfter - given)))
                    sent.withLock { $0 += failAfter - given }
                    continuation.finish(throwing: Broke())
                    return
                }
                continuation.yield(piece)
                given += piece.count
                sent.withLock { $0 += piece.count }
            }
            continuation.finish()
        }
        return try await base.storeBlob(reference, to: list, from: stream, startingAt: offset)
    }
}
