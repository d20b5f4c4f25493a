import ListDiffTestSupport
@testable import ListMerge
import Testing

/// The rebase's index from reference to node (`_RefIndex`) against a dictionary, over random
/// inserts, lookups and removals: in a table that starts at its smallest and grows, fills with
/// removed slots and is rebuilt, with repeated ids told apart by ordinal and ids equal as Unicode
/// text but not byte for byte (which hash apart: they do not share a chain of probes).
struct RefIndexTests {
    @Test func agreesWithADictionaryOverRandomOperations() {
        // Canonically equivalent ids ("é" precomposed and decomposed) must stay two.
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

    /// Ids that differ only in how their accents are written are one text to Unicode but many
    /// identifiers: indexing 4,096 of them compares about one key each, not one per id indexed
    /// before (a hash that follows Unicode equality would put them all in one chain of probes).
    @Test func canonicallyEquivalentIdsDoNotShareProbes() {
        let ids = (0..<4_096).map { n in (0..<12).map { bit in n >> bit & 1 == 0 ? "\u{E9}" : "e\u{301}" }.joined() }
        // Sized for them: no rebuild reads the keys back.
        var index = _RefIndex(expected: ids.count)
        var comparisons = 0
        for (n, id) in ids.enumerated() {
            #expect(index.insert(Int32(n), for: ItemRef(id)) { comparisons += 1; return ItemRef(ids[Int($0)]) } == nil)
        }
        #expect(index.count == ids.count)
        #expect(comparisons < ids.count, "\(comparisons) comparisons of keys")
    }
}
