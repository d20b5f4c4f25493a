import ListJSON
import ListStore
import ListStorePostgresTestSupport
import ListStoreTestSupport
import ListDiffTestSupport
import Testing

/// Attachments' references in contents: `BlobReference` reads them out of any content, and a store
/// refuses a content with an object keyed `"$blob"` that is not one, as it refuses content that is
/// not canonical JSON, changing nothing.
@Suite struct BlobReferenceTests {
    static let photo = BlobReference(of: Array("a photo's bytes".utf8), type: "image/jpeg", name: "IMG_1.jpg")

    @Test func aReferenceIsWrittenAsTheDesignSays() throws {
        #expect(Self.photo.id == "sha256-" + ContentHash(of: Array("a photo's bytes".utf8)).hex)
        #expect(
            Self.photo.json.serialized()
                == #"{"$blob":"\#(Self.photo.id)","name":"IMG_1.jpg","size":15,"type":"image/jpeg"}"#)
        let bare = BlobReference(hash: Self.photo.hash, size: 0)
        #expect(bare.json.serialized() == #"{"$blob":"\#(bare.id)","size":0}"#)
        #expect(BlobReference.hash(ofID: Self.photo.id) == Self.photo.hash)
        let hex = Self.photo.hash.hex
        for id in ["sha256-" + hex.uppercased(), "sha256-" + hex.dropLast(), "sha256-" + hex + "0", "sha512-" + hex, hex, "sha256-" + hex.dropLast() + "g"] {
            #expect(BlobReference.hash(ofID: id) == nil, "\(id)")
        }
    }

    /// Thousands of random contents with references at random places (in arrays, in objects, the
    /// content itself): `references(in:)` finds exactly those, in order, and a store takes them.
    @Test func referencesAreFoundWhereverTheyAre() throws {
        var random = SplitMix64(seed: 0xB10B)
        for round in 0..<3_000 {
            var placed = [BlobReference]()
            func value(_ depth: Int) -> JSONValue {
                switch random.next() % (depth > 4 ? 3 : 6) {
                case 0: return .number(JSONNumber(Int(random.next() % 100)))
                case 1: return .string("s\(random.next() % 10)")
                case 2:
                    let bytes = (0..<Int(random.next() % 8)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
                    let reference = BlobReference(
                        of: bytes, type: random.next() % 2 == 0 ? nil : "text/plain", name: random.next() % 2 == 0 ? nil : "n\(round)")
                    placed.append(reference)
                    return reference.json
                case 3, 4: return .array((0..<Int(random.next() % 4)).map { _ in value(depth + 1) })
                default:
                    // Keys in canonical order, so that the references are met in the order placed.
                    return .object(JSONObject(uniqueKeysWithValues: (0..<Int(random.next() % 4)).map { ("k\($0)", value(depth + 1)) }))
                }
            }
            let content = value(0)
            #expect(try BlobReference.references(in: content) == placed, "round \(round): \(content.serialized())")
        }
    }

    /// Objects keyed `"$blob"` that are not references, each refused with the reason.
    static let malformed: [(json: String, reason: String)] = {
        let id = photo.id
        return [
            (#"{"$blob":"sha256-ABC","size":1}"#, "sha256-"),
            (#"{"$blob":"\#(id.uppercased())","size":1}"#, "lowercase"),
            (#"{"$blob":7,"size":1}"#, "sha256-"),
            (#"{"$blob":"\#(id)"}"#, "\"size\""),
            (#"{"$blob":"\#(id)","size":-1}"#, "\"size\""),
            (#"{"$blob":"\#(id)","size":1.5}"#, "\"size\""),
            (#"{"$blob":"\#(id)","size":"1"}"#, "\"size\""),
            (#"{"$blob":"\#(id)","size":1125899906842625}"#, "\"size\""),
            (#"{"$blob":"\#(id)","size":1,"type":3}"#, "\"type\""),
            (#"{"$blob":"\#(id)","name":null,"size":1}"#, "\"name\""),
            (#"{"$blob":"\#(id)","name":"\#(String(repeating: "n", count: 1_025))","size":1}"#, "\"name\""),
            (#"{"$blob":"\#(id)","size":1,"width":640}"#, "\"width\""),
        ]
    }()

    @Test func malformedReferencesAreRefusedWithTheirReason() throws {
        for (json, reason) in Self.malformed {
            let value = try JSONParser().parse(Array(json.utf8))
            #expect {
                _ = try BlobReference.references(in: ["list": [value]])
            } throws: { error in
                let error = error as? StoreError
                return error?.code == .invalidSnapshot && error?.message.contains(reason) == true
            }
        }
    }

    /// A commit with a malformed reference in a new element, an updated one or a section's content
    /// is refused with `invalidSnapshot` naming where, on every engine, and changes nothing; one with
    /// references commits and reads back.
    @Test(arguments: EngineKind.available)
    func aStoreRefusesMalformedReferencesAndKeepsGoodOnes(_ engine: EngineKind) async throws {
        try await engine.withStore { stores in
            let store = stores[0]
            let photo = ListItem(id: "p", json: ["title": "Beach", "photo": Self.photo.json])
            // The list is made, the photo uploaded to it, and then referred to.
            try await store.commit([ListSection(model: ListItem("s"), elements: [])], to: "l", expectedVersion: nil, author: nil, message: nil)
            try await store.storeBlob(Self.photo, to: "l", bytes: Array("a photo's bytes".utf8))
            let v1 = [ListSection(model: ListItem(id: "s", json: ["cover": Self.photo.json]), elements: [ListItem("a"), photo])]
            #expect(try await store.commit(v1, to: "l", expectedVersion: nil, author: nil, message: nil).version == 2)
            #expect(try await store.snapshot(of: "l", at: nil).sections == v1)
            for (json, reason) in Self.malformed {
                let badJSON: JSONValue = ["photo": try JSONParser().parse(Array(json.utf8))]
                let bad = ListItem(id: "x", json: badJSON)
                let attempts: [(sections: [ListSection], place: String)] = [
                    ([ListSection(model: v1[0].model, elements: [ListItem("a"), photo, bad])], "sections[0].elements[2]"),
                    ([ListSection(model: v1[0].model, elements: [ListItem(id: "a", json: badJSON), photo])], "sections[0].elements[0]"),
                    ([ListSection(model: ListItem(id: "s", json: badJSON), elements: v1[0].elements)], "sections[0]"),
                ]
                for attempt in attempts {
                    await #expect {
                        _ = try await store.commit(attempt.sections, to: "l", expectedVersion: nil, author: nil, message: nil)
                    } throws: { error in
                        let error = error as? StoreError
                        return error?.code == .invalidSnapshot && error?.message.contains(reason) == true
                            && error?.message.contains(attempt.place) == true
                    }
                }
            }
            #expect(try await store.summary(of: "l").version == 2)
            #expect(try await store.verify(list: nil, progress: nil).isValid)
        }
    }
}
