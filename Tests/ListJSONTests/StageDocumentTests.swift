import ListDiff
import ListDiffTestSupport
import ListJSON
import Testing

/// Random JSON snapshots with awkward ids and exact contents, and random edits of them.
struct SnapshotGenerator {
    var rng: SplitMix64
    var counter = 0
    let duplicates: Bool
    static let idPieces = ["a", "", "\u{E9}", "e\u{301}", "日本", "🙂", "a\u{0}b", "\"\\"]
    static let literals = ["0.1000000000000000055511151231257827", "18446744073709551615", "-9223372036854775808", "-0", "1E400", "2.50"]

    init(seed: UInt64, duplicates: Bool) {
        rng = SplitMix64(seed: seed)
        self.duplicates = duplicates
    }

    mutating func below(_ n: Int) -> Int { Int(rng.next() % UInt64(n)) }

    mutating func id(_ prefix: String) -> String {
        let piece = Self.idPieces[below(Self.idPieces.count)]
        if duplicates && below(3) == 0 { return prefix + piece }
        counter += 1
        return prefix + piece + String(counter)
    }

    mutating func content(depth: Int = 0) -> JSONValue {
        switch below(depth > 1 ? 5 : 7) {
        case 0: return .null
        case 1: return JSONValue(below(4))
        case 2: return .number(JSONNumber(literal: Self.literals[below(Self.literals.count)])!)
        case 3: return .string(Self.idPieces[below(Self.idPieces.count)] + "\n\u{1}")
        case 4: return .bool(below(2) == 0)
        case 5: return .array((0..<below(3)).map { _ in content(depth: depth + 1) })
        default:
            var object = JSONObject()
            for _ in 0..<below(3) { object[Self.idPieces[below(Self.idPieces.count)]] = content(depth: depth + 1) }
            return .object(object)
        }
    }

    mutating func item(_ prefix: String) -> JSONItem { JSONItem(id: id(prefix), content: content()) }

    mutating func snapshot() -> [JSONSection] {
        (0..<below(6)).map { _ in ArraySection(model: item("s"), elements: (0..<below(8)).map { _ in item("e") }) }
    }

    mutating func edit(_ source: [JSONSection]) -> [JSONSection] {
        var target = source
        let intensity = [2, 4, 8][below(3)]
        func chance() -> Bool { below(10) < intensity }
        target = target.filter { _ in !(chance() && chance()) }
        if chance(), !target.isEmpty {
            let section = target.remove(at: below(target.count))
            target.insert(section, at: below(target.count + 1))
        }
        for s in target.indices where chance() && chance() { target[s].model.content = content() }
        if chance() {
            target.insert(ArraySection(model: item("s"), elements: (0..<below(4)).map { _ in item("e") }), at: below(target.count + 1))
        }
        guard !target.isEmpty else { return target }
        for s in target.indices {
            target[s].elements = target[s].elements.filter { _ in !(chance() && chance()) }
            for e in target[s].elements.indices where chance() { target[s].elements[e].content = content() }
            for _ in 0..<below(3) where chance() {
                target[s].elements.insert(item("e"), at: below(target[s].elements.count + 1))
            }
        }
        for _ in 0..<below(5) where chance() {
            let s = below(target.count)
            guard !target[s].elements.isEmpty else { continue }
            let moved = target[s].elements.remove(at: below(target[s].elements.count))
            let d = below(target.count)
            target[d].elements.insert(moved, at: below(target[d].elements.count + 1))
        }
        if chance() {
            for s in target.indices where chance() { target[s].elements.shuffle(using: &rng) }
        }
        return target
    }
}

/// Stage objects (Docs/Formats.md): the exact format, decoding errors, and encode → decode → apply round
/// trips.
@Suite(.heavyWork) struct StageDocumentTests {
    private func section(_ id: String, _ content: JSONValue = .null, _ elements: [JSONItem] = []) -> JSONSection {
        ArraySection(model: JSONItem(id: id, content: content), elements: elements)
    }

