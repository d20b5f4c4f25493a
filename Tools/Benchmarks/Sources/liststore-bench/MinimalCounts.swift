import ListDiff

/// The minimal operation counts of the stage contract (ListDiff's "The Stage Contract"), computed
/// independently of ListDiff's planner (only its `ArraySection` and `Differentiable` types are used),
/// for identifiers that are unique.
///
/// A section is surviving when its id is in both snapshots; an element is matched when its id is in a
/// surviving section of both snapshots. Moves are the matched elements that change section plus, per
/// surviving section, its stayers minus the longest increasing subsequence of their source positions in
/// target order; sections likewise.
struct MinimalCounts: Equatable {
    var sectionDeleted = 0
    var sectionInserted = 0
    var sectionMoved = 0
    var sectionUpdated = 0
    var elementDeleted = 0
    var elementInserted = 0
    var elementMoved = 0
    var elementUpdated = 0

    var moves: Int { sectionMoved + elementMoved }

    init(_ counts: ChangeCounts) {
        sectionDeleted = counts.sectionDeleted
        sectionInserted = counts.sectionInserted
        sectionMoved = counts.sectionMoved
        sectionUpdated = counts.sectionUpdated
        elementDeleted = counts.elementDeleted
        elementInserted = counts.elementInserted
        elementMoved = counts.elementMoved
        elementUpdated = counts.elementUpdated
    }

    init<Model: Differentiable, Element: Differentiable>(
        source: [ArraySection<Model, Element>], target: [ArraySection<Model, Element>]
    ) {
        var sourceSectionOf = [Model.DifferenceIdentifier: Int]()
        for (s, section) in source.enumerated() {
            let old = sourceSectionOf.updateValue(s, forKey: section.model.differenceIdentifier)
            precondition(old == nil, "the reference needs unique section ids")
        }
        var targetIDs = Set<Model.DifferenceIdentifier>()
        for section in target {
            let (inserted, _) = targetIDs.insert(section.model.differenceIdentifier)
            precondition(inserted, "the reference needs unique section ids")
        }

        // Sections: which survive, and where the survivors came from (in target order).
        var survivingSource = [Bool](repeating: false, count: source.count)
        var sourceOfTarget = [Int?](repeating: nil, count: target.count)
        var survivorPositions = [Int]()
        for (t, section) in target.enumerated() {
            guard let s = sourceSectionOf[section.model.differenceIdentifier] else { continue }
            survivingSource[s] = true
            sourceOfTarget[t] = s
            survivorPositions.append(s)
            if !section.model.isContentEqual(to: source[s].model) { sectionUpdated += 1 }
        }
        sectionDeleted = source.count - survivorPositions.count
        sectionInserted = target.count - survivorPositions.count
        sectionMoved = survivorPositions.count - Self.longestIncreasingSubsequence(survivorPositions)

        // Elements of surviving source sections, by id.
        var sourceElementOf = [Element.DifferenceIdentifier: (section: Int, element: Int)]()
        var survivingSourceElements = 0
        for (s, section) in source.enumerated() where survivingSource[s] {
            survivingSourceElements += section.elements.count
            for (e, element) in section.elements.enumerated() {
                let old = sourceElementOf.updateValue((s, e), forKey: element.differenceIdentifier)
                precondition(old == nil, "the reference needs unique element ids")
            }
        }

        var matched = 0
        var survivingTargetElements = 0
        for (t, section) in target.enumerated() {
            guard let s = sourceOfTarget[t] else { continue }
            survivingTargetElements += section.elements.count
            var stayers = [Int]()
            for element in section.elements {
                guard let (s2, e2) = sourceElementOf[element.differenceIdentifier] else { continue }
                matched += 1
                if s2 == s { stayers.append(e2) } else { elementMoved += 1 }
                if !element.isContentEqual(to: source[s2].elements[e2]) { elementUpdated += 1 }
            }
            elementMoved += stayers.count - Self.longestIncreasingSubsequence(stayers)
        }
        elementDeleted = survivingSourceElements - matched
        elementInserted = survivingTargetElements - matched
    }

    /// The length of a longest strictly increasing subsequence (patience sorting, O(n log n)).
    static func longestIncreasingSubsequence(_ values: [Int]) -> Int {
        var tails = [Int]()  // tails[k] = the smallest tail of an increasing run of length k + 1
        for value in values {
            var low = 0
            var high = tails.count
            while low < high {
                let mid = (low + high) / 2
                if tails[mid] < value { low = mid + 1 } else { high = mid }
            }
            if low == tails.count { tails.append(value) } else { tails[low] = value }
        }
        return tails.count
    }

    /// The kinds whose count differs, as "kind ours/minimal".
    func differences(from minimal: MinimalCounts) -> [String] {
        let pairs: [(String, Int, Int)] = [
            ("sectionDeleted", sectionDeleted, minimal.sectionDeleted),
            ("sectionInserted", sectionInserted, minimal.sectionInserted),
            ("sectionMoved", sectionMoved, minimal.sectionMoved),
            ("sectionUpdated", sectionUpdated, minimal.sectionUpdated),
            ("elementDeleted", elementDeleted, minimal.elementDeleted),
            ("elementInserted", elementInserted, minimal.elementInserted),
            ("elementMoved", elementMoved, minimal.elementMoved),
            ("elementUpdated", elementUpdated, minimal.elementUpdated),
        ]
        return pairs.filter { $0.1 != $0.2 }.map { "\($0.0) \($0.1)/\($0.2)" }
    }
}
