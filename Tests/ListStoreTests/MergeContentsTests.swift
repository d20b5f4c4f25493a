import ListDiff
import ListDiffTestSupport
import ListJSON
import ListMerge
import ListStore
import ListStoreTestSupport
import Testing

/// A merge reads from the rows only the contents its intents touch (stand-ins for the rest), and
/// merges again onto the whole head when the changeset needs one it left out: whatever the lists
/// (repeated ids, sections deleted with elements theirs added, moves across sections), the head
/// and the conflict report are those of the rebase onto the whole head in memory, and the store
/// verifies. Heads kept by the store (fingerprinted) and heads read from rows (a store opened anew)
/// alike.
@Suite(.heavyWork) struct MergeContentsTests {
    @Test func aMergeIsTheRebaseOntoTheWholeHead() throws {
        let directory = try TemporaryDirectory()
        for seed in UInt64(1)...300 {
            var random = RandomSnapshots(seed: seed, duplicates: seed % 3 == 0)
            let base = random.snapshot(maxSections: 5, maxElements: 8)
            let theirs = random.edit(base, intensity: [0.1, 0.4, 1.0][Int(seed % 3)])
            let mine = random.edit(base, intensity: [0.3, 0.1, 0.6][Int(seed % 3)])
            // A list with no version has nothing to merge into.
            guard !listSections(base).isEmpty || !listSections(theirs).isEmpty else { continue }
            let path = directory.file("\(seed).liststore")
            var store = try Store(path: path)
            try store.commit(listSections(base), to: "l")
            try store.commit(listSections(theirs), to: "l")
            if seed % 2 == 0 {
                // A head read from the rows, without fingerprints.
                try store.close()
                store = try Store(path: path)
            }
            let intents = Intent.changes(from: listSections(base), to: listSections(mine))
            let expected = Rebase(intents, onto: listSections(theirs))
            let answer = try store.merge(Push(id: PushID(client: "c", seq: 1), intents: intents), into: "l")
            #expect(try store.snapshot(of: "l").sections == expected.snapshot, "seed \(seed)")
            #expect(answer.conflicts == expected.conflicts, "seed \(seed)")
            #expect(try store.verify().isValid, "seed \(seed)")
            try store.close()
        }
    }
}