    @Test func encodesTheDesignFormat() {
        var stage = JSONStage()
        stage.sectionDeleted = [2]
        stage.sectionInserted = [.init(index: 0, section: section("s9", .null, [JSONItem(id: "e1", content: 1)]))]
        stage.sectionMoved = [Move(from: 1, to: 3)]
        stage.elementDeleted = [ElementPath(section: 0, element: 3)]
        stage.elementInserted = [.init(path: ElementPath(section: 0, element: 0), element: JSONItem(id: "e7", content: "x"))]
        stage.elementMoved = [Move(from: ElementPath(section: 0, element: 1), to: ElementPath(section: 2, element: 0))]
        let expected = #"{"elementDeleted":[{"element":3,"section":0}],"elementInserted":[{"content":"x","element":0,"id":"e7","section":0}],"elementMoved":[{"from":{"element":1,"section":0},"to":{"element":0,"section":2}}],"sectionDeleted":[2],"sectionInserted":[{"content":null,"elements":[{"content":1,"id":"e1"}],"id":"s9","index":0}],"sectionMoved":[{"from":1,"to":3}]}"#
        #expect(StageDocument.encode(stage).serialized() == expected)

        var updates = JSONStage()
        updates.sectionUpdated = [.init(index: 1, model: JSONItem(id: "s1", content: ["title": "New"]))]
        updates.elementUpdated = [.init(path: ElementPath(section: 1, element: 4), element: JSONItem(id: "e", content: ["n": 2]))]
        #expect(StageDocument.encode(updates).serialized()
            == #"{"elementUpdated":[{"content":{"n":2},"element":4,"section":1}],"sectionUpdated":[{"content":{"title":"New"},"index":1}]}"#)
        #expect(StageDocument.encode(JSONStage()).serialized() == "{}")
        let list = StageDocument.encode(StagedChangeset(stages: [updates]), extraFields: ["schemaVersion": 1, "stages": 0])
        #expect(list["stages"] == [StageDocument.encode(updates)] && list["schemaVersion"] == 1)
        #expect(StageDocument.encode(stages: [updates, stage]) == [StageDocument.encode(updates), StageDocument.encode(stage)])
    }

    @Test func decodesTheDesignExample() throws {
        let text = """
            {"sectionDeleted": [2],
             "sectionInserted": [{"index": 0, "id": "s9", "content": null, "elements": [{"id": "e1", "content": 1}]}],
             "sectionMoved": [{"from": 1, "to": 3}],
             "elementDeleted": [{"section": 0, "element": 3}],
             "elementInserted": [{"section": 0, "element": 0, "id": "e7", "content": "x"}],
             "elementMoved": [{"from": {"section": 0, "element": 1}, "to": {"section": 2, "element": 0}}],
             "unknown": true}
            """
        let stage = try StageDocument.decodeStage(JSONValue(parsing: text), applyingTo: [])
        #expect(stage.sectionDeleted == [2])
        #expect(stage.sectionInserted == [.init(index: 0, section: section("s9", .null, [JSONItem(id: "e1", content: 1)]))])
        #expect(stage.sectionMoved == [Move(from: 1, to: 3)])
        #expect(stage.elementDeleted == [ElementPath(section: 0, element: 3)])
        #expect(stage.elementInserted == [.init(path: ElementPath(section: 0, element: 0), element: JSONItem(id: "e7", content: "x"))])
        #expect(stage.elementMoved == [Move(from: ElementPath(section: 0, element: 1), to: ElementPath(section: 2, element: 0))])
        #expect(stage.sectionUpdated.isEmpty && stage.elementUpdated.isEmpty)
    }

