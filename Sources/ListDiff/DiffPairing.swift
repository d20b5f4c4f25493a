/// Which item of a source snapshot each item of a target snapshot is, in flat coordinates: the
/// pairing a diff plans its stages from, or the one a replay of stages ends with.
///
/// Sections are addressed by index; elements by their flat index, section after section (section
/// `s`'s elements are `sourceStart[s]..<sourceStart[s + 1]`). Elements are paired only within sections
/// that are themselves paired; the others come or go whole.
///
/// Not API: package-visible, so that the store writes its rows along the diff's own pairing and the
/// merge reads intents off it.
///
/// ```swift
/// let (changeset, pairing) = StagedChangeset.changesetAndPairing(source: head, target: next)
/// for t in 0..<pairing.targetSectionCount where pairing.sourceSection(ofTarget: t) == nil {
///     // target section t is new: write it whole
/// }
/// assert(pairing.invariantViolation() == nil)
/// ```
@usableFromInline
package struct DiffPairing: Sendable, Equatable {
    /// For each source section, the index of its paired target section, or -1.
    @usableFromInline package var sectionTargetOf: [Int]
    /// For each target section, the index of its paired source section, or -1.
    @usableFromInline package var sectionSourceOf: [Int]
    /// For each target section, whether its content changed (false for unpaired sections).
    @usableFromInline package var sectionChanged: [Bool]
    /// For each target section, whether the changeset moves or inserts it.
    @usableFromInline package var sectionPlaced: [Bool]
    /// Flat start offsets of the source sections' elements, then their total.
    @usableFromInline package var sourceStart: [Int]
    /// Flat start offsets of the target sections' elements, then their total.
    @usableFromInline package var targetStart: [Int]
    /// For each flat source element, the flat index of its paired target element, or -1.
    @usableFromInline package var elementTargetOf: [Int32]
    /// For each flat target element, the flat index of its paired source element, or -1.
    @usableFromInline package var elementSourceOf: [Int32]
    /// For each flat target element, whether its content changed (false for unpaired elements).
    @usableFromInline package var elementChanged: [Bool]
    /// For each flat target element, whether the changeset moves or inserts it (true for every element
    /// without a partner).
    @usableFromInline package var elementPlaced: [Bool]

    /// A pairing of `sourceSectionCount` sections with `targetSectionCount` sections where nothing is
    /// paired yet and no element is known.
    @inlinable
    package init(sourceSectionCount: Int, targetSectionCount: Int) {
        sectionTargetOf = [Int](repeating: -1, count: sourceSectionCount)
        sectionSourceOf = [Int](repeating: -1, count: targetSectionCount)
        sectionChanged = [Bool](repeating: false, count: targetSectionCount)
        sectionPlaced = [Bool](repeating: false, count: targetSectionCount)
        sourceStart = [0]
        targetStart = [0]
        elementTargetOf = []
        elementSourceOf = []
        elementChanged = []
        elementPlaced = []
    }

    // MARK: Accessors

    /// The number of sections of the source.
    @inlinable package var sourceSectionCount: Int { sectionTargetOf.count }
    /// The number of sections of the target.
    @inlinable package var targetSectionCount: Int { sectionSourceOf.count }
    /// The number of elements of the source, over all sections.
    @inlinable package var sourceElementCount: Int { sourceStart.last ?? 0 }
    /// The number of elements of the target, over all sections.
    @inlinable package var targetElementCount: Int { targetStart.last ?? 0 }

    /// The source section paired with target section `t`, or `nil` when `t` is new.
    @inlinable package func sourceSection(ofTarget t: Int) -> Int? {
        let s = sectionSourceOf[t]
        return s >= 0 ? s : nil
    }

    /// The target section paired with source section `s`, or `nil` when `s` leaves.
    @inlinable package func targetSection(ofSource s: Int) -> Int? {
        let t = sectionTargetOf[s]
        return t >= 0 ? t : nil
    }

    /// The flat source element paired with flat target element `j`, or `nil` when `j` is new.
    @inlinable package func sourceElement(ofTarget j: Int) -> Int? {
        let i = Int(elementSourceOf[j])
        return i >= 0 ? i : nil
    }

    /// The flat target element paired with flat source element `i`, or `nil` when `i` leaves.
    @inlinable package func targetElement(ofSource i: Int) -> Int? {
        let j = Int(elementTargetOf[i])
        return j >= 0 ? j : nil
    }

    /// The source section holding flat source element `i`.
    /// - Complexity: O(log sections).
    @inlinable package func sourceSection(containing i: Int) -> Int { Self.section(containing: i, starts: sourceStart) }

    /// The target section holding flat target element `j`.
    /// - Complexity: O(log sections).
    @inlinable package func targetSection(containing j: Int) -> Int { Self.section(containing: j, starts: targetStart) }

    /// The section holding flat index `i`, given each section's flat start, then the total.
    /// - Complexity: O(log sections).
    @inlinable
    package static func section(containing i: Int, starts: [Int]) -> Int {
        var low = 0
        var high = starts.count - 2
        while low < high {
            let mid = (low + high + 1) >> 1
            if starts[mid] <= i { low = mid } else { high = mid - 1 }
        }
        return low
    }

    // MARK: Building

    /// The flat start offset of each section's elements, followed by the total element count.
    /// - Complexity: O(sections).
    @inlinable
    package static func flatStarts<Model, Element>(_ sections: [ArraySection<Model, Element>]) -> [Int] {
        var starts = [Int]()
        starts.reserveCapacity(sections.count + 1)
        var total = 0
        for section in sections {
            starts.append(total)
            total += section.elements.count
        }
        starts.append(total)
        return starts
    }

    /// How a diff pairs sections: first-in-first-out by identifier (the k-th source section with an
    /// identifier is the k-th target section with it). `targetOf[s]` is the target paired with source
    /// `s` and `sourceOf[t]` the converse, -1 when unpaired.
    ///
    /// The store calls it to delete and insert whole sections before the element diff is done.
    /// - Complexity: O(sections).
    @inlinable
    package static func pairSections<Model: Differentiable, Element>(
        source: [ArraySection<Model, Element>], target: [ArraySection<Model, Element>]
    ) -> (targetOf: [Int], sourceOf: [Int]) {
        var targetOf = [Int](repeating: -1, count: source.count)
        var sourceOf = [Int](repeating: -1, count: target.count)
        var matcher = _FIFOMatcher<Model.DifferenceIdentifier>(targetCount: target.count, expected: target.count)
        for t in target.indices.reversed() { matcher.addTarget(target[t].model.differenceIdentifier, at: t) }
        for s in source.indices {
            guard let t = matcher.take(source[s].model.differenceIdentifier) else { continue }
            targetOf[s] = t
            sourceOf[t] = s
        }
        return (targetOf, sourceOf)
    }

    /// Marks placed what `changeset` moves or inserts (its placements address the target), and every
    /// element of a new section.
    /// - Complexity: O(target elements of new sections + changes).
    @inlinable
    mutating func markPlaced<Model, Element>(by changeset: StagedChangeset<Model, Element>) {
        sectionPlaced = [Bool](repeating: false, count: targetSectionCount)
        elementPlaced = [Bool](repeating: false, count: targetElementCount)
        for t in 0..<targetSectionCount where sectionSourceOf[t] < 0 {
            for j in targetStart[t]..<targetStart[t + 1] { elementPlaced[j] = true }
        }
        for stage in changeset.stages {
            for insertion in stage.sectionInserted { sectionPlaced[insertion.index] = true }
            for move in stage.sectionMoved { sectionPlaced[move.to] = true }
            for move in stage.elementMoved { elementPlaced[targetStart[move.to.section] + move.to.element] = true }
            for change in stage.elementInserted { elementPlaced[targetStart[change.path.section] + change.path.element] = true }
        }
    }

    // MARK: Invariant

    /// What is wrong with this pairing, or `nil` when it holds: the counts agree; the section and
    /// element pairings are each other's inverse; elements pair only between paired sections; only
    /// paired items are changed; every unpaired target item is placed.
    /// - Complexity: O(sections + elements).
    package func invariantViolation() -> String? {
        guard sectionChanged.count == targetSectionCount, sectionPlaced.count == targetSectionCount,
            sourceStart.count == sourceSectionCount + 1, targetStart.count == targetSectionCount + 1,
            elementTargetOf.count == sourceElementCount, elementSourceOf.count == targetElementCount,
            elementChanged.count == targetElementCount, elementPlaced.count == targetElementCount
        else { return "the counts of sections and elements disagree" }
        for (s, t) in sectionTargetOf.enumerated() where t >= 0 {
            guard t < targetSectionCount, sectionSourceOf[t] == s else { return "source section \(s) pairs one way only" }
        }
        for (t, s) in sectionSourceOf.enumerated() {
            if s < 0 {
                if sectionChanged[t] { return "new section \(t) is marked changed" }
                if !sectionPlaced[t] { return "new section \(t) is not placed" }
                continue
            }
            guard s < sourceSectionCount, sectionTargetOf[s] == t else { return "target section \(t) pairs one way only" }
        }
        for (i, j32) in elementTargetOf.enumerated() where j32 >= 0 {
            let j = Int(j32)
            guard j < targetElementCount, Int(elementSourceOf[j]) == i else { return "source element \(i) pairs one way only" }
        }
        for (j, i32) in elementSourceOf.enumerated() {
            guard i32 >= 0 else {
                if elementChanged[j] { return "new element \(j) is marked changed" }
                if !elementPlaced[j] { return "new element \(j) is not placed" }
                continue
            }
            let i = Int(i32)
            guard i < sourceElementCount, Int(elementTargetOf[i]) == j else { return "target element \(j) pairs one way only" }
            let (s, t) = (sourceSection(containing: i), targetSection(containing: j))
            guard sectionTargetOf[s] >= 0, sectionSourceOf[t] >= 0 else {
                return "element \(j) pairs across unpaired sections"
            }
        }
        return nil
    }
}
