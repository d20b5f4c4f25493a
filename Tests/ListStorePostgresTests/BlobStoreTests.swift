import GRDB
import ListDiffTestSupport
import ListJSON
import ListStore
@_spi(StoreDriver) import ListStoreCore
import ListStorePostgresTestSupport
import ListStoreTestSupport
import Testing

/// Blobs in a store, on every engine: uploaded to a list in pieces of any size, kept in parts, read
/// through the lists that have them; bytes that are not the reference's keep nothing; an
/// interrupted upload resumes; a commit refers only to blobs its list has.
@Suite(.serialized, .heavyWork) struct BlobStoreTests {
    static let part = 1 << 20

    /// Bytes that differ from part to part (so that a part in the wrong place shows).
    static func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var random = SplitMix64(seed: seed)
        return (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) }
    }

    /// `bytes` in pieces of random sizes (some empty), as a client's body comes.
    static func pieces(_ bytes: [UInt8], seed: UInt64, failingAfter limit: Int? = nil) -> AsyncThrowingStream<[UInt8], any Error> {
        var random = SplitMix64(seed: seed)
        var cuts = [0]
        while cuts.last! < bytes.count { cuts.append(min(bytes.count, cuts.last! + Int(random.next() % UInt64(Self.part / 3 + 2)))) }
        return AsyncThrowingStream { continuation in
            for (from, to) in zip(cuts, cuts.dropFirst()) {
                if let limit, to > limit {
                    continuation.finish(throwing: StoreError(.io, "the connection broke"))
                    return
                }
                continuation.yield(Array(bytes[from..<to]))
            }
            continuation.finish()
        }
    }

    static func refuses(_ code: StoreError.Code, _ words: String, _ body: () async throws -> Void) async {
        await #expect {
            try await body()
        } throws: { error in
            let error = error as? StoreError
            return error?.code == code && error?.message.contains(words) == true
        }
    }

    @Test(arguments: EngineKind.available)
    func uploadsOfEverySizeReadBackThroughTheirList(_ engine: EngineKind) async throws {
        try await engine.withStore { stores in
            let store = stores[0]
            for list in ["a", "b"] { try await store.commit(linearList(1), to: list, expectedVersion: nil, author: nil, message: nil) }
            for (k, size) in [0, 1, 1000, Self.part - 1, Self.part, Self.part + 1, 2 * Self.part + Self.part / 2].enumerated() {
                let bytes = Self.bytes(size, seed: UInt64(k))
                let reference = BlobReference(of: bytes)
                #expect(try await store.blob(reference.hash, of: "a") == nil)
                let status = try await store.storeBlob(reference, to: "a", from: Self.pieces(bytes, seed: UInt64(k)), startingAt: 0)
                #expect(status == BlobStatus(hash: reference.hash, size: size, uploaded: size, isStored: true))
                #expect(try await store.blob(reference.hash, of: "a") == status)
                for step in [size <= 1000 ? 7 : 100_003, Self.part / 3, Self.part, 16 << 20] {
                    #expect(try await readWholeBlob(reference.hash, of: "a", in: store, step: step) == bytes, "\(size) in reads of \(step)")
                }
                #expect(try await store.readBlob(reference.hash, of: "a", from: size / 2, maxBytes: 5) == Array(bytes[(size / 2)..<min(size, size / 2 + 5)]))
                await Self.refuses(.invalidArgument, "no byte \(size + 1)") {
                    _ = try await store.readBlob(reference.hash, of: "a", from: size + 1, maxBytes: 5)
                }
                // Another list reads it only once it uploaded the bytes itself: knowing the hash
                // grants nothing.
                #expect(try await store.blob(reference.hash, of: "b") == nil)
                await Self.refuses(.missingBlob, "has no blob \(reference.id)") {
                    _ = try await store.readBlob(reference.hash, of: "b", from: 0, maxBytes: 5)
                }
                try await store.storeBlob(reference, to: "b", bytes: bytes)
                #expect(try await readWholeBlob(reference.hash, of: "b", in: store, step: Self.part) == bytes)
                // Uploading again is answered at once.
                #expect(try await store.storeBlob(reference, to: "b", from: Self.pieces([], seed: 0), startingAt: 0) == status)
            }
            await Self.refuses(.listNotFound, "nowhere") {
                try await store.storeBlob(BlobReference(of: [1]), to: "nowhere", bytes: [1])
            }
        }
    }

    /// Bytes that are not the reference's: another hash, more bytes than its size, or a size that
    /// disagrees with the blob the store has. Nothing of them is kept.
    @Test(arguments: EngineKind.available)
    func bytesThatAreNotTheBlobsKeepNothing(_ engine: EngineKind) async throws {
        try await engine.withStore { stores in
            let store = stores[0]
            try await store.commit(linearList(1), to: "a", expectedVersion: nil, author: nil, message: nil)
            let bytes = Self.bytes(Self.part + 10, seed: 1)
            let reference = BlobReference(of: bytes)
            var other = bytes
            other[Self.part + 3] ^= 1
            await Self.refuses(.invalidArgument, "not \(reference.id)") {
                try await store.storeBlob(reference, to: "a", bytes: other)
            }
            #expect(try await store.blob(reference.hash, of: "a") == nil)
            await Self.refuses(.invalidArgument, "and more came") {
                try await store.storeBlob(reference, to: "a", from: Self.pieces(bytes + [0], seed: 11), startingAt: 0)
            }
            // A size that is not the bytes': the upload of that size fails its hash.
            let small = BlobReference(hash: reference.hash, size: 4)
            await Self.refuses(.invalidArgument, "not \(reference.id)") {
                try await store.storeBlob(small, to: "a", bytes: [1, 2, 3, 4])
            }
            // The right bytes land, after all of that.
            try await store.storeBlob(reference, to: "a", bytes: bytes)
            #expect(try await readWholeBlob(reference.hash, of: "a", in: store, step: Self.part) == bytes)
            // Wrong bytes for a blob the store has leave it as it was.
            try await store.commit(linearList(1), to: "b", expectedVersion: nil, author: nil, message: nil)
            await Self.refuses(.invalidArgument, "from byte \(Self.part) are not those of blob \(reference.id)") {
                try await store.storeBlob(reference, to: "b", bytes: other)
            }
            // Once whole, the blob's size is not for an upload to change.
            await Self.refuses(.invalidArgument, "has \(bytes.count) bytes, not 4") {
                try await store.storeBlob(small, to: "b", bytes: [1, 2, 3, 4])
            }
            #expect(try await store.blob(reference.hash, of: "b") == nil)
            #expect(try await readWholeBlob(reference.hash, of: "a", in: store, step: Self.part) == bytes)
        }
    }

    /// An upload whose bytes stop (a broken connection, a client that ends early) resumes after
    /// the parts written, from any byte up to there, and lands whole.
    @Test(arguments: EngineKind.available)
    func anInterruptedUploadResumes(_ engine: EngineKind) async throws {
        try await engine.withStore { stores in
            let store = stores[0]
            try await store.commit(linearList(1), to: "a", expectedVersion: nil, author: nil, message: nil)
            let bytes = Self.bytes(3 * Self.part + 77, seed: 2)
            let reference = BlobReference(of: bytes)
            await Self.refuses(.io, "broke") {
                _ = try await store.storeBlob(reference, to: "a", from: Self.pieces(bytes, seed: 3, failingAfter: 2 * Self.part + Self.part / 2), startingAt: 0)
            }
            let sent = try #require(try await store.blob(reference.hash, of: "a"))
            #expect(sent == BlobStatus(hash: reference.hash, size: bytes.count, uploaded: 2 * Self.part, isStored: false))
            await Self.refuses(.missingBlob, "has no blob") { _ = try await store.readBlob(reference.hash, of: "a", from: 0, maxBytes: 1) }
            await Self.refuses(.invalidArgument, "resumes at byte \(2 * Self.part) or before") {
                _ = try await store.storeBlob(reference, to: "a", from: Self.pieces(Array(bytes[(2 * Self.part + 1)...]), seed: 4), startingAt: 2 * Self.part + 1)
            }
            // Ended early (an upload in parts): the whole parts sent stay, and the upload resumes after them.
            let early = try await store.storeBlob(reference, to: "a", from: Self.pieces(Array(bytes[..<(2 * Self.part + 9)]), seed: 5), startingAt: 0)
            #expect(early == BlobStatus(hash: reference.hash, size: bytes.count, uploaded: 2 * Self.part, isStored: false))
            let part = try await store.storeBlob(reference, to: "a", from: Self.pieces(Array(bytes[(2 * Self.part)..<(3 * Self.part)]), seed: 7), startingAt: 2 * Self.part)
            #expect(part == BlobStatus(hash: reference.hash, size: bytes.count, uploaded: 3 * Self.part, isStored: false))
            await Self.refuses(.invalidArgument, "blob \(reference.id) has \(bytes.count) bytes, not 10") {
                try await store.storeBlob(reference, to: "a", bytes: Array(bytes.prefix(10)))
            }
            let resumeAt = Self.part + 12_345
            let status = try await store.storeBlob(reference, to: "a", from: Self.pieces(Array(bytes[resumeAt...]), seed: 6), startingAt: resumeAt)
            #expect(status.isStored)
            #expect(try await readWholeBlob(reference.hash, of: "a", in: store, step: Self.part / 2) == bytes)
        }
    }

    /// Other bytes under a blob another list has, cut short and then "resumed" past them, give the
    /// uploading list nothing: the first part that differs from the store's ends its upload.
    @Test(arguments: EngineKind.available)
    func aListGainsNoBlobWithoutSendingItsBytes(_ engine: EngineKind) async throws {
        try await engine.withStore { stores in
            let store = stores[0]
            for list in ["x", "m"] { try await store.commit(linearList(1), to: list, expectedVersion: nil, author: nil, message: nil) }
            let bytes = Self.bytes(2 * Self.part, seed: 11)
            let reference = BlobReference(of: bytes)
            try await store.storeBlob(reference, to: "x", bytes: bytes)
            let junk = Self.bytes(2 * Self.part, seed: 12)
            await Self.refuses(.invalidArgument, "from byte 0 are not those of blob") {
                _ = try await store.storeBlob(reference, to: "m", from: Self.pieces(junk, seed: 13, failingAfter: 2 * Self.part - 1), startingAt: 0)
            }
            #expect(try await store.blob(reference.hash, of: "m") == nil)
            await Self.refuses(.invalidArgument, "resumes at byte 0 or before") {
                _ = try await store.storeBlob(reference, to: "m", from: Self.pieces([], seed: 14), startingAt: 2 * Self.part)
            }
            await Self.refuses(.missingBlob, "has no blob") { _ = try await store.readBlob(reference.hash, of: "m", from: 0, maxBytes: 1) }
            #expect(try await readWholeBlob(reference.hash, of: "x", in: store, step: Self.part) == bytes)
        }
    }

    /// Two lists upload the same bytes at once, in pieces of their own: both land, one copy.
    @Test(arguments: EngineKind.available)
    func twoUploadsOfTheSameBytesAtOnceBothLand(_ engine: EngineKind) async throws {
        try await engine.withStore(handles: 2) { stores in
            for list in ["a", "b"] { try await stores[0].commit(linearList(1), to: list, expectedVersion: nil, author: nil, message: nil) }
            let bytes = Self.bytes(4 * Self.part + 1, seed: 7)
            let reference = BlobReference(of: bytes)
            async let a = stores[0].storeBlob(reference, to: "a", from: Self.pieces(bytes, seed: 8), startingAt: 0)
            async let b = stores[1].storeBlob(reference, to: "b", from: Self.pieces(bytes, seed: 9), startingAt: 0)
            #expect(try await [a, b].allSatisfy(\.isStored))
            for list in ["a", "b"] { #expect(try await readWholeBlob(reference.hash, of: list, in: stores[0], step: 3 * Self.part) == bytes) }
        }
    }

    /// An upload to a list that another upload of the same blob to that list gave up meanwhile (it
    /// went on from the same part with bytes that are not the blob's) fails with `uploadGivenUp`,
    /// which a client tries again, not with a bad argument; nothing of it is kept, and sent again
    /// from where the list's upload now stands, it lands.
    @Test(arguments: EngineKind.available)
    func anUploadGivenUpByAnotherFailsAsGivenUpAndLandsWhenSentAgain(_ engine: EngineKind) async throws {
        try await engine.withStore(handles: 2) { stores in
            try await stores[0].commit(linearList(1), to: "a", expectedVersion: nil, author: nil, message: nil)
            let bytes = Self.bytes(3 * Self.part + 5, seed: 21)
            let reference = BlobReference(of: bytes)
            let (pieces, more) = AsyncStream.makeStream(of: [UInt8].self)
            let upload = Task { try await stores[0].storeBlob(reference, to: "a", from: pieces, startingAt: 0) }
            more.yield(Array(bytes[..<Self.part]))
            try await waitUntil("the first part is written") { try await stores[1].blob(reference.hash, of: "a")?.uploaded == Self.part }
            var wrong = bytes
            wrong[Self.part + 7] ^= 0xFF
            await Self.refuses(.invalidArgument, "not the blob's") { try await stores[1].storeBlob(reference, to: "a", bytes: wrong) }
            more.yield(Array(bytes[Self.part...]))
            more.finish()
            await #expect {
                _ = try await upload.value
            } throws: { error in
                (error as? StoreError)?.code == .uploadGivenUp && (error as? StoreError)?.message.contains("given up") == true
            }
            #expect(try await stores[1].blob(reference.hash, of: "a") == nil)
            #expect(try await stores[1].storeBlob(reference, to: "a", bytes: bytes).isStored)
            #expect(try await readWholeBlob(reference.hash, of: "a", in: stores[1], step: 2 * Self.part) == bytes)
        }
    }

    /// Random rounds of whole uploads, interrupted ones, resumptions from random offsets, bytes
    /// that are not the blob's, and lists deleted and made again, by two lists over three blobs (one
    /// of less than a part, one of exactly a part, one of several): after each round, a list reads
    /// exactly the blobs its own whole uploads gave it, byte for byte, and the store verifies.
    @Test(arguments: EngineKind.available)
    func randomUploadsKeepEveryListsBlobsExact(_ engine: EngineKind) async throws {
        let blobs = [Self.part / 3, Self.part, 2 * Self.part + 4_321].enumerated().map { k, size in Self.bytes(size, seed: 100 + UInt64(k)) }
        let references = blobs.map { BlobReference(of: $0) }
        try await engine.withStore { stores in
            let store = stores[0]
            let lists = ["a", "b"]
            for list in lists { try await store.commit(linearList(1), to: list, expectedVersion: nil, author: nil, message: nil) }
            var has: [String: Set<Int>] = ["a": [], "b": []]
            var random = SplitMix64(seed: 0xB1_0B5)
            for round in 0..<(engine == .postgres ? 80 : 200) {
                let (list, k) = (lists[Int(random.next() % 2)], Int(random.next() % 3))
                let (bytes, reference) = (blobs[k], references[k])
                let seed = random.next()
                switch random.next() % 6 {
                case 0, 1:
                    try await store.storeBlob(reference, to: list, from: Self.pieces(bytes, seed: seed), startingAt: 0)
                    has[list]!.insert(k)
                case 2:
                    let limit = Int(random.next() % UInt64(bytes.count + 1))
                    _ = try? await store.storeBlob(reference, to: list, from: Self.pieces(bytes, seed: seed, failingAfter: limit), startingAt: 0)
                    if limit >= bytes.count { has[list]!.insert(k) }
                case 3:
                    // Resumes from a random byte up to what its upload sent.
                    let sent = try await store.blob(reference.hash, of: list)?.uploaded ?? 0
                    let offset = Int(random.next() % UInt64(sent + 1))
                    try await store.storeBlob(reference, to: list, from: Self.pieces(Array(bytes[offset...]), seed: seed), startingAt: offset)
                    has[list]!.insert(k)
                case 4:
                    var other = bytes
                    if other.isEmpty { continue }
                    other[Int(random.next() % UInt64(other.count))] ^= 0x40
                    if has[list]!.contains(k) {
                        // A list that has the blob is answered at once: nothing is read.
                        #expect(try await store.storeBlob(reference, to: list, from: Self.pieces(other, seed: seed), startingAt: 0).isStored)
                    } else {
                        await #expect(throws: StoreError.self, "round \(round)") {
                            try await store.storeBlob(reference, to: list, from: Self.pieces(other, seed: seed), startingAt: 0)
                        }
                    }
                default:
                    try await store.deleteList(list)
                    try await store.commit(linearList(1), to: list, expectedVersion: nil, author: nil, message: nil)
                    has[list] = []
                }
                for list in lists {
                    for (k, reference) in references.enumerated() {
                        let stored = try await store.blob(reference.hash, of: list)?.isStored ?? false
                        #expect(stored == has[list]!.contains(k), "round \(round): list \(list), blob \(k)")
                        if stored, round % 10 == 0 || k == 0 {
                            #expect(try await readWholeBlob(reference.hash, of: list, in: store, step: Self.part) == blobs[k], "round \(round)")
                        }
                    }
                }
            }
            #expect(try await store.verify(list: nil, progress: nil).isValid)
        }
    }

    /// A commit, an edit or a push that refers to a blob its list does not have is refused
    /// (`missingBlob`, nothing written); a reference that gives another size than the blob's is
    /// not one (`invalidSnapshot`). Deleting a list takes its blobs from it, and the others keep
    /// theirs.
    @Test(arguments: EngineKind.available)
    func commitsReferOnlyToTheirListsBlobs(_ engine: EngineKind) async throws {
        try await engine.withStore { stores in
            let store = stores[0]
            for list in ["a", "b"] { try await store.commit(linearList(1), to: list, expectedVersion: nil, author: nil, message: nil) }
            let bytes = Self.bytes(1000, seed: 10)
            let photo = BlobReference(of: bytes, type: "image/jpeg")
            let sections = [ListSection(model: ListItem("s"), elements: [ListItem(id: "p", json: ["photo": photo.json])])]
            await Self.refuses(.missingBlob, "list 'a' has no blob \(photo.id)") {
                _ = try await store.commit(sections, to: "a", expectedVersion: nil, author: nil, message: nil)
            }
            try await store.storeBlob(photo, to: "b", bytes: bytes)
            await Self.refuses(.missingBlob, "list 'a' has no blob \(photo.id)") {
                _ = try await store.commit(sections, to: "a", expectedVersion: nil, author: nil, message: nil)
            }
            #expect(try await store.summary(of: "a").version == 1)
            try await store.storeBlob(photo, to: "a", bytes: bytes)
            #expect(try await store.commit(sections, to: "a", expectedVersion: nil, author: nil, message: nil).version == 2)
            let lying = BlobReference(hash: photo.hash, size: 999)
            await Self.refuses(.invalidSnapshot, "gives 999 bytes; the blob has 1000") {
                _ = try await store.commit(
                    [ListSection(model: ListItem("s"), elements: [ListItem(id: "q", json: ["photo": lying.json])])], to: "a", expectedVersion: nil,
                    author: nil, message: nil)
            }
            // Deleting one list leaves the other's blob readable.
            try await store.deleteList("a")
            #expect(try await readWholeBlob(photo.hash, of: "b", in: store, step: 100) == bytes)
            try await store.commit(linearList(1), to: "a", expectedVersion: nil, author: nil, message: nil)
            #expect(try await store.blob(photo.hash, of: "a") == nil)
            #expect(try await store.verify(list: nil, progress: nil).isValid)
        }
    }

    /// A list whose one section holds `photos`: element `p<k>` refers to blob `photos[k]` (or to
    /// none, for `nil`).
    static func album(_ photos: [BlobReference?]) -> [ListSection] {
        [ListSection(model: ListItem("s"), elements: photos.enumerated().map { k, photo in ListItem(id: "p\(k)", json: photo.map { ["photo": $0.json] } ?? .null) })]
    }

    /// Pruning releases the blobs only the dropped versions referred to: not one a kept version
    /// refers to (the new base's snapshot, or an entry after it), not one no version referred to
    /// (uploaded for a commit to come), and the bytes stay while another list has them.
    @Test(arguments: EngineKind.available)
    func pruningReleasesWhatOnlyDroppedVersionsReferTo(_ engine: EngineKind) async throws {
        try await engine.withStore { stores in
            let store = stores[0]
            let bytes = (0..<5).map { Self.bytes(100 + $0, seed: UInt64(20 + $0)) }
            let photos = bytes.map { BlobReference(of: $0, type: "image/jpeg") }
            let (a, b, c, d, e) = (photos[0], photos[1], photos[2], photos[3], photos[4])
            try await store.commit(Self.album([]), to: "l", expectedVersion: nil, author: nil, message: nil)
            try await store.commit(Self.album([]), to: "m", expectedVersion: nil, author: nil, message: nil)
            for k in 0..<5 { try await store.storeBlob(photos[k], to: "l", bytes: bytes[k]) }
            try await store.storeBlob(a, to: "m", bytes: bytes[0])
            // v2: a and b; v3: c and b; v4: c; v5: c and e; v6: c. d is never referred to.
            for photos in [[a, b], [c, b], [c], [c, e], [c]] {
                _ = try await store.commit(Self.album(photos), to: "l", expectedVersion: nil, author: nil, message: nil)
            }
            // Base 4: a and b are only in dropped versions; e is in an entry kept.
            let first = try await store.prune("l", .before(4), force: false)
            #expect(first.releasedBlobs == 2)
            for photo in [a, b] { #expect(try await store.blob(photo.hash, of: "l") == nil) }
            for photo in [c, d, e] { #expect(try await store.blob(photo.hash, of: "l")?.isStored == true) }
            // Another list's copy of a stays readable.
            #expect(try await readWholeBlob(a.hash, of: "m", in: store) == bytes[0])
            // The version that refers to e can still be read, and so can e.
            #expect(try await store.snapshot(of: "l", at: 5).sections == Self.album([c, e]))
            #expect(try await readWholeBlob(e.hash, of: "l", in: store) == bytes[4])
            // A commit that refers to a released blob needs it uploaded again.
            await Self.refuses(.missingBlob, "list 'l' has no blob \(b.id)") {
                _ = try await store.commit(Self.album([b]), to: "l", expectedVersion: nil, author: nil, message: nil)
            }
            // Pruned to the head: e goes; c (the head's) and d (no version's) stay.
            #expect(try await store.prune("l", .keepLast(0), force: false).releasedBlobs == 1)
            #expect(try await store.blob(e.hash, of: "l") == nil)
            for photo in [c, d] { #expect(try await store.blob(photo.hash, of: "l")?.isStored == true) }
            #expect(try await store.prune("l", .keepLast(0), force: false).releasedBlobs == 0)
            try await store.storeBlob(b, to: "l", bytes: bytes[1])
            #expect(try await store.commit(Self.album([b]), to: "l", expectedVersion: nil, author: nil, message: nil).version == 7)
            #expect(try await store.verify(list: nil, progress: nil).isValid)
        }
    }

    /// A prune reads a long journal in batches to its end, on both sides of the new base, and
    /// passes over contents that hold a `$` but no reference.
    @Test(arguments: EngineKind.available)
    func pruningReadsLongJournalsToTheirEnd(_ engine: EngineKind) async throws {
        try await engine.withStore { stores in
            let store = stores[0]
            let bytes = (0..<2).map { Self.bytes(50, seed: UInt64(60 + $0)) }
            let (a, b) = (BlobReference(of: bytes[0]), BlobReference(of: bytes[1]))
            func commit(_ photos: [BlobReference], note: Int? = nil) async throws -> Int {
                var sections = Self.album(photos)
                if let note { sections[0].elements.append(ListItem(id: "note", json: ["text": .string("costs $\(note)")])) }
                return try await store.commit(sections, to: "l", expectedVersion: nil, author: nil, message: nil).version
            }
            _ = try await commit([])
            try await store.storeBlob(a, to: "l", bytes: bytes[0])
            try await store.storeBlob(b, to: "l", bytes: bytes[1])
            // a only in the first of 300 dropped entries; b in a dropped entry and the last kept one.
            _ = try await commit([a])
            for k in 0..<300 { _ = try await commit([], note: k) }
            _ = try await commit([b])
            let base = try await commit([], note: 300)
            for k in 301..<600 { _ = try await commit([], note: k) }
            _ = try await commit([b])
            let first = try await store.prune("l", .before(base), force: false)
            #expect(first.base == base && first.releasedBlobs == 1)
            #expect(try await store.blob(a.hash, of: "l") == nil)
            #expect(try await store.blob(b.hash, of: "l")?.isStored == true)
            _ = try await commit([])
            #expect(try await store.prune("l", .keepLast(0), force: false).releasedBlobs == 1)
            #expect(try await store.blob(b.hash, of: "l") == nil)
        }
    }

    /// A prune gives up the uploads to its list that sent nothing for a week, whether or not its
    /// base moves: their parts go, unless another upload of the blob (here to another list) goes
    /// on; an upload that sent a part since stays. (Time passes by writing an upload's time back.)
    @Test func pruningGivesUpUploadsIdleForAWeekOnSQLite() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("idle.liststore")
        let store = try Store(path: path)
        try await Self.giveUpIdleUploads(in: store) { list in
            let queue = try DatabaseQueue(path: path)
            try await queue.write { db in
                try db.execute(
                    sql: "UPDATE blob_upload SET updated_at = '2026-01-01T00:00:00.000Z' WHERE list_id = (SELECT id FROM list WHERE name = ?)",
                    arguments: [list])
            }
            try queue.close()
        }
    }

    @Test(.enabled(if: PostgresTestEnvironment.url != nil, Comment(rawValue: PostgresTestEnvironment.reason)))
    func pruningGivesUpUploadsIdleForAWeekOnPostgreSQL() async throws {
        try await PostgresTestDatabase.withFresh { database in
            try await database.withStore { store in
                try await Self.giveUpIdleUploads(in: store) { list in
                    try await database.withSQL { client in
                        _ = try await client.query(
                            "UPDATE blob_upload SET updated_at = '2026-01-01T00:00:00.000Z' WHERE list_id = (SELECT id FROM list WHERE name = \(list))",
                            logger: database.configuration.logger)
                    }
                }
            }
        }
    }

    static func giveUpIdleUploads(in store: any ListStoreEngine, age: (String) async throws -> Void) async throws {
        let bytes = Self.bytes(2 * Self.part + 10, seed: 70)
        let blob = BlobReference(of: bytes)
        let firstPart = Array(bytes[..<Self.part])
        for list in ["l", "m"] {
            try await store.commit(linearList(1), to: list, expectedVersion: nil, author: nil, message: nil)
            #expect(try await store.storeBlob(blob, to: list, from: _OnePiece(bytes: firstPart), startingAt: 0).uploaded == Self.part)
        }
        #expect(try await store.prune("l", .keepLast(10), force: false).abandonedUploads == 0)
        // Idle, then resumed: under way again.
        try await age("l")
        let secondPart = Array(bytes[Self.part..<(2 * Self.part)])
        #expect(try await store.storeBlob(blob, to: "l", from: _OnePiece(bytes: secondPart), startingAt: Self.part).uploaded == 2 * Self.part)
        #expect(try await store.prune("l", .keepLast(10), force: false).abandonedUploads == 0)
        try await age("l")
        let pruned = try await store.prune("l", .keepLast(10), force: false)
        #expect(pruned.abandonedUploads == 1 && pruned.base == pruned.previousBase)
        #expect(try await store.blob(blob.hash, of: "l") == nil)
        // m's upload goes on, from the part both sent.
        #expect(try await store.blob(blob.hash, of: "m")?.uploaded == Self.part)
        try await age("m")
        #expect(try await store.prune("m", .keepLast(10), force: false).abandonedUploads == 1)
        #expect(try await store.blob(blob.hash, of: "m") == nil)
        // Nobody uploads the blob now: its parts went, and an upload starts from byte 0.
        await Self.refuses(.invalidArgument, "resumes at byte 0") {
            _ = try await store.storeBlob(blob, to: "m", from: _OnePiece(bytes: Array(bytes[Self.part...])), startingAt: Self.part)
        }
        #expect(try await store.storeBlob(blob, to: "m", bytes: bytes).isStored)
        #expect(try await readWholeBlob(blob.hash, of: "m", in: store) == bytes)
        #expect(try await store.verify(list: nil, progress: nil).isValid)
    }

    /// Random commits, uploads and prunes: after every prune, the list has exactly the blobs a kept
    /// version refers to, plus those it was given and no version ever referred to, and each of those
    /// reads back whole; `releasedBlobs` counts the rest.
    @Test(arguments: EngineKind.available)
    func prunesReleaseExactlyWhatNoKeptVersionReferTo(_ engine: EngineKind) async throws {
        try await engine.withStore { stores in
            let store = stores[0]
            var random = SplitMix64(seed: 0xB10B)
            let bytes = (0..<8).map { Self.bytes(10 + $0, seed: UInt64(40 + $0)) }
            let photos = bytes.map { BlobReference(of: $0) }
            try await store.commit(Self.album([]), to: "l", expectedVersion: nil, author: nil, message: nil)
            // What the model knows: the blobs each version refers to, the base, and the list's blobs.
            var referred: [Int: Set<Int>] = [1: []]
            var (base, has) = (0, Set<Int>())
            for round in 0..<(engine == .memory ? 400 : 150) {
                let head = referred.keys.max()!
                switch random.next() % 4 {
                case 0:
                    let k = Int(random.next() % 8)
                    try await store.storeBlob(photos[k], to: "l", bytes: bytes[k])
                    has.insert(k)
                case 1, 2:
                    let chosen = (0..<3).map { _ in has.randomElement(using: &random).flatMap { random.next() % 3 == 0 ? nil : $0 } }
                    let album = Self.album(chosen.map { $0.map { photos[$0] } })
                    let version = try await store.commit(album, to: "l", expectedVersion: nil, author: nil, message: nil).version
                    referred[version] = Set(chosen.compactMap { $0 })
                default:
                    let keep = Int(random.next() % 4)
                    let newBase = max(base, head - keep)
                    let dropped = referred.filter { $0.key < newBase }.values.reduce(into: Set<Int>()) { $0.formUnion($1) }
                    let kept = referred.filter { $0.key >= newBase }.values.reduce(into: Set<Int>()) { $0.formUnion($1) }
                    let released = dropped.subtracting(kept).intersection(has)
                    let result = try await store.prune("l", .keepLast(keep), force: false)
                    #expect(result.base == newBase, "round \(round)")
                    #expect(result.releasedBlobs == released.count, "round \(round)")
                    has.subtract(released)
                    for version in referred.keys where version < newBase { referred[version] = nil }
                    base = newBase
                }
                for k in 0..<8 {
                    let status = try await store.blob(photos[k].hash, of: "l")
                    #expect((status?.isStored == true) == has.contains(k), "round \(round), blob \(k)")
                }
            }
            for k in has { #expect(try await readWholeBlob(photos[k].hash, of: "l", in: store) == bytes[k]) }
            #expect(try await store.verify(list: nil, progress: nil).isValid)
        }
    }
}
