import ListDiff
import ListDiffTestSupport
import ListJSON
import ListStore
import ListStoreTestSupport
import Testing

/// The store writes its JSON (journal stages, snapshot documents) straight from stored bytes; it must
/// be exactly what ListJSON writes for the same values.
@Suite(.heavyWork) struct JSONEncodingTests {
    private func json(_ item: ListItem) throws -> JSONItem { JSONItem(id: item.id, content: try item.json) }

    private func json(_ sections: [ListSection]) throws -> [JSONSection] {
        try sections.map { JSONSection(model: try json($0.model), elements: try $0.elements.map(json)) }
    }

    @Test func stagesJSONIsWhatStageDocumentWrites() throws {
        var random = RandomSnapshots(seed: 0xE4C0DE, duplicates: true)
        for _ in 0..<300 {
            let source = random.snapshot(maxSections: 4, maxElements: 6)
            let target = random.edit(source, intensity: 0.5)
            let stored = ListChangeset(source: listSections(source), target: listSections(target))
            let reference = StagedChangeset(source: try json(listSections(source)), target: try json(listSections(target)))
            #expect(stored.stagesJSON == StageDocument.encode(stages: reference).serializedBytes())
        }
    }

    @Test func documentJSONIsWhatSnapshotDocumentWrites() throws {
        var random = RandomSnapshots(seed: 0xD0C, duplicates: true)
        for version in 0..<100 {
            let sections = listSections(random.snapshot(maxSections: 4, maxElements: 6))
            let snapshot = ListSnapshot(list: "l\u{0}é", version: version, digest: ListDigest.of(sections), sections: sections)
            let extra: JSONObject = [
                "digest": .string(snapshot.digest.hex), "list": .string(snapshot.list), "schemaVersion": 1,
                "version": JSONValue(version),
            ]
            #expect(snapshot.documentJSON == SnapshotDocument(sections: try json(sections)).serializedBytes(extraFields: extra))
        }
    }
}
