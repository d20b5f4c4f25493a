import ListDiff
import ListJSON

extension Intent {
    /// The intents that turn `base` into `mine`, read off the minimal diff's pairing: by identity, never
    /// by index.
    ///
    /// Order (the order `Rebase` applies them in): section deletes (base order), then section inserts,
    /// moves and updates (mine's order), then element deletes (base order), then element inserts, moves
    /// and updates (mine's order, an update after the move of the same element). Only what the diff
    /// moves becomes a move (items outside a longest increasing subsequence, and elements that change
    /// section), so a few moves stay a few intents. Elements of an inserted section travel inside its
    /// `insertSection`; elements of a deleted section go with its `deleteSection`. The diff pairs
    /// elements only within sections both snapshots have, so an element that left such a section for
    /// an inserted one is, to the diff, deleted and inserted again; here it keeps its identity and
    /// becomes a `moveElement` into the new section (plus an `updateElement` if its content changed),
    /// so that theirs' changes to it survive. Anchors are the neighbours in mine, so a run of inserts
    /// or moves is anchored on itself and stays together.
    ///
    /// ```swift
    /// let base = [JSONSection(model: JSONItem(id: "today"), elements: [JSONItem(id: "m1"), JSONItem(id: "m2")])]
    /// let mine = [JSONSection(model: JSONItem(id: "today"), elements: [JSONItem(id: "m2"), JSONItem(id: "m1")])]
    /// Intent.changes(from: base, to: mine)
    /// // [.moveElement("m2", section: "today", after: nil, before: "m1")]
    /// ```
    ///
    /// `Rebase(Intent.changes(from: base, to: mine), onto: base).snapshot == mine` for any two snapshots.
    ///
    /// - Complexity: the diff's O(n + k log n) plus one hash per identifier for the ordinals (n sections
    ///   and elements, k displaced), plus the size of the contents the intents carry.
    public static func changes<Item: MergeableItem>(
        from base: [ArraySection<Item, Item>], to mine: [ArraySection<Item, Item>]
    ) -> [Intent] {
        let (changeset, pairing) = StagedChangeset<Item, Item>.changesetAndPairing(source: base, target: mine)
        let baseStart = pairing.sourceStart
        let mineStart = pairing.targetStart

        // What the minimal diff moves, in mine's coordinates (every placement addresses the target shape).
        var sectionMoved = [Bool](repeating: false, count: mine.count)
        var elementMoved = [Bool](repeating: false, count: mineStart[mine.count])
        for stage in changeset.stages {
            for move in stage.sectionMoved { sectionMoved[move.to] = true }
            for move in stage.elementMoved { elementMoved[mineStart[move.to.section] + move.to.element] = true }
        }

        // References of base items, then of mine's (paired: the base item's; added: see `ItemRef`).
        var sectionOrdinals = _Ordinals()
        let baseSectionRefs = base.map { sectionOrdinals.next($0.model.documentID) }
        for s in base.indices where pairing.sectionTargetOf[s] < 0 { sectionOrdinals.release(baseSectionRefs[s]) }
        var elementOrdinals = _Ordinals()
        var baseElementRefs: [ItemRef] = []
        baseElementRefs.reserveCapacity(baseStart[base.count])
        for section in base {
            for element in section.elements { baseElementRefs.append(elementOrdinals.next(element.documentID)) }
        }
        // Unpaired base elements, in document order, are the identities an element mine adds takes
        // first: one deleted with its section is inserted anew (its section delete removes it first);
        // one that left a section both have (the diff pairs only within such sections) is adopted: it
        // is moved where mine has it, not deleted and inserted again.
        var leftSection: [ItemRef: Int] = [:]
        for s in base.indices {
            let survives = pairing.sectionTargetOf[s] >= 0
            for i in baseStart[s]..<baseStart[s + 1] where !survives || pairing.elementTargetOf[i] < 0 {
                elementOrdinals.release(baseElementRefs[i])
                if survives { leftSection[baseElementRefs[i]] = i }
            }
        }
        let mineSectionRefs = mine.indices.map { t in
            let s = pairing.sectionSourceOf[t]
            return s >= 0 ? baseSectionRefs[s] : sectionOrdinals.added(mine[t].model.documentID)
        }
        var mineElementRefs: [ItemRef] = []
        mineElementRefs.reserveCapacity(mineStart[mine.count])
        var adopted: [Int: Int] = [:]  // mine flat index → base flat index
        var adoptedFromBase = Set<Int>()
        for section in mine {
            for element in section.elements {
                let j = mineElementRefs.count
                let i = Int(pairing.elementSourceOf[j])
                if i >= 0 {
                    mineElementRefs.append(baseElementRefs[i])
                    continue
                }
                let ref = elementOrdinals.added(element.documentID)
                if let origin = leftSection[ref] {
                    adopted[j] = origin
                    adoptedFromBase.insert(origin)
                }
                mineElementRefs.append(ref)
            }
        }
        func sectionAnchors(_ t: Int) -> (after: ItemRef?, before: ItemRef?) {
            (t > 0 ? mineSectionRefs[t - 1] : nil, t + 1 < mine.count ? mineSectionRefs[t + 1] : nil)
        }
        func elementAnchors(_ j: Int, section t: Int) -> (after: ItemRef?, before: ItemRef?) {
            (j > mineStart[t] ? mineElementRefs[j - 1] : nil, j + 1 < mineStart[t + 1] ? mineElementRefs[j + 1] : nil)
        }

        var intents: [Intent] = []
        // Sections.
        for s in base.indices where pairing.sectionTargetOf[s] < 0 {
            intents.append(.deleteSection(baseSectionRefs[s], elements: Array(baseElementRefs[baseStart[s]..<baseStart[s + 1]])))
        }
        for t in mine.indices {
            let s = pairing.sectionSourceOf[t]
            let (after, before) = sectionAnchors(t)
            if s < 0 {
                let elements = (mineStart[t]..<mineStart[t + 1]).filter { adopted[$0] == nil }.map { j in
                    Element(mineElementRefs[j], content: mine[t].elements[j - mineStart[t]].contentValue)
                }
                intents.append(.insertSection(
                    mineSectionRefs[t], content: mine[t].model.contentValue, elements: elements, after: after, before: before))
                continue
            }
            if sectionMoved[t] { intents.append(.moveSection(mineSectionRefs[t], after: after, before: before)) }
            if pairing.sectionChanged[t] {
                intents.append(.updateSection(
                    mineSectionRefs[t], base: base[s].model.contentValue, content: mine[t].model.contentValue))
            }
        }
        // Elements.
        for s in base.indices where pairing.sectionTargetOf[s] >= 0 {
            for i in baseStart[s]..<baseStart[s + 1] where pairing.elementTargetOf[i] < 0 && !adoptedFromBase.contains(i) {
                intents.append(.deleteElement(baseElementRefs[i]))
            }
        }
        for t in mine.indices {
            let section = mineSectionRefs[t]
            let survives = pairing.sectionSourceOf[t] >= 0
            for j in mineStart[t]..<mineStart[t + 1] {
                let element = mine[t].elements[j - mineStart[t]]
                let paired = Int(pairing.elementSourceOf[j])
                let origin = paired >= 0 ? paired : adopted[j] ?? -1
                guard origin >= 0 || survives else { continue }  // travels inside its insertSection
                let (after, before) = elementAnchors(j, section: t)
                if origin < 0 {
                    intents.append(.insertElement(
                        mineElementRefs[j], content: element.contentValue, section: section, after: after, before: before))
                    continue
                }
                if paired < 0 || elementMoved[j] {
                    intents.append(.moveElement(mineElementRefs[j], section: section, after: after, before: before))
                }
                let changed = paired >= 0
                    ? pairing.elementChanged[j] : !element.isContentEqual(to: _baseElement(base, flat: origin, starts: baseStart))
                if changed {
                    let baseElement = _baseElement(base, flat: origin, starts: baseStart)
                    intents.append(.updateElement(
                        mineElementRefs[j], section: section, base: baseElement.contentValue, content: element.contentValue))
                }
            }
        }
        return intents
    }

