import ListDiff
import ListJSON
import ListDiffTestSupport
import Testing

/// Snapshot documents (Docs/Formats.md): decoding, errors naming the place, and round trips.
@Suite(.heavyWork) struct SnapshotDocumentTests {
    private func error(_ text: String) throws -> DocumentError? {
        let value = try JSONValue(parsing: text)
        do {
            let document = try SnapshotDocument(decoding: value)
            Issue.record("accepted \(text) as \(document)")
            return nil
        } catch {
            return error
        }
    }

    @Test func decodesTheDesignExample() throws {
        let text = """
            {"sections": [
              {"id": "today", "content": {"title": "Today"},
               "elements": [{"id": "m1", "content": {"text": "hi"}}, {"id": "m2", "content": null}]}
            ]}
            """
        let document = try SnapshotDocument(decoding: JSONValue(parsing: text))
        #expect(document.sections == [
            ArraySection(model: JSONItem(id: "today", content: ["title": "Today"]),
                         elements: [JSONItem(id: "m1", content: ["text": "hi"]), JSONItem(id: "m2")]),
        ])
    }

    @Test func optionalKeysAndUnknownKeys() throws {
        let text = #"""
            {"schemaVersion": 1, "digest": "x", "sections": [
              {"id": "", "extra": [1], "elements": [{"id": "a\u0000b", "hash": "h"}, {"id": "日本", "content": 18446744073709551615}]},
              {"id": "s2", "content": 0.1000000000000000055511151231257827}
            ]}
            """#
        let document = try SnapshotDocument(decoding: JSONValue(parsing: text))
        #expect(document.sections.count == 2)
        #expect(document.sections[0].model == JSONItem(id: "", content: .null))
        #expect(document.sections[0].elements == [JSONItem(id: "a\u{0}b"), JSONItem(id: "日本", content: JSONValue(UInt64.max))])
        #expect(document.sections[1].elements.isEmpty)
        #expect(document.sections[1].model.content.serialized() == "0.1000000000000000055511151231257827")
        #expect(try SnapshotDocument(decoding: JSONValue(parsing: #"{"sections":[]}"#)).sections.isEmpty)
    }

    @Test(arguments: [
        ("[]", "top level: expected an object, found array"),
        ("{}", "sections: required but missing"),
        (#"{"section": []}"#, "sections: required but missing"),
        (#"{"sections": {}}"#, "sections: expected an array, found object"),
        (#"{"sections": null}"#, "sections: expected an array, found null"),
        (#"{"sections": ["s"]}"#, "sections[0]: expected an object, found string"),
        (#"{"sections": [{}]}"#, "sections[0].id: required but missing"),
        (#"{"sections": [{"id": 1}]}"#, "sections[0].id: expected a string, found number"),
        (#"{"sections": [{"id": null}]}"#, "sections[0].id: expected a string, found null"),
        (#"{"sections": [{"id": "s", "elements": null}]}"#, "sections[0].elements: expected an array, found null"),
        (#"{"sections": [{"id": "s", "elements": [{"id": "e"}, []]}]}"#, "sections[0].elements[1]: expected an object, found array"),
        (#"{"sections": [{"id": "s", "elements": [{"content": 1}]}]}"#, "sections[0].elements[0].id: required but missing"),
        (#"{"sections": [{"id": "a"}, {"id": "b"}, {"id": "c", "elements": [{"id": "0"}, {"id": "1"}, {"id": "2"}, {"id": "3"}, {"id": "4"}, {"id": 5}]}]}"#,
         "sections[2].elements[5].id: expected a string, found number"),
        (#"{"sections": [{"id": "s", "elements": [{"id": true}]}]}"#, "sections[0].elements[0].id: expected a string, found boolean"),
    ])
    func errorsNameThePlace(_ text: String, _ message: String) throws {
        #expect(try error(text)?.description == message)
    }

    @Test func errorsCarryStructuredPaths() throws {
        let failure = try #require(try error(#"{"sections": [{"id": "s", "elements": [{"id": 1}]}]}"#))
        #expect(failure.path == [.key("sections"), .index(0), .key("elements"), .index(0), .key("id")])
        #expect(failure.reason == .typeMismatch(expected: "a string", found: "number"))
        #expect(failure.pathDescription == "sections[0].elements[0].id")
    }

    private let sample: [JSONSection] = [
        ArraySection(model: JSONItem(id: "s\u{0}1", content: ["title": "Tôday", "n": JSONValue(Int64.min)]),
                     elements: [JSONItem(id: "e1", content: "x\n"), JSONItem(id: "\u{E9}"), JSONItem(id: "e\u{301}", content: [1, 2.5])]),
        ArraySection(model: JSONItem(id: ""), elements: []),
    ]

    @Test func writesEveryKeyCanonically() {
        let document = SnapshotDocument(sections: [
            ArraySection(model: JSONItem(id: "today", content: ["title": "Today"]),
                         elements: [JSONItem(id: "m1", content: ["text": "hi"]), JSONItem(id: "m2")]),
            ArraySection(model: JSONItem(id: "empty"), elements: []),
        ])
        let expected = #"{"list":"L","schemaVersion":1,"sections":[{"content":{"title":"Today"},"elements":[{"content":{"text":"hi"},"id":"m1"},{"content":null,"id":"m2"}],"id":"today"},{"content":null,"elements":[],"id":"empty"}],"version":3}"#
        let extra: JSONObject = ["schemaVersion": 1, "list": "L", "version": 3, "sections": "replaced"]
        #expect(document.jsonValue(extraFields: extra).serialized() == expected)
        #expect(document.serializedBytes(extraFields: extra) == Array(expected.utf8))
        #expect(SnapshotDocument(sections: []).serializedBytes() == Array(#"{"sections":[]}"#.utf8))
    }

    @Test func directSerialisationMatchesTheValue() {
        let document = SnapshotDocument(sections: sample)
        for extra: JSONObject in [[:], ["a": 1], ["z": [.null]], ["a": 1, "sections": 2, "t": "x", "\u{0}": 0], ["sectionsA": 1, "section": 2]] {
            #expect(document.serializedBytes(extraFields: extra) == document.jsonValue(extraFields: extra).serializedBytes())
        }
    }

    @Test func roundTripsExactly() throws {
        let document = SnapshotDocument(sections: sample)
        let bytes = document.serializedBytes(extraFields: ["schemaVersion": 1])
        let value = try JSONValue(parsing: bytes)
        #expect(value == document.jsonValue(extraFields: ["schemaVersion": 1]))
        let again = try SnapshotDocument(decoding: value)
        #expect(again == document)
        // Ids that differ only in Unicode normalisation stay different.
        #expect(again.sections[0].elements[1].id.utf8.elementsEqual("\u{E9}".utf8))
        #expect(again.sections[0].elements[2].id.utf8.elementsEqual("e\u{301}".utf8))
        #expect(again.sections[0].elements[1] != again.sections[0].elements[2])
        #expect(try JSONValue(parsing: again.serializedBytes(extraFields: ["schemaVersion": 1])).serializedBytes() == bytes)
    }

    @Test func singleSectionsAndItems() throws {
        let section = sample[0]
        #expect(try SnapshotDocument.section(decoding: SnapshotDocument.sectionValue(section)) == section)
        let item = JSONItem(id: "m", content: ["k": [true]])
        #expect(item.jsonValue.serialized() == #"{"content":{"k":[true]},"id":"m"}"#)
        #expect(try JSONItem(decoding: item.jsonValue) == item)
        #expect(throws: DocumentError(.missing, path: [.key("id")])) { try JSONItem(decoding: ["content": 1]) }
        #expect(SnapshotDocument.sectionsValue(sample) == SnapshotDocument(sections: sample).jsonValue()["sections"])
    }

    @Test func itemsAreIdentifiedByExactId() throws {
        let a = JSONItem(id: "\u{E9}", content: 1)
        let b = JSONItem(id: "e\u{301}", content: 1)
        #expect(a.differenceIdentifier != b.differenceIdentifier)
        #expect(a != b)
        #expect(a.isContentEqual(to: b))
        #expect(!a.isContentEqual(to: JSONItem(id: "\u{E9}", content: "1")))
        let source = [ArraySection(model: JSONItem(id: "s"), elements: [a])]
        let target = [ArraySection(model: JSONItem(id: "s"), elements: [b])]
        let changeset = StagedChangeset(source: source, target: target)
        #expect(changeset.counts.elementDeleted == 1 && changeset.counts.elementInserted == 1)
        #expect(try changeset.apply(to: source) == target)
    }
}
