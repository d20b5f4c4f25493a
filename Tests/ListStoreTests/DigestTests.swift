import ListDiff
import ListStore
import ListStoreTestSupport
import ListDiffTestSupport
import Testing

/// The test vectors of the documentation (ListStore.docc/ContentHashAndDigest.md, "Test vectors"): anyone can recompute them with `sha256sum` and a few lines of code.
@Suite(.heavyWork) struct DigestTests {
    @Test func contentHashIsSHA256OfTheContentBytes() {
        #expect(ContentHash(of: Array("null".utf8)).hex == "74234e98afe7498fb5daf1f36ac2d78acc339464f950703b8c019892f982b90b")
        #expect(
            ContentHash(of: Array(#"{"text":"hi"}"#.utf8)).hex
                == "e7b995efa755c5ff3b84d2188b58cb4ae916a59470eb3761df8a814f11763500")
        let hash = ContentHash(of: Array("null".utf8))
        #expect(ContentHash(bytes: hash.bytes) == hash)
        #expect(ContentHash(bytes: [1, 2, 3]) == nil)
    }

    @Test func listDigestVectors() {
        #expect(ListDigest.of([]).hex == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        let inbox = [
            ListSection(
                model: ListItem(id: "today", json: ["title": "Today"]),
                elements: [ListItem(id: "m1", json: ["text": "hi"]), ListItem(id: "m2", json: .null)]),
            ListSection(model: ListItem(id: "later", json: .null), elements: []),
        ]
        #expect(ListDigest.of(inbox).hex == "761b4262bc087f06c33ad3c2f9e81ccc7264222dcd75c41124d5f870ca6cb86e")
        let odd = [ListSection(model: ListItem(id: "", json: .null), elements: [ListItem(id: "\u{E9}\u{0}x", json: 1)])]
        #expect(ListDigest.of(odd).hex == "5e50e3b1d5541a6ae62be6389836f9d6c7c7c3eb6c9e5a371a19ca411c1d280d")
        // NFC and NFD ids are different items, so different lists.
        let nfd = [ListSection(model: ListItem(id: "", json: .null), elements: [ListItem(id: "e\u{301}\u{0}x", json: 1)])]
        #expect(ListDigest.of(nfd) != ListDigest.of(odd))
    }

    @Test func storeRecordsTheDigestOfTheCommittedList() throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("d.liststore"))
        let inbox = [
            ListSection(
                model: ListItem(id: "today", json: ["title": "Today"]),
                elements: [ListItem(id: "m1", json: ["text": "hi"]), ListItem(id: "m2", json: .null)]),
            ListSection(model: ListItem(id: "later", json: .null), elements: []),
        ]
        let result = try store.commit(inbox, to: "inbox")
        #expect(result.digest.hex == "761b4262bc087f06c33ad3c2f9e81ccc7264222dcd75c41124d5f870ca6cb86e")
        #expect(try store.lists().first?.digest == result.digest)
    }
}