    @Test func updatesTakeTheirIdsFromTheState() throws {
        let state = [section("a", 1, [JSONItem(id: "x"), JSONItem(id: "y")]), section("b", 2, [JSONItem(id: "z")])]
        let value = try JSONValue(parsing: #"{"sectionUpdated":[{"index":1,"content":"B"}],"elementUpdated":[{"section":0,"element":1,"content":7},{"section":1,"element":0}]}"#)
        let stage = try StageDocument.decodeStage(value, applyingTo: state)
        #expect(stage.sectionUpdated == [.init(index: 1, model: JSONItem(id: "b", content: "B"))])
        #expect(stage.elementUpdated == [
            .init(path: ElementPath(section: 0, element: 1), element: JSONItem(id: "y", content: 7)),
            .init(path: ElementPath(section: 1, element: 0), element: JSONItem(id: "z", content: .null)),
        ])
        #expect(try stage.apply(to: state) == [section("a", 1, [JSONItem(id: "x"), JSONItem(id: "y", content: 7)]), section("b", "B", [JSONItem(id: "z")])])

        // A stage that mixes updates with other operations: ids come from where the update lands.
        let mixed = try JSONValue(parsing: #"{"sectionDeleted":[0],"sectionUpdated":[{"index":0,"content":null}],"elementUpdated":[{"section":0,"element":0,"content":1}]}"#)
        let decoded = try StageDocument.decodeStage(mixed, applyingTo: state)
        #expect(decoded.sectionUpdated.first?.model.id == "b")
        #expect(decoded.elementUpdated.first?.element.id == "z")
    }

