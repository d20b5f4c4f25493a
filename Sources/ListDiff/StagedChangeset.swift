/// The difference between two snapshots as a sequence of stages, each one batch update that a UI can
/// animate safely and that a consumer applies to its copy.
///
/// ```swift
/// let old = [ArraySection(model: "today", elements: ["a", "b", "c"])]
/// let new = [ArraySection(model: "today", elements: ["c", "a", "d"])]
/// let changeset = StagedChangeset(source: old, target: new)
/// for stage in changeset { print(stage.counts) }
/// assert(try changeset.apply(to: old) == new)
/// ```
///
/// The counts are minimal where identifiers are unique: deletes and inserts are exactly the items
/// without a partner, moves are the items outside a longest increasing subsequence (per section, plus
/// every element that changes section), updates are the matched items whose content changed.
/// Repeated identifiers are paired first-in-first-out; the result is exact either way.
@frozen
public struct StagedChangeset<Model: Differentiable, Element: Differentiable> {
    /// The stages, to be applied in order.
    public var stages: [Stage<Model, Element>]

    /// Creates a changeset from stages.
    @inlinable
    public init(stages: [Stage<Model, Element>] = []) {
        self.stages = stages
    }

    /// The number of each kind of operation over all stages.
    @inlinable
    public var counts: ChangeCounts {
        stages.reduce(ChangeCounts()) { $0 + $1.counts }
    }
}

extension StagedChangeset: RandomAccessCollection {
    public typealias Index = Int

    @inlinable public var startIndex: Int { stages.startIndex }
    @inlinable public var endIndex: Int { stages.endIndex }
    @inlinable public subscript(position: Int) -> Stage<Model, Element> { stages[position] }
}

extension StagedChangeset: Sendable where Model: Sendable, Element: Sendable {}
extension StagedChangeset: Equatable where Model: Equatable, Element: Equatable {}

extension StagedChangeset {
    /// Computes the staged changeset that turns `source` into `target`.
    ///
    /// - Parameters:
    ///   - source: the snapshot before the change.
    ///   - target: the snapshot after the change.
    /// - Complexity: O(n + k log n), where n is the number of sections and elements and k the number
    ///   of displaced ones; one hash per identifier.
    @inlinable
    public init(source: [ArraySection<Model, Element>], target: [ArraySection<Model, Element>]) {
        self = Self.changesetAndPairing(source: source, target: target).changeset
    }

