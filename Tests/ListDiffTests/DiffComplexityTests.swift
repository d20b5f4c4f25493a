import ListDiff
import ListDiffTestSupport
import Synchronization
import Testing

/// Bounds the work by counting operations, not by timing: one hash per identifier and one content
/// comparison per matched pair, at every size.
@Suite(.heavyWork) struct DiffComplexityTests {
    final class Counter: Sendable {
        let hashes = Atomic<Int>(0)
        let comparisons = Atomic<Int>(0)
    }

    struct CountedID: Hashable, Sendable {
        let value: Int
        let counter: Counter
        static func == (lhs: CountedID, rhs: CountedID) -> Bool { lhs.value == rhs.value }
        func hash(into hasher: inout Hasher) {
            counter.hashes.add(1, ordering: .relaxed)
            hasher.combine(value)
        }
    }

    struct CountedItem: Differentiable {
        let id: CountedID
        let content: Int
        var differenceIdentifier: CountedID { id }
        func isContentEqual(to source: CountedItem) -> Bool {
            id.counter.comparisons.add(1, ordering: .relaxed)
            return content == source.content
        }
    }

    @Test(arguments: [10, 1_000, 50_000])
    func oneHashPerIdentifierAndOneComparisonPerPair(size: Int) {
        let counter = Counter()
        var rng = SplitMix64(seed: UInt64(size))
        let source = (0..<size).map { CountedItem(id: CountedID(value: $0, counter: counter), content: 0) }
        var target = source.filter { _ in Int.random(in: 0..<10, using: &rng) != 0 }
        for _ in 0..<(size / 20) where !target.isEmpty {
            let moved = target.remove(at: Int.random(in: 0..<target.count, using: &rng))
            target.insert(moved, at: Int.random(in: 0...target.count, using: &rng))
        }
        target += (size..<(size + size / 10)).map { CountedItem(id: CountedID(value: $0, counter: counter), content: 1) }
        let changeset = StagedChangeset(source: source, target: target)
        let matched = source.count - changeset.counts.elementDeleted
        #expect(counter.hashes.load(ordering: .relaxed) == source.count + target.count)
        #expect(counter.comparisons.load(ordering: .relaxed) == matched)
    }
}

/// Identifiers whose hashes collide on purpose: pairing falls back to exact identifier comparison and
/// the result is still exact and minimal.
@Suite(.heavyWork) struct HashCollisionTests {
    struct CollidingID: Hashable {
        let value: Int
        func hash(into hasher: inout Hasher) { hasher.combine(value % 3) }
    }

    struct Row: Differentiable, Equatable {
        let id: CollidingID
        let content: Int
        var differenceIdentifier: CollidingID { id }
        func isContentEqual(to source: Row) -> Bool { content == source.content }
    }

    @Test func collidingHashesStillPairByIdentifier() throws {
        for seed in 0..<UInt64(300) {
            var rng = SplitMix64(seed: seed)
            let source = (0..<Int.random(in: 0...40, using: &rng)).map { Row(id: CollidingID(value: $0), content: 0) }
            var target = source.filter { _ in Int.random(in: 0..<4, using: &rng) != 0 }
            target.shuffle(using: &rng)
            for k in target.indices where Int.random(in: 0..<5, using: &rng) == 0 { target[k] = Row(id: target[k].id, content: 1) }
            target.insert(Row(id: CollidingID(value: 1_000), content: 0), at: Int.random(in: 0...target.count, using: &rng))
            let changeset = StagedChangeset(source: source, target: target)
            #expect(try changeset.apply(to: source) == target)
            let wrap = { (rows: [Row]) in [ArraySection(model: LinearSection(), elements: rows)] }
            #expect(changeset.counts == MinimalCounts.of(source: wrap(source), target: wrap(target)))
        }
    }
}
