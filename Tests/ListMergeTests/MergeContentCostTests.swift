import ListDiff
import ListDiffTestSupport
import ListJSON
import ListMerge
import Synchronization
import Testing

/// A push's work follows what it merges, not the size of what it merges into: counted, not timed.
/// An item's content is read once and its item rebuilt once, however many intents merge into it
/// (before, each intent parsed the item's whole content and wrote it again: a push of 4,000 one-key
/// updates to an item of 4,000 keys took seconds and held every writer of the store).
@Suite(.heavyWork) struct MergeContentCostTests {
    final class Counter: Sendable {
        let reads = Atomic<Int>(0)
        let builds = Atomic<Int>(0)
        @TaskLocal static var current: Counter?
    }

    /// A JSON item that counts the merge's reads of its content and the items it builds.
    struct CountedItem: MergeableItem, Equatable {
        let id: String
        let content: JSONValue

        init(id: String, content: JSONValue) {
            self.id = id
            self.content = content
        }

        init(documentID: String, content: JSONValue) {
            Counter.current?.builds.add(1, ordering: .relaxed)
            self.init(id: documentID, content: content)
        }

        var documentID: String { id }
        var differenceIdentifier: ExactString { ExactString(id) }
        func isContentEqual(to source: CountedItem) -> Bool { content == source.content }

        var contentValue: JSONValue {
            Counter.current?.reads.add(1, ordering: .relaxed)
            return content
        }
    }

    static func bigObject(_ keys: Int) -> JSONValue {
        .object(JSONObject(uniqueKeysWithValues: (0..<keys).map { ("k\($0)", JSONValue($0)) }))
    }

    @Test(arguments: [10, 2_000])
    func intentsOnOneItemReadItsContentOnceAndBuildItOnce(intents: Int) {
        let counter = Counter()
        let head = [
            ArraySection(
                model: CountedItem(id: "s", content: Self.bigObject(intents)),
                elements: [CountedItem(id: "e", content: Self.bigObject(intents)), CountedItem(id: "f", content: 1)])
        ]
        // Each intent changes one key of its own, from the head's value (no clash), and one key
        // every intent writes (a clash with theirs' value only for the first).
        let updates: [Intent] = (0..<intents).flatMap { k -> [Intent] in
            [
                .updateElement("e", section: "s", base: ["k\(k)": JSONValue(k), "x": JSONValue(k)], content: ["k\(k)": -1, "x": JSONValue(k + 1)]),
                .updateSection("s", base: ["k\(k)": JSONValue(k)], content: ["k\(k)": "m"]),
            ]
        }
        let merged = Counter.$current.withValue(counter) { Rebase(updates, onto: head) }
        #expect(counter.reads.load(ordering: .relaxed) == 2)
        #expect(counter.builds.load(ordering: .relaxed) == 2)
        var element = Self.bigObject(intents)
        var section = Self.bigObject(intents)
        for k in 0..<intents {
            if case .object(var object) = element {
                object["k\(k)"] = -1
                object["x"] = JSONValue(intents)
                element = .object(object)
            }
            if case .object(var object) = section {
                object["k\(k)"] = "m"
                section = .object(object)
            }
        }
        #expect(merged.snapshot.first?.elements.first?.content == element)
        #expect(merged.snapshot.first?.model.content == section)
        #expect(merged.snapshot.first?.elements.last == CountedItem(id: "f", content: 1))
        #expect(merged.conflicts.map(\.kind) == [.contentConflict])
    }

    @Test func anItemNoIntentChangedIsNotRebuilt() {
        let counter = Counter()
        let head = [ArraySection(model: CountedItem(id: "s", content: ["a": 1]), elements: [CountedItem(id: "e", content: ["a": 1, "b": 2])])]
        let merged = Counter.$current.withValue(counter) {
            Rebase([.updateElement("e", section: "s", base: ["a": 0, "b": 2], content: ["a": 1, "b": 2])], onto: head)
        }
        #expect(counter.builds.load(ordering: .relaxed) == 0)
        #expect(merged.snapshot == head)
    }

    /// The in-place merge against its definition, written the plain way: every key of the three
    /// objects, in turn.
    @Test func theMergeInPlaceKeepsItsDefinitionOverRandomContents() {
        func plain(base: JSONValue?, mine: JSONValue, theirs: JSONValue) -> (JSONValue, [ContentMerge.Clash]) {
            if mine == theirs { return (mine, []) }
            if let base, theirs == base { return (mine, []) }
            if let base, mine == base { return (theirs, []) }
            guard case .object(let m) = mine, case .object(let t) = theirs else {
                return (mine, [ContentMerge.Clash(key: nil, mine: mine, theirs: theirs)])
            }
            let b: JSONObject
            switch base {
            case nil: b = JSONObject()
            case .object(let object)?: b = object
            default: return (mine, [ContentMerge.Clash(key: nil, mine: mine, theirs: theirs)])
            }
            var members: [(String, JSONValue)] = []
            var clashes: [ContentMerge.Clash] = []
            for key in Set(m.keys + t.keys + b.keys).sorted(by: { ExactString($0) < ExactString($1) }) {
                let (bv, mv, tv) = (b[key], m[key], t[key])
                let kept: JSONValue?
                if mv == tv || tv == bv { kept = mv } else if mv == bv { kept = tv } else {
                    kept = mv
                    clashes.append(ContentMerge.Clash(key: key, mine: mv, theirs: tv))
                }
                if let kept { members.append((key, kept)) }
            }
            return (.object(JSONObject(uniqueKeysWithValues: members)), clashes)
        }
        var rng = SplitMix64(seed: 0xC0_47E7)
        func content() -> JSONValue {
            switch Int.random(in: 0..<8, using: &rng) {
            case 0: return JSONValue(Int.random(in: 0..<3, using: &rng))
            case 1: return .null
            default:
                let keys = (0..<Int.random(in: 0..<6, using: &rng)).map { _ in (["a", "b", "c", "é", "z", "aa"].randomElement(using: &rng)!) }
                return .object(JSONObject(keys.map { ($0, JSONValue(Int.random(in: 0..<3, using: &rng))) }, uniquingKeysWith: { a, _ in a }))
            }
        }
        for _ in 0..<5_000 {
            let base: JSONValue? = Int.random(in: 0..<5, using: &rng) == 0 ? nil : content()
            let mine = Bool.random(using: &rng) ? content() : (base ?? content())
            let theirs = Bool.random(using: &rng) ? content() : (base ?? content())
            let merge = ContentMerge(base: base, mine: mine, theirs: theirs)
            let (value, clashes) = plain(base: base, mine: mine, theirs: theirs)
            #expect(merge.value == value, "base \(base.map { $0.serialized() } ?? "nil"), mine \(mine), theirs \(theirs)")
            #expect(merge.clashes == clashes)
        }
    }
}
