import ListDiffTestSupport
@testable import ListMerge
import Testing

/// The rebase's index from reference to node (`_RefIndex`) against a dictionary, over random
/// inserts, lookups and removals: in a table that starts at its smallest and grows, fills with
/// removed slots and is rebuilt, with repeated ids told apart by ordinal and ids equal as Unicode
/// text but not byte for byte.
struct RefIndexTests {
    @Test func agreesWithADictionaryOverRandomOperations() {
        // Canonically equivalent ids ("é" precomposed and decomposed) hash alike and must stay two.
        let ids = (0..<40).map { "e\($0)" } + ["\u{E9}", "e\u{301}", "", "\u{0}", "a b/ü"]
        for seed in UInt64(0)..<200 {
            var rng = SplitMix64(seed: seed)
            var index = _RefIndex(expected: 0)
            var model: [ItemRef: Int32] = [:]
            // The reference each node was indexed under (what `key` reads back from the nodes).
            var keys: [ItemRef] = []
            for step in 0..<400 {
                let ref = ItemRef(ids[Int(rng.next() % UInt64(ids.count))], ordinal: Int(rng.next() % 3))
                switch rng.next() % 4 {
                case 0, 1:
                    let node = Int32(keys.count)
                    keys.append(ref)
                    let had = index.insert(node, for: ref) { keys[Int($0)] }
                    #expect(had == model[ref], "seed \(seed), step \(step): insert \(ref)")
                    if model[ref] == nil { model[ref] = node }
                case 2:
                    index.remove(ref) { keys[Int($0)] }
                    model[ref] = nil
                default:
                    #expect(index.node(for: ref) { keys[Int($0)] } == model[ref], "seed \(seed), step \(step): find \(ref)")
                }
                #expect(index.count == model.count, "seed \(seed), step \(step)")
            }
            for (ref, node) in model {
                #expect(index.node(for: ref) { keys[Int($0)] } == node, "seed \(seed): \(ref) at the end")
            }
        }
    }
}
