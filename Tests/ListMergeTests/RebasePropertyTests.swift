import ListDiff
import ListDiffTestSupport
import ListJSON
import ListMerge
import Testing

/// Rebase over thousands of random, seeded cases (each failure names its seed): (a) onto the unchanged
/// base it gives mine exactly; (b) onto a head whose changes touch nothing mine's intents name (items,
/// anchors, sections) it gives both sides' changes; (c) an id that is unique in base, mine and theirs
/// is unique in the result; (d) every intent is honoured or reported.
@Suite(.heavyWork) struct RebasePropertyTests {
    static let cases: UInt64 = 2_000

    // MARK: (a) onto the unchanged base

    @Test(arguments: [false, true])
    func rebaseOntoTheUnchangedBaseGivesMineExactly(duplicates: Bool) {
        for seed in 0..<Self.cases {
            var random = RandomSnapshots(seed: seed &+ (duplicates ? 10_000_000 : 0), duplicates: duplicates)
            let base = random.snapshot(maxSections: 5, maxElements: 8)
            let mine = seed % 5 == 4
                ? random.snapshot(maxSections: 5, maxElements: 8)
                : random.edit(base, intensity: [0.05, 0.3, 0.7, 1][Int(seed % 4)])
            let (b, m) = (RandomMerge.json(base), RandomMerge.json(mine))
            let result = Rebase(Intent.changes(from: b, to: m), onto: b)
            #expect(result.snapshot == m, "seed \(seed)\nbase: \(describe(b))\nmine: \(describe(m))\ngot:  \(describe(result.snapshot))")
            #expect(result.conflicts.isEmpty, "seed \(seed): \(result.conflicts)")
        }
    }

    @Test func rebaseOfALinearListOntoTheUnchangedBaseGivesMineExactly() {
        for seed in 0..<Self.cases {
            var random = RandomSnapshots(seed: seed &+ 20_000_000, duplicates: seed % 3 == 0)
            let base = [ArraySection(model: TestItem("list"), elements: random.list(maxElements: 40))]
            let mine = random.edit(base, intensity: 0.3).filter { $0.model.id == "list" }
            let (b, m) = (RandomMerge.json(base), RandomMerge.json(mine))
            let result = Rebase(Intent.changes(from: b, to: m), onto: b)
            #expect(result.snapshot == m, "seed \(seed)")
        }
    }

    @Test func onlyTheDiffsMinimalMovesBecomeMoveIntents() {
        for seed in 0..<Self.cases {
            var random = RandomSnapshots(seed: seed &+ 30_000_000)
            let base = random.snapshot(maxSections: 5, maxElements: 8)
            let mine = random.edit(base, intensity: 0.3)
            let counts = MinimalCounts.of(source: base, target: mine)
            // Elements that left a section both have for a new section: the diff deletes and inserts
            // them, intents move them.
            let kept = Set(mine.map(\.model.id))
            let left = Set(base.filter { kept.contains($0.model.id) }.flatMap { $0.elements.map(\.id) })
            let shared = Set(base.map(\.model.id))
            let adopted = mine.filter { !shared.contains($0.model.id) }.flatMap(\.elements).count { left.contains($0.id) }
            let intents = Intent.changes(from: RandomMerge.json(base), to: RandomMerge.json(mine))
            #expect(
                intents.count { if case .moveElement = $0 { true } else { false } } == counts.elementMoved + adopted, "seed \(seed)")
            #expect(intents.count { if case .moveSection = $0 { true } else { false } } == counts.sectionMoved, "seed \(seed)")
        }
    }

    // MARK: (b) changes that do not touch each other

    @Test func rebaseOntoAHeadThatTouchedNothingOfMineKeepsBothSidesChanges() {
        var checked = 0
        for seed in 0..<Self.cases {
            var random = RandomSnapshots(seed: seed &+ 40_000_000)
            let testBase = random.snapshot(maxSections: 5, maxElements: 8)
            let base = RandomMerge.json(testBase)
            let mine = RandomMerge.json(random.edit(testBase, intensity: [0.05, 0.2, 0.4][Int(seed % 3)]))
            let intents = Intent.changes(from: base, to: mine)
            var rng = SplitMix64(seed: seed)
            let theirs = UntouchedEdit.make(base: base, sparing: intents, using: &rng)
            let result = Rebase(intents, onto: theirs)
            let context = "seed \(seed)\nbase:   \(describe(base))\nmine:   \(describe(mine))\ntheirs: \(describe(theirs))\ngot:    \(describe(result.snapshot))"
            #expect(result.conflicts.isEmpty, "\(context)\n\(result.conflicts)")
            if let problem = UntouchedEdit.problem(base: base, mine: mine, theirs: theirs, intents: intents, result: result.snapshot) {
                Issue.record("\(problem)\n\(context)")
            }
            if theirs != base && !intents.isEmpty { checked += 1 }
        }
        #expect(checked > Int(Self.cases) / 2)
    }

    // MARK: (c) one identity, one item

    @Test(arguments: [false, true])
    func noIdentifierAppearsTwiceWhereItDidNotBefore(duplicates: Bool) {
        for seed in 0..<Self.cases {
            let (base, mine, theirs) = RandomMerge.triple(
                seed: seed &+ (duplicates ? 50_000_000 : 60_000_000), duplicates: duplicates,
                intensity: [0.1, 0.3, 0.6][Int(seed % 3)])
            let result = Rebase(Intent.changes(from: base, to: mine), onto: theirs).snapshot
            let counts = [base, mine, theirs].map(idCounts)
            let merged = idCounts(result)
            for (id, count) in merged.sections where count > 1 && counts.allSatisfy({ ($0.sections[id] ?? 0) <= 1 }) {
                Issue.record("seed \(seed): section \(id) \(count) times\nbase:   \(describe(base))\nmine:   \(describe(mine))\ntheirs: \(describe(theirs))\ngot:    \(describe(result))")
            }
            for (id, count) in merged.elements where count > 1 && counts.allSatisfy({ ($0.elements[id] ?? 0) <= 1 }) {
                Issue.record("seed \(seed): element \(id) \(count) times\nbase:   \(describe(base))\nmine:   \(describe(mine))\ntheirs: \(describe(theirs))\ngot:    \(describe(result))")
            }
        }
    }

    // MARK: (d) honoured or reported

    @Test func everyIntentIsHonouredOrReported() {
        var reported = 0
        for seed in 0..<Self.cases {
            let (base, mine, theirs) = RandomMerge.triple(
                seed: seed &+ 70_000_000, duplicates: false, intensity: [0.1, 0.3, 0.6][Int(seed % 3)])
            let intents = Intent.changes(from: base, to: mine)
            let result = Rebase(intents, onto: theirs)
            reported += result.conflicts.count
            for intent in intents {
                if let problem = Honoured.problem(intent, in: result, mine: mine) {
                    Issue.record("seed \(seed): \(intent): \(problem)\nbase:   \(describe(base))\nmine:   \(describe(mine))\ntheirs: \(describe(theirs))\ngot:    \(describe(result.snapshot))\nreport: \(result.conflicts)")
                }
            }
        }
        #expect(reported > 100)
    }
}
