import ListDiff

/// The minimal counts of the stage contract (ListDiff's "The Stage Contract"), computed from the
/// definitions with quadratic, obviously-right code (unique identifiers assumed), to check the engine
/// against.
public enum MinimalCounts {
    /// Counts for two snapshots whose section ids are unique and whose element ids are unique.
    public static func of<Model: Differentiable, Element: Differentiable>(
        source: [ArraySection<Model, Element>], target: [ArraySection<Model, Element>]
    ) -> ChangeCounts {
        var counts = ChangeCounts()
        let sourceIDs = source.map(\.model.differenceIdentifier)
        let targetIDs = target.map(\.model.differenceIdentifier)
        let surviving = Set(sourceIDs).intersection(targetIDs)
        counts.sectionDeleted = sourceIDs.filter { !surviving.contains($0) }.count
        counts.sectionInserted = targetIDs.filter { !surviving.contains($0) }.count
        let survivorPositions = targetIDs.compactMap { id in surviving.contains(id) ? sourceIDs.firstIndex(of: id) : nil }
        counts.sectionMoved = survivorPositions.count - longestIncreasingLength(survivorPositions)
        for t in target where surviving.contains(t.model.differenceIdentifier) {
            let s = source.first { $0.model.differenceIdentifier == t.model.differenceIdentifier }!
            if !t.model.isContentEqual(to: s.model) { counts.sectionUpdated += 1 }
        }

        // Element id → (section id, position, element) in surviving sections.
        var sourceElements: [Element.DifferenceIdentifier: (Model.DifferenceIdentifier, Int, Element)] = [:]
        for s in source where surviving.contains(s.model.differenceIdentifier) {
            for (p, e) in s.elements.enumerated() { sourceElements[e.differenceIdentifier] = (s.model.differenceIdentifier, p, e) }
        }
        var matched = Set<Element.DifferenceIdentifier>()
        for t in target where surviving.contains(t.model.differenceIdentifier) {
            var stayerPositions: [Int] = []
            for e in t.elements {
                guard let (sectionID, position, old) = sourceElements[e.differenceIdentifier] else {
                    counts.elementInserted += 1
                    continue
                }
                matched.insert(e.differenceIdentifier)
                if sectionID == t.model.differenceIdentifier { stayerPositions.append(position) } else { counts.elementMoved += 1 }
                if !e.isContentEqual(to: old) { counts.elementUpdated += 1 }
            }
            counts.elementMoved += stayerPositions.count - longestIncreasingLength(stayerPositions)
        }
        counts.elementDeleted = sourceElements.count - matched.count
        return counts
    }

    /// Length of a longest strictly increasing subsequence, by the quadratic dynamic program.
    public static func longestIncreasingLength(_ values: [Int]) -> Int {
        var best = [Int](repeating: 1, count: values.count)
        for i in values.indices {
            for j in 0..<i where values[j] < values[i] { best[i] = max(best[i], best[j] + 1) }
        }
        return best.max() ?? 0
    }
}
