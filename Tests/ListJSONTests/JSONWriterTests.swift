import ListDiff
import ListDiffTestSupport
import Testing

import ListJSON

/// An item whose content is stored canonical JSON, as a store keeps it: the writer copies it.
private struct StoredItem: JSONWritableItem {
    var id: String
    var stored: [UInt8]

    init(documentID: String, content: JSONValue) {
        id = documentID
        stored = content.serializedBytes()
    }

    var documentID: String { id }
    var differenceIdentifier: String { id }
    func isContentEqual(to source: StoredItem) -> Bool { stored == source.stored }
    func writeContent(to writer: inout JSONWriter) { writer.fragment(stored) }
}

/// The writer of the formats: values written then parsed back, every structure written member by
/// member equal to the value's serialization, and stored fragments appended giving what a full
/// encoding gives.
@Suite(.heavyWork) struct JSONWriterTests {
    /// Writes `value` with the writer's structural calls (object, key, array, scalars) instead of
    /// `value(_:)`, so that separators and nesting are the writer's.
    private func writeStructurally(_ value: JSONValue, _ w: inout JSONWriter) {
        switch value {
        case .null: w.null()
        case .bool(let bool): w.bool(bool)
        case .number(let number):
            if let int = number.int64Value, let small = Int(exactly: int), JSONValue(small) == value {
                w.int(small)
            } else {
                w.value(value)
            }
        case .string(let string): w.string(string)
        case .array(let elements): w.array(elements) { w, element in writeStructurally(element, &w) }
        case .object(let object):
            w.object { w in
                for (key, member) in object {
                    w.key(key)
                    writeStructurally(member, &w)
                }
            }
        }
    }

    @Test func randomValuesWrittenThenParsedBackAreEqual() throws {
        var generator = SnapshotGenerator(seed: 0x5717E, duplicates: true)
        for round in 0..<2_000 {
            let value: JSONValue = .array((0..<generator.below(4)).map { _ in generator.content() })
            var structural = JSONWriter()
            writeStructurally(value, &structural)
            var whole = JSONWriter()
            whole.value(value)
            #expect(whole.bytes == value.serializedBytes(), "round \(round)")
            #expect(structural.bytes == whole.bytes, "round \(round)")
            #expect(try JSONValue(parsing: structural.bytes) == value, "round \(round)")
            #expect(structural.parsedValue == value, "round \(round)")
        }
    }

    @Test func integersAreWrittenAsJSONValueWritesThem() {
        for n in [0, 1, -1, 9, 10, -10, 1234567890, Int.max, Int.min, Int.min + 1] {
            var writer = JSONWriter()
            writer.int(n)
            #expect(writer.bytes == JSONValue(n).serializedBytes(), "\(n)")
        }
        var random = SplitMix64(seed: 7)
        for _ in 0..<1_000 {
            let n = Int(truncatingIfNeeded: random.next()) >> Int(random.next() % 64)
            var writer = JSONWriter()
            writer.int(n)
            #expect(writer.bytes == Array(String(n).utf8), "\(n)")
        }
    }

    @Test func separatorsAndEscapes() {
        let bytes = JSONWriter.object { w in
            w.key("a")
            w.array { w in
                w.null()
                w.bool(true)
                w.bool(false)
                w.object { _ in }
                w.array { _ in }
                w.fragment(Array("[1,{\"x\":2}]".utf8))
                w.string("q\"\\\u{0}\u{1F}\n\té🙂")
            }
            w.key("b\u{0}" as String)  // a key that needs escaping
            w.int(-3)
            w.member("c", ["z": 1, "y": [true]])
            w.schemaVersion()
        }
        #expect(String(decoding: bytes, as: UTF8.self)
            == #"{"a":[null,true,false,{},[],[1,{"x":2}],"q\"\\\u0000\u001f\n\té🙂"],"b\u0000":-3,"c":{"y":[true],"z":1},"schemaVersion":1}"#)
    }