    /// The base element at a flat index.
    private static func _baseElement<Item>(_ base: [ArraySection<Item, Item>], flat i: Int, starts: [Int]) -> Item {
        // The largest s with starts[s] <= i: the section holding i (empty sections start where the next does).
        var low = 0
        var high = base.count - 1
        while low < high {
            let mid = (low + high + 1) >> 1
            if starts[mid] <= i { low = mid } else { high = mid - 1 }
        }
        return base[low].elements[i - starts[low]]
    }
}

/// Ordinals of repeated ids: the k-th occurrence of an id in the base gets k; an id added by mine
/// first reuses the ordinals released (by items that went with a deleted section), then counts on.
struct _Ordinals {
    private var counts: [ExactString: Int] = [:]
    /// Per id: the released ordinals in document order, and how many of them were taken again.
    private var released: [ExactString: (ordinals: [Int], taken: Int)] = [:]

    /// The reference of the next occurrence of `id` in the base.
    mutating func next(_ id: String) -> ItemRef {
        let key = ExactString(id)
        let ordinal = counts[key, default: 0]
        counts[key] = ordinal + 1
        return ItemRef(id, ordinal: ordinal)
    }

    /// Makes a base occurrence available to an item mine adds (called in document order).
    mutating func release(_ ref: ItemRef) {
        released[ExactString(ref.id), default: ([], 0)].ordinals.append(ref.ordinal)
    }

    /// The reference of an occurrence of `id` that mine adds.
    mutating func added(_ id: String) -> ItemRef {
        let key = ExactString(id)
        if let free = released[key], free.taken < free.ordinals.count {
            released[key]?.taken += 1
            return ItemRef(id, ordinal: free.ordinals[free.taken])
        }
        return next(id)
    }
}
