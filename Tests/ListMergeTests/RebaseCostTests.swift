import ListDiff
import ListDiffTestSupport
import ListJSON
import ListMerge
import Testing

/// A rebase of 1,000 intents onto a 100,000-element head (O(n + intents) on linked lists; its speed is
/// for the merge-1pct benchmark to measure, not for a unit test to time).
@Suite(.serialized, .heavyWork) struct RebaseCostTests {
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
