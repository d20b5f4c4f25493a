import ListDiff
import ListDiffTestSupport
import Testing

/// `replay(on:mergeModel:merge:)`, which a replica uses to write its source's changesets without
/// diffing again: over random pairs it reaches the target, its pairing is a valid pairing with as
/// many pairs as the diff's, and updates that carry only new contents are merged into the items
/// they update.
@Suite(.heavyWork) struct StageReplayTests {
    static let pairsPerKind = 3_000

    private func check(_ source: TestSnapshot, _ target: TestSnapshot, seed: UInt64) throws {
        let changeset = StagedChangeset(source: source, target: target)
        let (diffed, diffPairing) = StagedChangeset.changesetAndPairing(source: source, target: target)
        #expect(diffed == changeset)

        let replayed = try changeset.replay(on: source, mergeModel: { $1 }, merge: { $1 })
        #expect(replayed.result == target, "seed \(seed)")
        #expect(replayed.changeset == changeset, "seed \(seed)")

        let pairing = replayed.pairing
        #expect(pairing.invariantViolation() == nil, "seed \(seed)")
        #expect(diffPairing.invariantViolation() == nil, "seed \(seed)")
        #expect(pairing.sourceStart == diffPairing.sourceStart && pairing.targetStart == diffPairing.targetStart)
        // Sections: a pairing of equal ids, as many pairs as the diff's, changed where contents differ.
        #expect(pairing.sectionSourceOf.filter { $0 >= 0 }.count == diffPairing.sectionSourceOf.filter { $0 >= 0 }.count)
        for (t, s) in pairing.sectionSourceOf.enumerated() where s >= 0 {
            #expect(pairing.sectionTargetOf[s] == t)
            #expect(source[s].model.id == target[t].model.id, "seed \(seed)")
            if !pairing.sectionChanged[t] { #expect(source[s].model == target[t].model, "seed \(seed)") }
        }
        // Elements: paired only between paired sections, ids equal, contents equal unless changed.
        let sourceFlat = source.flatMap(\.elements)
        let targetFlat = target.flatMap(\.elements)
        var pairs = 0
        for (j, i) in pairing.elementSourceOf.enumerated() where i >= 0 {
            pairs += 1
            #expect(pairing.elementTargetOf[Int(i)] == Int32(j))
            #expect(sourceFlat[Int(i)].id == targetFlat[j].id, "seed \(seed)")
            if !pairing.elementChanged[j] { #expect(sourceFlat[Int(i)] == targetFlat[j], "seed \(seed)") }
            if sourceFlat[Int(i)] != targetFlat[j] { #expect(pairing.elementChanged[j], "seed \(seed)") }
        }
        #expect(pairs == diffPairing.elementSourceOf.filter { $0 >= 0 }.count, "seed \(seed)")
        // Everything the changeset places is marked placed.
        var placed = Set<Int>()
        for stage in changeset {
            for move in stage.elementMoved { placed.insert(pairing.targetStart[move.to.section] + move.to.element) }
            for change in stage.elementInserted { placed.insert(pairing.targetStart[change.path.section] + change.path.element) }
        }
        for j in placed { #expect(replayed.pairing.elementPlaced[j], "seed \(seed)") }
        // The diff marks placed exactly what it places, and every element of a new section.
        for j in diffPairing.elementPlaced.indices {
            let new = diffPairing.sectionSourceOf[diffPairing.targetSection(containing: j)] < 0
            #expect(diffPairing.elementPlaced[j] == (placed.contains(j) || new), "seed \(seed)")
        }

        // Updates without ids, merged into the items they update, give the same result.
        let anonymous = StagedChangeset(stages: changeset.stages.map { stage in
            var stage = stage
            for k in stage.sectionUpdated.indices { stage.sectionUpdated[k].model.id = "" }
            for k in stage.elementUpdated.indices { stage.elementUpdated[k].element.id = "" }
            return stage
        })
        let merged = try anonymous.replay(
            on: source, mergeModel: { TestItem($0.id, $1.content) }, merge: { TestItem($0.id, $1.content) })
        #expect(merged.result == target, "seed \(seed)")
        #expect(merged.changeset == changeset, "seed \(seed)")
    }

    @Test func sectionedPairs() throws {
        for seed in 0..<UInt64(Self.pairsPerKind) {
            var random = RandomSnapshots(seed: seed &+ 7_000_000, duplicates: seed % 3 == 0)
            let source = random.snapshot(maxSections: 6, maxElements: 8)
            let target = seed % 5 == 0
                ? random.snapshot(maxSections: 6, maxElements: 8) : random.edit(source, intensity: [0.05, 0.3, 0.7][Int(seed % 3)])
            try check(source, target, seed: seed)
        }
    }

    @Test func aStageThatDoesNotFitThrowsWithItsIndex() {
        let source: TestSnapshot = [ArraySection(model: TestItem("s"), elements: [TestItem("a"), TestItem("b")])]
        var fine = Stage<TestItem, TestItem>()
        fine.elementDeleted = [ElementPath(section: 0, element: 1)]
        var bad = Stage<TestItem, TestItem>()
        bad.elementUpdated = [.init(path: ElementPath(section: 0, element: 1), element: TestItem("b", 2))]
        #expect {
            try StagedChangeset(stages: [fine, bad]).replay(on: source, mergeModel: { $1 }, merge: { $1 })
        } throws: { error in
            (error as? StageApplicationError).map { $0.reason == .indexOutOfRange && $0.stage == 1 } ?? false
        }
    }

    @Test func elementsMovedIntoOrOutOfUnpairedSectionsAreNotPaired() throws {
        // Stage 1 moves "a" out of section "old" into "keep"; stage 2 deletes "old" and inserts "new";
        // stage 3 moves "b" from "keep" into "new". The writer writes whole sections that are not
        // paired, so only "a" in "keep" stays paired; "b" is new in "new".
        let source: TestSnapshot = [
            ArraySection(model: TestItem("old"), elements: [TestItem("a")]),
            ArraySection(model: TestItem("keep"), elements: [TestItem("b")]),
        ]
        var first = Stage<TestItem, TestItem>()
        first.elementMoved = [Move(from: ElementPath(section: 0, element: 0), to: ElementPath(section: 1, element: 1))]
        var second = Stage<TestItem, TestItem>()
        second.sectionDeleted = [0]
        second.sectionInserted = [.init(index: 1, section: ArraySection(model: TestItem("new"), elements: []))]
        var third = Stage<TestItem, TestItem>()
        third.elementMoved = [Move(from: ElementPath(section: 0, element: 0), to: ElementPath(section: 1, element: 0))]
        let replayed = try StagedChangeset(stages: [first, second, third]).replay(on: source, mergeModel: { $1 }, merge: { $1 })
        #expect(replayed.result == [
            ArraySection(model: TestItem("keep"), elements: [TestItem("a")]),
            ArraySection(model: TestItem("new"), elements: [TestItem("b")]),
        ])
        let pairing = replayed.pairing
        #expect(pairing.invariantViolation() == nil)
        #expect(pairing.sectionSourceOf == [1, -1])
        #expect(pairing.elementSourceOf == [-1, -1])  // "a" came from the deleted section, "b" went to a new one
        #expect(pairing.elementTargetOf == [-1, -1])
        #expect(replayed.pairing.elementPlaced == [true, true])
        #expect(replayed.pairing.sectionPlaced == [false, true])
    }
}