    /// The changeset and the pairing it was planned from (which source item each target item is).
    ///
    /// Not API (package-visible: the store writes rows along the same pairing, and passes the
    /// identifier hashes it already has).
    ///
    /// - Parameter identifierHashes: when given, `Element.pairingHash(of:seed: .process)` of the
    ///   identifier of every source and target element, flat (section after section); otherwise they
    ///   are computed here.
    @inlinable
    package static func changesetAndPairing(
        source: [ArraySection<Model, Element>], target: [ArraySection<Model, Element>],
        identifierHashes: (source: [Int], target: [Int])? = nil
    ) -> (changeset: Self, pairing: DiffPairing) {
        var input = DiffPairing(sourceSectionCount: source.count, targetSectionCount: target.count)

        // Sections, paired first-in-first-out by identifier.
        (input.sectionTargetOf, input.sectionSourceOf) = DiffPairing.pairSections(source: source, target: target)
        for (t, s) in input.sectionSourceOf.enumerated() where s >= 0 {
            input.sectionChanged[t] = !target[t].model.isContentEqual(to: source[s].model)
        }

        // Flat offsets of elements.
        let sourceStart = DiffPairing.flatStarts(source)
        let targetStart = DiffPairing.flatStarts(target)
        let total = sourceStart[source.count]
        let targetTotal = targetStart[target.count]
        precondition(total < Int(Int32.max) && targetTotal < Int(Int32.max), "a snapshot holds fewer than 2^31 elements")
        input.elementTargetOf = [Int32](repeating: -1, count: total)
        input.elementSourceOf = [Int32](repeating: -1, count: targetTotal)
        input.elementChanged = [Bool](repeating: false, count: targetTotal)

        // Elements of surviving sections, paired first-in-first-out in flat order.
        var targetSectionOfFlat = [Int32]()
        var survivingTarget: [Int] = []
        var survivingSource: [Int] = []
        for t in 0..<target.count where input.sectionSourceOf[t] >= 0 { survivingTarget.append(t) }
        for s in 0..<source.count where input.sectionTargetOf[s] >= 0 { survivingSource.append(s) }
        if target.count > 1 {
            targetSectionOfFlat = [Int32](repeating: 0, count: targetTotal)
            for t in survivingTarget {
                for j in targetStart[t]..<targetStart[t + 1] { targetSectionOfFlat[j] = Int32(truncatingIfNeeded: t) }
            }
        }
        var hashMatcher: _HashPartitionMatcher
        if let identifierHashes {
            precondition(
                identifierHashes.source.count == total && identifierHashes.target.count == targetTotal,
                "one identifier hash per element")
            hashMatcher = _HashPartitionMatcher(sourceHashes: identifierHashes.source, targetHashes: identifierHashes.target)
        } else {
            hashMatcher = _HashPartitionMatcher(sourceCount: total, targetCount: targetTotal)
            let seed = PairingHashSeed.process
            _storeIdentifierHashes(
                of: target, sections: survivingTarget, starts: targetStart, seed: seed, into: &hashMatcher.targetHashes)
            _storeIdentifierHashes(
                of: source, sections: survivingSource, starts: sourceStart, seed: seed, into: &hashMatcher.sourceHashes)
        }
        hashMatcher.targetRanges = survivingTarget.map { targetStart[$0]..<targetStart[$0 + 1] }
        hashMatcher.sourceRanges = survivingSource.map { sourceStart[$0]..<sourceStart[$0 + 1] }
        hashMatcher.pair(targetOf: &input.elementTargetOf, sourceOf: &input.elementSourceOf)
        hashMatcher = _HashPartitionMatcher(sourceCount: 0, targetCount: 0)

        // Check every pair (equal hashes do not prove equal identifiers) and compare contents.
        func compareContents() -> Bool {
            for s in survivingSource {
                let elements = source[s].elements
                let start = sourceStart[s]
                for e in elements.indices {
                    let j = Int(input.elementTargetOf[start + e])
                    guard j >= 0 else { continue }
                    let t = target.count > 1 ? Int(targetSectionOfFlat[j]) : 0
                    let partner = target[t].elements[j - targetStart[t]]
                    guard partner.differenceIdentifier == elements[e].differenceIdentifier else { return false }
                    input.elementChanged[j] = !partner.isContentEqual(to: elements[e])
                }
            }
            return true
        }
        if !compareContents() {
            // A hash collision between different identifiers: pair again, exactly, by identifier.
            for i in input.elementTargetOf.indices { input.elementTargetOf[i] = -1 }
            for j in input.elementSourceOf.indices { input.elementSourceOf[j] = -1 }
            var matcher = _FIFOMatcher<Element.DifferenceIdentifier>(
                targetCount: targetTotal, expected: targetTotal)
            for t in survivingTarget.reversed() {
                let elements = target[t].elements
                let start = targetStart[t]
                for e in elements.indices.reversed() { matcher.addTarget(elements[e].differenceIdentifier, at: start + e) }
            }
            for s in survivingSource {
                let elements = source[s].elements
                let start = sourceStart[s]
                for e in elements.indices {
                    guard let j = matcher.take(elements[e].differenceIdentifier) else { continue }
                    input.elementTargetOf[start + e] = Int32(truncatingIfNeeded: j)
                    input.elementSourceOf[j] = Int32(truncatingIfNeeded: start + e)
                }
            }
            _ = compareContents()
        }
        input.sourceStart = sourceStart
        input.targetStart = targetStart

        let plans = _planStages(input)
        let changeset = Self(stages: plans.map { plan in
            var stage = Stage<Model, Element>()
            stage.sectionDeleted = plan.sectionDeleted
            stage.sectionInserted = plan.sectionInserted.map { .init(index: $0, section: target[$0]) }
            stage.sectionMoved = plan.sectionMoved
            stage.sectionUpdated = plan.sectionUpdated.map { .init(index: $0, model: target[$0].model) }
            stage.elementDeleted = plan.elementDeleted
            stage.elementInserted = plan.elementInserted.map {
                .init(path: $0, element: target[$0.section].elements[$0.element])
            }
            stage.elementMoved = plan.elementMoved
            stage.elementUpdated = plan.elementUpdated.map {
                .init(path: $0, element: target[$0.section].elements[$0.element])
            }
            return stage
        })
        input.markPlaced(by: changeset)
        return (changeset, input)
    }
}

/// Stores the pairing hash of the identifier of every element of the chosen sections at its flat
/// index in `hashes`.
@inlinable
internal func _storeIdentifierHashes<Model, Element: ContentIdentifiable>(
    of snapshot: [ArraySection<Model, Element>], sections chosen: [Int], starts: [Int], seed: PairingHashSeed,
    into hashes: inout [Int]
) {
    hashes.withUnsafeMutableBufferPointer { hashes in
        for s in chosen {
            let start = starts[s]
            let elements = snapshot[s].elements
            for e in elements.indices { hashes[start + e] = Element.pairingHash(of: elements[e].differenceIdentifier, seed: seed) }
        }
    }
}
