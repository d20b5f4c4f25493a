import ListDiff
import ListDiffTestSupport
import Testing

/// Random pairs: every stage passes the independent validator, replay reaches the target, the engine's
/// own `apply` agrees, and counts are minimal where identifiers are unique. More than 10,000 pairs per run.
@Suite(.heavyWork) struct StagedChangesetPropertyTests {
    static let pairsPerKind = 2_500

    private func check(_ source: TestSnapshot, _ target: TestSnapshot, unique: Bool, seed: UInt64) {
        let changeset = StagedChangeset(source: source, target: target)
        do {
            try BatchUpdateValidator.validate(changeset, source: source, target: target)
        } catch {
            Issue.record("seed \(seed): \(error)\nsource: \(source)\ntarget: \(target)\nstages: \(changeset.stages)")
            return
        }
        do {
            #expect(try changeset.apply(to: source) == target, "seed \(seed)")
        } catch {
            Issue.record("seed \(seed): apply failed: \(error)")
        }
        if unique {
            #expect(changeset.counts == MinimalCounts.of(source: source, target: target), "seed \(seed)")
        }
        #expect(changeset.allSatisfy { !$0.isEmpty })
    }

    @Test func sectionedPairsWithUniqueIdentifiers() {
        for seed in 0..<UInt64(Self.pairsPerKind) {
            var random = RandomSnapshots(seed: seed)
            let source = random.snapshot(maxSections: 6, maxElements: 8)
            let target = random.edit(source, intensity: [0.05, 0.3, 0.7][Int(seed % 3)])
            check(source, target, unique: true, seed: seed)
        }
    }

    @Test func unrelatedSectionedPairs() {
        for seed in 0..<UInt64(Self.pairsPerKind) {
            var random = RandomSnapshots(seed: seed &+ 1_000_000)
            let source = random.snapshot(maxSections: 5, maxElements: 6)
            let target = random.snapshot(maxSections: 5, maxElements: 6)
            check(source, target, unique: true, seed: seed)
        }
    }

    @Test func sectionedPairsWithDuplicateIdentifiers() {
        for seed in 0..<UInt64(Self.pairsPerKind) {
            var random = RandomSnapshots(seed: seed &+ 2_000_000, duplicates: true)
            let source = random.snapshot(maxSections: 5, maxElements: 8)
            let target = seed % 2 == 0
                ? random.edit(source, intensity: 0.4) : random.snapshot(maxSections: 5, maxElements: 8)
            check(source, target, unique: false, seed: seed)
        }
    }

    @Test func linearPairs() throws {
        for seed in 0..<UInt64(Self.pairsPerKind) {
            var random = RandomSnapshots(seed: seed &+ 3_000_000, duplicates: seed % 4 == 0)
            let source = random.list(maxElements: 30)
            var target = random.edit([ArraySection(model: TestItem("list"), elements: source)], intensity: 0.3)
            if target.isEmpty { target = [ArraySection(model: TestItem("list"), elements: [])] }
            let targetList = target.flatMap(\.elements)
            let changeset = StagedChangeset(source: source, target: targetList)
            let wrap = { (items: [TestItem]) in [ArraySection(model: LinearSection(), elements: items)] }
            do {
                try BatchUpdateValidator.validate(changeset, source: wrap(source), target: wrap(targetList))
            } catch {
                Issue.record("seed \(seed): \(error)")
            }
            #expect(try changeset.apply(to: source) == targetList)
            #expect(changeset.allSatisfy { $0.sectionDeleted.isEmpty && $0.sectionInserted.isEmpty && $0.sectionMoved.isEmpty })
            if seed % 4 != 0 {
                #expect(changeset.counts == MinimalCounts.of(source: wrap(source), target: wrap(targetList)))
            }
        }
    }

    @Test func equalSnapshotsGiveNoStages() {
        for seed in 0..<UInt64(500) {
            var random = RandomSnapshots(seed: seed &+ 4_000_000, duplicates: seed % 2 == 0)
            let snapshot = random.snapshot(maxSections: 5, maxElements: 8)
            #expect(StagedChangeset(source: snapshot, target: snapshot).isEmpty)
        }
    }

    @Test func largerPairsStayMinimal() {
        for seed in 0..<UInt64(200) {
            var random = RandomSnapshots(seed: seed &+ 5_000_000)
            let source = random.snapshot(maxSections: 20, maxElements: 60)
            let target = random.edit(source, intensity: 0.2)
            check(source, target, unique: true, seed: seed)
        }
    }
}
