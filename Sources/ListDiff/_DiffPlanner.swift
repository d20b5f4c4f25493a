/// One stage in index form; inserted and updated items are addressed in target coordinates, so the
/// generic layer takes their values from the target.
///
/// Not API.
@usableFromInline
internal struct _StagePlan {
    @usableFromInline var sectionDeleted: [Int] = []
    @usableFromInline var sectionInserted: [Int] = []
    @usableFromInline var sectionMoved: [Move<Int>] = []
    @usableFromInline var sectionUpdated: [Int] = []
    @usableFromInline var elementDeleted: [ElementPath] = []
    @usableFromInline var elementInserted: [ElementPath] = []
    @usableFromInline var elementMoved: [Move<ElementPath>] = []
    @usableFromInline var elementUpdated: [ElementPath] = []

    @usableFromInline
    var isEmpty: Bool {
        sectionDeleted.isEmpty && sectionInserted.isEmpty && sectionMoved.isEmpty && sectionUpdated.isEmpty
            && elementDeleted.isEmpty && elementInserted.isEmpty && elementMoved.isEmpty && elementUpdated.isEmpty
    }
}

/// Turns a pairing into minimal stages that obey the stage contract.
///
/// Stages, each left out when empty:
/// - without section moves: one structural stage (section deletes and inserts, element deletes, moves
///   and inserts), removals in source coordinates, placements in target coordinates;
/// - with section moves: (1) section and element deletes, (2) section moves and inserts, (3) element
///   moves and inserts, because no element operation may address a section moved in the same stage;
/// - then an update stage (section updates, element updates outside updated sections) and a last stage
///   for element updates inside updated sections.
///
/// Moves are minimal: a section or element stays unless it is outside a longest increasing
/// subsequence of source positions taken in target order.
///
/// - Complexity: O(n + k log n) for n items and k displaced items.
@usableFromInline
internal func _planStages(_ input: DiffPairing) -> [_StagePlan] {
    let sourceSectionCount = input.sectionTargetOf.count
    let targetSectionCount = input.sectionSourceOf.count

    // Sections: ranks of surviving source sections once deletions are done.
    var survivingRank = [Int](repeating: -1, count: sourceSectionCount)
    var sectionDeleted: [Int] = []
    var rank = 0
    for s in 0..<sourceSectionCount {
        if input.sectionTargetOf[s] >= 0 {
            survivingRank[s] = rank
            rank += 1
        } else {
            sectionDeleted.append(s)
        }
    }
    var sectionInserted: [Int] = []
    var survivorRanksInTargetOrder: [Int32] = []
    survivorRanksInTargetOrder.reserveCapacity(rank)
    for t in 0..<targetSectionCount {
        let s = input.sectionSourceOf[t]
        if s >= 0 { survivorRanksInTargetOrder.append(Int32(truncatingIfNeeded: survivingRank[s])) } else { sectionInserted.append(t) }
    }
    let sectionStays = _longestIncreasingSubsequenceMask(survivorRanksInTargetOrder)
    var sectionMoved: [Move<Int>] = []
    do {
        var k = 0
        for t in 0..<targetSectionCount where input.sectionSourceOf[t] >= 0 {
            if !sectionStays[k] { sectionMoved.append(Move(from: Int(survivorRanksInTargetOrder[k]), to: t)) }
            k += 1
        }
    }
    let split = !sectionMoved.isEmpty

    // Elements: deletions in source coordinates; in split mode also each matched element's rank among
    // the matched elements of its section (its index once deletions are done).
    var elementDeleted: [ElementPath] = []
    var remainingRank: [Int] = split ? [Int](repeating: -1, count: input.elementTargetOf.count) : []
    for s in 0..<sourceSectionCount where input.sectionTargetOf[s] >= 0 {
        let start = input.sourceStart[s]
        var kept = 0
        for i in start..<input.sourceStart[s + 1] {
            if input.elementTargetOf[i] < 0 {
                elementDeleted.append(ElementPath(section: s, element: i - start))
            } else {
                if split { remainingRank[i] = kept }
                kept += 1
            }
        }
    }

    func sourceSection(ofFlat i: Int) -> Int {
        // Largest s with sourceStart[s] <= i (sections may be empty).
        var low = 0
        var high = sourceSectionCount - 1
        while low < high {
            let mid = (low + high + 1) >> 1
            if input.sourceStart[mid] <= i { low = mid } else { high = mid - 1 }
        }
        return low
    }
    func origin(ofFlat i: Int, section s: Int) -> ElementPath {
        split
            ? ElementPath(section: input.sectionTargetOf[s], element: remainingRank[i])
            : ElementPath(section: s, element: i - input.sourceStart[s])
    }

    var elementInserted: [ElementPath] = []
    var elementMoved: [Move<ElementPath>] = []
    var elementUpdatedEarly: [ElementPath] = []
    var elementUpdatedLate: [ElementPath] = []
    var sectionUpdated: [Int] = []
    var stayers: [Int32] = []
    for t in 0..<targetSectionCount {
        let s = input.sectionSourceOf[t]
        guard s >= 0 else { continue }
        let sectionChanged = input.sectionChanged[t]
        if sectionChanged { sectionUpdated.append(t) }
        let start = input.targetStart[t]
        let end = input.targetStart[t + 1]
        let ownStart = input.sourceStart[s]
        let ownEnd = input.sourceStart[s + 1]
        stayers.removeAll(keepingCapacity: true)
        stayers.reserveCapacity(end - start)
        for j in start..<end {
            let i = Int(input.elementSourceOf[j])
            if i >= ownStart && i < ownEnd { stayers.append(Int32(truncatingIfNeeded: i)) }
        }
        let stays = _longestIncreasingSubsequenceMask(stayers)
        var k = 0
        for j in start..<end {
            let path = ElementPath(section: t, element: j - start)
            let i = Int(input.elementSourceOf[j])
            if i < 0 {
                elementInserted.append(path)
                continue
            }
            if i >= ownStart && i < ownEnd {
                if !stays[k] { elementMoved.append(Move(from: origin(ofFlat: i, section: s), to: path)) }
                k += 1
            } else {
                elementMoved.append(Move(from: origin(ofFlat: i, section: sourceSection(ofFlat: i)), to: path))
            }
            if input.elementChanged[j] {
                if sectionChanged { elementUpdatedLate.append(path) } else { elementUpdatedEarly.append(path) }
            }
        }
    }

    var stages: [_StagePlan] = []
    if split {
        var removal = _StagePlan()
        removal.sectionDeleted = sectionDeleted
        removal.elementDeleted = elementDeleted
        var sections = _StagePlan()
        sections.sectionMoved = sectionMoved
        sections.sectionInserted = sectionInserted
        var elements = _StagePlan()
        elements.elementMoved = elementMoved
        elements.elementInserted = elementInserted
        stages += [removal, sections, elements]
    } else {
        var structure = _StagePlan()
        structure.sectionDeleted = sectionDeleted
        structure.sectionInserted = sectionInserted
        structure.elementDeleted = elementDeleted
        structure.elementMoved = elementMoved
        structure.elementInserted = elementInserted
        stages.append(structure)
    }
    var updates = _StagePlan()
    updates.sectionUpdated = sectionUpdated
    updates.elementUpdated = elementUpdatedEarly
    var lateUpdates = _StagePlan()
    lateUpdates.elementUpdated = elementUpdatedLate
    stages += [updates, lateUpdates]
    return stages.filter { !$0.isEmpty }
}
