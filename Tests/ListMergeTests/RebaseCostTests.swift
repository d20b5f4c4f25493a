import ListDiff
import ListDiffTestSupport
import ListJSON
import ListMerge
import Testing

/// Cost: a rebase is O(n + intents), never O(n) per intent. On a 100,000-element head, 1,000 intents
/// cost about what 10 cost (both are dominated by indexing theirs and building the result once); with
/// O(n) work per intent they would cost about 100 times as much.
@Suite(.serialized) struct RebaseCostTests {
    /// 100 sections of 1,000 elements; mine moves, inserts, updates and deletes 250 elements each.
    static func lists() -> (base: [JSONSection], mine: [JSONSection], theirs: [JSONSection]) {
        let base = (0..<100).map { s in
            ArraySection(
                model: JSONItem(id: "s\(s)", content: JSONValue(s)),
                elements: (0..<1_000).map { e in JSONItem(id: "e\(s * 1_000 + e)", content: ["n": JSONValue(e)]) })
        }
        var rng = SplitMix64(seed: 0x3E76E)
        func edit(_ list: [JSONSection], prefix: String) -> [JSONSection] {
            var list = list
            for k in 0..<250 {
                let s = Int.random(in: 0..<list.count, using: &rng)
                let moved = list[s].elements.remove(at: Int.random(in: 0..<list[s].elements.count, using: &rng))
                let d = Int.random(in: 0..<list.count, using: &rng)
                list[d].elements.insert(moved, at: Int.random(in: 0...list[d].elements.count, using: &rng))
                let i = Int.random(in: 0..<list.count, using: &rng)
                list[i].elements.insert(
                    JSONItem(id: "\(prefix)\(k)", content: 1), at: Int.random(in: 0...list[i].elements.count, using: &rng))
                let u = Int.random(in: 0..<list.count, using: &rng)
                list[u].elements[Int.random(in: 0..<list[u].elements.count, using: &rng)].content = ["n": -1]
                let r = Int.random(in: 0..<list.count, using: &rng)
                list[r].elements.remove(at: Int.random(in: 0..<list[r].elements.count, using: &rng))
            }
            return list
        }
        return (base, edit(base, prefix: "m"), edit(base, prefix: "t"))
    }

    @Test func aThousandIntentsOnAHundredThousandElementsCostAboutWhatTenCost() {
        let (base, mine, theirs) = Self.lists()
        let intents = Intent.changes(from: base, to: mine)
        #expect(intents.count >= 900 && intents.count <= 1_100, "\(intents.count) intents")
        let few = Array(intents.prefix(10))

        func fastest(_ intents: [Intent]) -> Duration {
            (0..<3).map { _ in
                ContinuousClock().measure { _ = Rebase(intents, onto: theirs) }
            }.min()!
        }
        let tenIntents = fastest(few)
        let allIntents = fastest(intents)
        #expect(allIntents < tenIntents * 3, "10 intents: \(tenIntents), \(intents.count) intents: \(allIntents)")
    }

    @Test func aThousandIntentsRebuildAHundredThousandElementsExactly() {
        let (base, mine, theirs) = Self.lists()
        let intents = Intent.changes(from: base, to: mine)
        let onBase = Rebase(intents, onto: base)
        #expect(onBase.snapshot == mine)
        #expect(onBase.conflicts.isEmpty)
        let onTheirs = Rebase(intents, onto: theirs)
        #expect(onTheirs.snapshot.reduce(0) { $0 + $1.elements.count } > 99_000)
    }
}
