import Foundation
import ListJSON
import ListStore
import ListStoreTestSupport
import ListStoreWire
import ListSync
import Testing

/// Contents at the store's depth limit travel through every document of the sync protocol: the log
/// document, commit events, diffs and snapshots, and replicas pull past them.
@Suite struct DeepContentSyncTests {
    @Test func replicasAndDocumentsCarryContentAtTheDepthLimit() async throws {
        let directory = try TemporaryDirectory()
        let source = try Store(path: directory.file("source.liststore"))
        var deep: JSONValue = 7
        for level in 0..<JSONParser.maxContentDepth { deep = level % 2 == 0 ? [deep] : ["k": deep] }
        let v1 = [ListSection(model: ListItem("s"), elements: [ListItem("e")])]
        let v2 = [
            ListSection(model: ListItem(id: "s", json: deep), elements: [ListItem(id: "e", json: deep)]),
            ListSection(model: ListItem(id: "t", json: deep), elements: [ListItem(id: "f", json: deep)]),
        ]
        try await source.commit(v1, to: "l")
        try await source.commit(v2, to: "l")

        let page = try await source.journal(of: "l")
        // The document carries the entries and hasMore (the list's identity is the store's).
        let decodedPage = try WireDocument.decodeJournal(WireDocument.journal(page, list: "l"))
        #expect(decodedPage.entries == page.entries && decodedPage.hasMore == page.hasMore)
        for entry in page.entries {
            #expect(try WireDocument.decodeCommitObject(WireDocument.commitObject(entry), list: "l") == entry)
        }
        let head = try await source.snapshot(of: "l")
        #expect(try WireDocument.decodeSnapshot(head.documentJSON).sections == v2)
        let (_, _, changeset) = try await source.changeset(of: "l", from: 1)
        let (decoded, target) = try WireDocument.decodeDiff(WireDocument.diff(changeset, from: 1, to: head), applyingTo: v1)
        #expect(target.sections == v2 && decoded.count == changeset.count)

        let replica = Replica(store: try Store(path: directory.file("replica.liststore")), list: "l")
        let result = try await replica.pull(from: LocalSource(source))
        #expect(result.version == 2)
        #expect(try await replica.store.snapshot(of: "l").sections == v2)
        #expect(try await replica.store.verify().isValid)
    }
}