    @Test(arguments: [
        ("[]", "top level: expected an object, found array"),
        (#"{"sectionDeleted": 1}"#, "sectionDeleted: expected an array, found number"),
        (#"{"sectionDeleted": [-1]}"#, "sectionDeleted[0]: expected a non-negative integer, found -1"),
        (#"{"sectionDeleted": [0, 1.5]}"#, "sectionDeleted[1]: expected a non-negative integer, found 1.5"),
        (#"{"sectionDeleted": [99999999999999999999]}"#, "sectionDeleted[0]: expected a non-negative integer, found 99999999999999999999"),
        (#"{"sectionDeleted": ["0"]}"#, "sectionDeleted[0]: expected a non-negative integer, found string"),
        (#"{"sectionInserted": [{"id": "s"}]}"#, "sectionInserted[0].index: required but missing"),
        (#"{"sectionInserted": [{"index": 0}]}"#, "sectionInserted[0].id: required but missing"),
        (#"{"sectionInserted": [{"index": 0, "id": "s", "elements": [{"id": 3}]}]}"#, "sectionInserted[0].elements[0].id: expected a string, found number"),
        (#"{"sectionMoved": [{"from": 0}]}"#, "sectionMoved[0].to: required but missing"),
        (#"{"elementMoved": [{"from": {"section": 0, "element": 0}, "to": {"section": "0", "element": 0}}]}"#,
         "elementMoved[0].to.section: expected a non-negative integer, found string"),
        (#"{"elementDeleted": [{"section": 0}]}"#, "elementDeleted[0].element: required but missing"),
        (#"{"elementInserted": [{"section": 0, "element": 0, "id": null}]}"#, "elementInserted[0].id: expected a string, found null"),
        (#"{"sectionUpdated": [{"index": 2, "content": 1}]}"#, "sectionUpdated[0].index: section 2 is out of range (the state has 2 sections)"),
        (#"{"elementUpdated": [{"section": 0, "element": 0}, {"section": 2, "element": 0}]}"#,
         "elementUpdated[1].section: section 2 is out of range (the state has 2 sections)"),
        (#"{"elementUpdated": [{"section": 1, "element": 1}]}"#,
         "elementUpdated[0].element: element 1 is out of range (section 1 has 1 elements)"),
        (#"{"sectionDeleted": [5], "sectionUpdated": [{"index": 0}]}"#,
         "top level: stage does not apply: index out of range: section deleted at 5 of 2 sections"),
    ])
    func decodingErrorsNameThePlace(_ text: String, _ message: String) throws {
        let state = [section("a", 1, [JSONItem(id: "x")]), section("b", 2, [JSONItem(id: "y")])]
        let value = try JSONValue(parsing: text)
        #expect(throws: (any Error).self) { try StageDocument.decodeStage(value, applyingTo: state) }
        do {
            _ = try StageDocument.decodeStage(value, applyingTo: state)
        } catch {
            #expect(error.description == message)
        }
    }

    @Test func stageListsNameTheStage() throws {
        let state = [section("a")]
        let value = try JSONValue(parsing: #"{"stages": [{"sectionDeleted": [0]}, {"sectionUpdated": [{"index": 0}]}]}"#)
        #expect(throws: DocumentError(.invalidValue("section 0 is out of range (the state has 0 sections)"),
                                      path: [.key("stages"), .index(1), .key("sectionUpdated"), .index(0), .key("index")])) {
            try StageDocument.decodeStages(value, applyingTo: state)
        }
        let bare = try JSONValue(parsing: #"[{}, {"sectionDeleted": [1]}]"#)
        do {
            _ = try StageDocument.decodeStages(bare, applyingTo: state)
            Issue.record("accepted a stage that does not apply")
        } catch {
            #expect(error.description == "[1]: stage does not apply: index out of range: section deleted at 1 of 1 sections")
        }
        #expect(throws: DocumentError(.missing, path: [.key("stages")])) { try StageDocument.decodeStages([:], applyingTo: state) }
        let empty = try StageDocument.decodeStages(["stages": []], applyingTo: state)
        #expect(empty.changeset.stages.isEmpty && empty.result == state)
    }

    /// Encodes the changeset between each random pair, sends it through JSON text, decodes it against
    /// the source and checks that replay gives the target — and that every stage decodes to itself.
    @discardableResult
    private func roundTrip(seed: UInt64, duplicates: Bool) throws -> ChangeCounts {
        var generator = SnapshotGenerator(seed: seed, duplicates: duplicates)
        let source = generator.snapshot()
        let target = generator.edit(source)
        let changeset = StagedChangeset(source: source, target: target)
        #expect(try changeset.apply(to: source) == target, "seed \(seed)")

        let json = StageDocument.encode(changeset, extraFields: ["schemaVersion": 1])
        let reparsed = try JSONValue(parsing: json.serializedBytes())
        #expect(reparsed == json, "seed \(seed)")
        let (decoded, result) = try StageDocument.decodeStages(reparsed, applyingTo: source)
        #expect(result == target, "seed \(seed)")
        #expect(decoded == changeset, "seed \(seed)")

        var state = source
        for stage in changeset {
            let single = try StageDocument.decodeStage(try JSONValue(parsing: StageDocument.encode(stage).serialized()), applyingTo: state)
            #expect(single == stage, "seed \(seed)")
            let expected = try stage.apply(to: state)
            #expect(try single.apply(to: state) == expected, "seed \(seed)")
            state = expected
        }

        // The snapshots themselves survive a trip through a document.
        for snapshot in [source, target] {
            let bytes = SnapshotDocument(sections: snapshot).serializedBytes(extraFields: ["schemaVersion": 1])
            #expect(try SnapshotDocument(decoding: JSONValue(parsing: bytes)).sections == snapshot, "seed \(seed)")
        }
        return changeset.counts
    }

    /// Every kind of operation occurs often across the random pairs, so the round trips test them all.
    private func expectVariety(_ counts: ChangeCounts) {
        let kinds = [counts.sectionDeleted, counts.sectionInserted, counts.sectionMoved, counts.sectionUpdated,
                     counts.elementDeleted, counts.elementInserted, counts.elementMoved, counts.elementUpdated]
        #expect(kinds.allSatisfy { $0 >= 20 }, "\(counts)")
    }

    @Test func randomPairsWithUniqueIdsRoundTrip() throws {
        var counts = ChangeCounts()
        for seed in 0..<UInt64(300) { counts = counts + (try roundTrip(seed: seed, duplicates: false)) }
        expectVariety(counts)
    }

    @Test func randomPairsWithRepeatedIdsRoundTrip() throws {
        var counts = ChangeCounts()
        for seed in 0..<UInt64(300) { counts = counts + (try roundTrip(seed: seed &+ 0xD1FF_5EED, duplicates: true)) }
        expectVariety(counts)
    }
}