    @Test func fragmentsGiveWhatAFullEncodingGives() throws {
        var generator = SnapshotGenerator(seed: 0xF4A6, duplicates: false)
        for round in 0..<300 {
            // Object members: each written as a value or as its stored bytes.
            var object = JSONObject()
            for k in 0..<generator.below(6) { object["k\(k)"] = generator.content() }
            let mixed = JSONWriter.object { w in
                for (key, member) in object {
                    w.key(key)
                    if generator.below(2) == 0 { w.value(member) } else { w.fragment(member.serializedBytes()) }
                }
            }
            #expect(mixed == JSONValue.object(object).serializedBytes(), "round \(round)")

            // Stages: contents copied as stored, and the stored stages array appended whole.
            let source = generator.snapshot()
            let target = generator.edit(source)
            let changeset = StagedChangeset(source: source, target: target)
            let stored = StagedChangeset(stages: changeset.stages.map(Self.stored))
            var values = JSONWriter()
            values.stages(changeset.stages)
            var copies = JSONWriter()
            copies.stages(stored.stages)
            #expect(copies.bytes == values.bytes, "round \(round)")
            #expect(values.bytes == Self.referenceStages(changeset).serializedBytes(), "round \(round)")

            let document = StageDocument.encode(changeset, extraFields: ["list": "l", "schemaVersion": 1, "version": 3])
            let spliced = JSONWriter.object { w in
                w.member("list", "l")
                w.schemaVersion()
                w.key("stages")
                w.fragment(copies.bytes)
                w.member("version", 3)
            }
            #expect(spliced == document.serializedBytes(), "round \(round)")
            #expect(try StageDocument.decodeStages(try JSONValue(parsing: spliced), applyingTo: source).result == target)

            let snapshot = JSONWriter.object { w in
                w.key("sections")
                w.sections(target.map { ArraySection(model: Self.stored($0.model), elements: $0.elements.map(Self.stored)) })
            }
            #expect(snapshot == SnapshotDocument(sections: target).serializedBytes(), "round \(round)")
        }
    }

    @Test func membersAddsOneKeyInItsPlace() {
        for extra: JSONObject in [[:], ["a": 1], ["z": 2], ["a": 1, "s": 0, "z": 2], ["s": "replaced"]] {
            let bytes = JSONWriter.object { w in w.members(of: extra, adding: "s") { w in w.string("S") } }
            var expected = extra
            expected["s"] = "S"
            #expect(bytes == JSONValue.object(expected).serializedBytes())
        }
    }

    // MARK: Helpers

    private static func stored(_ item: JSONItem) -> StoredItem { StoredItem(documentID: item.id, content: item.content) }

    private static func stored(_ stage: JSONStage) -> Stage<StoredItem, StoredItem> {
        var copy = Stage<StoredItem, StoredItem>()
        copy.sectionDeleted = stage.sectionDeleted
        copy.sectionInserted = stage.sectionInserted.map {
            .init(index: $0.index, section: ArraySection(model: stored($0.section.model), elements: $0.section.elements.map(stored)))
        }
        copy.sectionMoved = stage.sectionMoved
        copy.sectionUpdated = stage.sectionUpdated.map { .init(index: $0.index, model: stored($0.model)) }
        copy.elementDeleted = stage.elementDeleted
        copy.elementInserted = stage.elementInserted.map { .init(path: $0.path, element: stored($0.element)) }
        copy.elementMoved = stage.elementMoved
        copy.elementUpdated = stage.elementUpdated.map { .init(path: $0.path, element: stored($0.element)) }
        return copy
    }

    /// The stage objects of Docs/Formats.md built as values, key by key: an independent reference.
    private static func referenceStages(_ changeset: StagedChangeset<JSONItem, JSONItem>) -> JSONValue {
        func path(_ path: ElementPath) -> JSONValue { ["element": JSONValue(path.element), "section": JSONValue(path.section)] }
        func section(_ section: JSONSection) -> JSONValue {
            ["content": section.model.content, "elements": .array(section.elements.map(\.jsonValue)), "id": .string(section.model.id)]
        }
        return .array(changeset.stages.map { stage in
            var object = JSONObject()
            func add(_ key: String, _ values: [JSONValue]) { if !values.isEmpty { object[key] = .array(values) } }
            add("elementDeleted", stage.elementDeleted.map(path))
            add("elementInserted", stage.elementInserted.map {
                ["content": $0.element.content, "element": JSONValue($0.path.element), "id": .string($0.element.id),
                 "section": JSONValue($0.path.section)]
            })
            add("elementMoved", stage.elementMoved.map { ["from": path($0.from), "to": path($0.to)] })
            add("elementUpdated", stage.elementUpdated.map {
                ["content": $0.element.content, "element": JSONValue($0.path.element), "section": JSONValue($0.path.section)]
            })
            add("sectionDeleted", stage.sectionDeleted.map { JSONValue($0) })
            add("sectionInserted", stage.sectionInserted.map {
                var members = section($0.section).objectValue!
                members["index"] = JSONValue($0.index)
                return .object(members)
            })
            add("sectionMoved", stage.sectionMoved.map { ["from": JSONValue($0.from), "to": JSONValue($0.to)] })
            add("sectionUpdated", stage.sectionUpdated.map { ["content": $0.model.content, "index": JSONValue($0.index)] })
            return .object(object)
        })
    }
}
