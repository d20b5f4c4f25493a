/// Applies stages to a snapshot by moving small tokens around instead of the items themselves, and
/// remembers where every item of the result came from: a source item (paired, perhaps updated,
/// perhaps moved), an inserted section's element, or a value the stages placed.
///
/// `Stage.apply(to:)` is one stage of it; `StagedChangeset.replay(on:mergeModel:merge:)` runs a whole changeset
/// and also returns the pairing, so that a store can write the rows of a changeset it received
/// without diffing again.
///
/// Not API.
@usableFromInline
struct _StageReplay<Model: Differentiable, Element: Differentiable> {
    /// Where an element of the state comes from.
    @usableFromInline
    struct Item {
        /// ≥ 0: a section of the source; < 0: inserted section `-section - 1`; meaningless when
        /// `value` is set.
        @usableFromInline var section: Int32
        /// The element's index in that section.
        @usableFromInline var element: Int32
        /// ≥ 0: the element's value is `values[value]` (placed or updated by the stages).
        @usableFromInline var value: Int32
        /// Whether a stage placed it (moved or inserted it).
        @usableFromInline var placed: Bool

        @inlinable
        init(section: Int32, element: Int32, value: Int32, placed: Bool) {
            self.section = section
            self.element = element
            self.value = value
            self.placed = placed
        }
    }

    /// Where a section of the state comes from.
    @usableFromInline
    struct Section {
        /// The source section, or -1 when a stage inserted it.
        @usableFromInline var origin: Int
        /// The index in `insertedSections` when `origin` is -1.
        @usableFromInline var inserted: Int
        /// ≥ 0: its model is `models[model]` (updated by the stages).
        @usableFromInline var model: Int
        /// Its elements, or `nil` while they are those of its source or inserted section unchanged.
        @usableFromInline var elements: [Item]?
        /// Whether a stage placed it (moved or inserted it).
        @usableFromInline var placed: Bool

        @inlinable
        init(origin: Int, inserted: Int, model: Int, elements: [Item]?, placed: Bool) {
            self.origin = origin
            self.inserted = inserted
            self.model = model
            self.elements = elements
            self.placed = placed
        }
    }

    @usableFromInline let source: [ArraySection<Model, Element>]
    @usableFromInline var sections: [Section]
    @usableFromInline var insertedSections: [ArraySection<Model, Element>] = []
    @usableFromInline var models: [Model] = []
    @usableFromInline var values: [Element] = []

    @inlinable
    init(source: [ArraySection<Model, Element>]) {
        precondition(source.count < Int(Int32.max), "a snapshot holds fewer than 2^31 sections")
        self.source = source
        sections = source.indices.map { Section(origin: $0, inserted: -1, model: -1, elements: nil, placed: false) }
    }

    // MARK: Reading the state

    /// The section (model and elements) a section of the state starts from.
    @inlinable
    func base(_ section: Section) -> ArraySection<Model, Element> {
        section.origin >= 0 ? source[section.origin] : insertedSections[section.inserted]
    }

    @inlinable
    func elementCount(_ s: Int) -> Int {
        sections[s].elements?.count ?? base(sections[s]).elements.count
    }

    @inlinable
    func model(_ s: Int) -> Model {
        let section = sections[s]
        return section.model >= 0 ? models[section.model] : base(section).model
    }

    @inlinable
    func value(_ item: Item) -> Element {
        if item.value >= 0 { return values[Int(item.value)] }
        if item.section >= 0 { return source[Int(item.section)].elements[Int(item.element)] }
        return insertedSections[Int(-item.section - 1)].elements[Int(item.element)]
    }

    /// The items of section `s`, made explicit.
    @inlinable
    mutating func items(_ s: Int) -> [Item] {
        if let elements = sections[s].elements { return elements }
        let section = sections[s]
        let count = base(section).elements.count
        precondition(count < Int(Int32.max), "a section holds fewer than 2^31 elements")
        let tag = Int32(truncatingIfNeeded: section.origin >= 0 ? section.origin : -section.inserted - 1)
        return (0..<count).map { Item(section: tag, element: Int32(truncatingIfNeeded: $0), value: -1, placed: false) }
    }

    // MARK: Applying a stage

    /// Applies `stage` (the rules of `Stage.apply(to:)`); each update's value is `merge(current, new)`.
    ///
    /// - Returns: the stage with its updates' values as merged.
    /// - Throws: `StageApplicationError` (without a stage index); the state is then unspecified.
    @inlinable
    mutating func apply(
        _ stage: Stage<Model, Element>, mergeModel: (Model, Model) -> Model, merge: (Element, Element) -> Element
    ) throws(StageApplicationError) -> Stage<Model, Element> {
        var stage = stage
        let beforeCount = sections.count

        // Section removals, in the before-state.
        var removedSection = [Bool](repeating: false, count: beforeCount)
        func removeSection(_ index: Int, _ what: String) throws(StageApplicationError) {
            guard index >= 0 && index < beforeCount else {
                throw StageApplicationError(.indexOutOfRange, detail: "\(what) \(index) of \(beforeCount) sections")
            }
            guard !removedSection[index] else {
                throw StageApplicationError(.removedTwice, detail: "\(what) \(index)")
            }
            removedSection[index] = true
        }
        for index in stage.sectionDeleted { try removeSection(index, "section deleted at") }
        for move in stage.sectionMoved { try removeSection(move.from, "section moved from") }

        // Element removals, in the before-state, section by section in order.
        var removals: [Int: [(element: Int, move: Int)]] = [:]
        for path in stage.elementDeleted { removals[path.section, default: []].append((path.element, -1)) }
        for (k, move) in stage.elementMoved.enumerated() {
            removals[move.from.section, default: []].append((move.from.element, k))
        }
        var moved = [Item](repeating: Item(section: 0, element: 0, value: -1, placed: true), count: stage.elementMoved.count)
        for section in removals.keys.sorted() {
            let list = removals[section]!
            guard section >= 0 && section < beforeCount else {
                throw StageApplicationError(.indexOutOfRange, detail: "element removed from section \(section) of \(beforeCount)")
            }
            guard !removedSection[section] else {
                throw StageApplicationError(.sectionConflict, detail: "element removed from section \(section)")
            }
            let old = items(section)
            var gone = [Bool](repeating: false, count: old.count)
            for (element, move) in list {
                guard element >= 0 && element < old.count else {
                    throw StageApplicationError(
                        .indexOutOfRange, detail: "element \(ElementPath(section: section, element: element)) of \(old.count)")
                }
                guard !gone[element] else {
                    throw StageApplicationError(
                        .removedTwice, detail: "element \(ElementPath(section: section, element: element))")
                }
                gone[element] = true
                if move >= 0 {
                    moved[move] = old[element]
                    moved[move].placed = true
                }
            }
            var kept: [Item] = []
            kept.reserveCapacity(old.count - list.count)
            for e in old.indices where !gone[e] { kept.append(old[e]) }
            sections[section].elements = kept
        }

        // Section placements, in the after-state.
        let afterCount = beforeCount - stage.sectionDeleted.count + stage.sectionInserted.count
        var placedSection = [Section?](repeating: nil, count: max(afterCount, 0))
        var changedSection = [Bool](repeating: false, count: max(afterCount, 0))
        func placeSection(_ index: Int, _ section: Section, _ what: String) throws(StageApplicationError) {
            guard index >= 0 && index < afterCount else {
                throw StageApplicationError(.indexOutOfRange, detail: "\(what) \(index) of \(afterCount) sections")
            }
            guard placedSection[index] == nil else {
                throw StageApplicationError(.placedTwice, detail: "\(what) \(index)")
            }
            placedSection[index] = section
            changedSection[index] = true
        }
        for insertion in stage.sectionInserted {
            try placeSection(
                insertion.index,
                Section(origin: -1, inserted: insertedSections.count, model: -1, elements: nil, placed: true),
                "section inserted at")
            insertedSections.append(insertion.section)
        }
        for move in stage.sectionMoved {
            var section = sections[move.from]
            section.placed = true
            try placeSection(move.to, section, "section moved to")
        }
        if !stage.sectionDeleted.isEmpty || !stage.sectionInserted.isEmpty || !stage.sectionMoved.isEmpty {
            var after: [Section] = []
            after.reserveCapacity(afterCount)
            var next = 0
            for slot in placedSection {
                if let slot {
                    after.append(slot)
                } else {
                    while removedSection[next] { next += 1 }
                    after.append(sections[next])
                    next += 1
                }
            }
            sections = after
        }

        // Element placements, in the after-state, section by section in order.
        var placements: [Int: [(element: Int, item: Item)]] = [:]
        for change in stage.elementInserted {
            let item = Item(section: -1, element: -1, value: Int32(truncatingIfNeeded: values.count), placed: true)
            values.append(change.element)
            placements[change.path.section, default: []].append((change.path.element, item))
        }
        for (k, move) in stage.elementMoved.enumerated() {
            placements[move.to.section, default: []].append((move.to.element, moved[k]))
        }
        for section in placements.keys.sorted() {
            let list = placements[section]!
            guard section >= 0 && section < sections.count else {
                throw StageApplicationError(.indexOutOfRange, detail: "element placed in section \(section) of \(sections.count)")
            }
            guard !changedSection[section] else {
                throw StageApplicationError(.sectionConflict, detail: "element placed in section \(section)")
            }
            let old = items(section)
            let count = old.count + list.count
            var slots = [Item?](repeating: nil, count: count)
            for (element, item) in list {
                guard element >= 0 && element < count else {
                    throw StageApplicationError(
                        .indexOutOfRange, detail: "element placed at \(ElementPath(section: section, element: element)) of \(count)")
                }
                guard slots[element] == nil else {
                    throw StageApplicationError(
                        .placedTwice, detail: "element \(ElementPath(section: section, element: element))")
                }
                slots[element] = item
            }
            var rest = old.makeIterator()
            sections[section].elements = slots.map { $0 ?? rest.next()! }
        }

        // Updates, where the items are.
        for k in stage.sectionUpdated.indices {
            let index = stage.sectionUpdated[k].index
            guard index >= 0 && index < sections.count else {
                throw StageApplicationError(.indexOutOfRange, detail: "section updated at \(index) of \(sections.count)")
            }
            let merged = mergeModel(model(index), stage.sectionUpdated[k].model)
            sections[index].model = models.count
            models.append(merged)
            stage.sectionUpdated[k].model = merged
        }
        for k in stage.elementUpdated.indices {
            let path = stage.elementUpdated[k].path
            guard path.section >= 0 && path.section < sections.count,
                path.element >= 0 && path.element < elementCount(path.section)
            else {
                throw StageApplicationError(.indexOutOfRange, detail: "element updated at \(path)")
            }
            var elements = items(path.section)
            sections[path.section].elements = nil
            let merged = merge(value(elements[path.element]), stage.elementUpdated[k].element)
            elements[path.element].value = Int32(truncatingIfNeeded: values.count)
            values.append(merged)
            sections[path.section].elements = elements
            stage.elementUpdated[k].element = merged
        }
        return stage
    }

    // MARK: The result

    /// The state as sections; sections no stage touched are the source's own arrays.
    @inlinable
    func result() -> [ArraySection<Model, Element>] {
        sections.indices.map { s in
            var section = base(sections[s])
            if sections[s].model >= 0 { section.model = models[sections[s].model] }
            if let items = sections[s].elements { section.elements = items.map(value) }
            return section
        }
    }

    /// The pairing of the source with the state, as the store's writer reads a diff's: elements are
    /// paired only between sections that are themselves paired (the others are written whole), an
    /// updated item counts as changed, and a moved or inserted one as placed.
    @inlinable
    func pairing(target: [ArraySection<Model, Element>]) -> DiffPairing {
        var input = DiffPairing(sourceSectionCount: source.count, targetSectionCount: sections.count)
        for (t, section) in sections.enumerated() {
            input.sectionPlaced[t] = section.placed
            guard section.origin >= 0 else { continue }
            input.sectionSourceOf[t] = section.origin
            input.sectionTargetOf[section.origin] = t
            input.sectionChanged[t] = section.model >= 0
        }
        input.sourceStart = DiffPairing.flatStarts(source)
        input.targetStart = DiffPairing.flatStarts(target)
        let total = input.sourceStart[source.count]
        let targetTotal = input.targetStart[target.count]
        precondition(total < Int(Int32.max) && targetTotal < Int(Int32.max), "a snapshot holds fewer than 2^31 elements")
        input.elementTargetOf = [Int32](repeating: -1, count: total)
        input.elementSourceOf = [Int32](repeating: -1, count: targetTotal)
        input.elementChanged = [Bool](repeating: false, count: targetTotal)
        input.elementPlaced = [Bool](repeating: false, count: targetTotal)
        for (t, section) in sections.enumerated() {
            let start = input.targetStart[t]
            guard section.origin >= 0 else {
                for j in start..<input.targetStart[t + 1] { input.elementPlaced[j] = true }
                continue
            }
            guard let items = section.elements else {
                let sourceStart = input.sourceStart[section.origin]
                for e in 0..<input.targetStart[t + 1] - start {
                    input.elementSourceOf[start + e] = Int32(truncatingIfNeeded: sourceStart + e)
                    input.elementTargetOf[sourceStart + e] = Int32(truncatingIfNeeded: start + e)
                }
                continue
            }
            for (e, item) in items.enumerated() {
                let j = start + e
                let origin = Int(item.section)  // an inserted element's is -1
                if item.section >= 0 && input.sectionTargetOf[origin] >= 0 {
                    let i = input.sourceStart[origin] + Int(item.element)
                    input.elementSourceOf[j] = Int32(truncatingIfNeeded: i)
                    input.elementTargetOf[i] = Int32(truncatingIfNeeded: j)
                    input.elementChanged[j] = item.value >= 0
                    input.elementPlaced[j] = item.placed
                } else {
                    input.elementPlaced[j] = true
                }
            }
        }
        return input
    }
}

extension StagedChangeset {
    /// Applies the stages to `source` like `apply(to:)`, merging each update's value into the item it
    /// updates, and tells which source item each item of the result is.
    ///
    /// Not API (package-visible: a replica applies the changesets of its source's journal and writes
    /// the rows along this pairing instead of diffing again).
    ///
    /// - Parameters:
    ///   - mergeModel, merge: the value an update gives an item, from its current value and the
    ///     update's (`{ $1 }` replaces it).
    /// - Returns: the changeset with its updates' values as merged, the result, and the pairing.
    /// - Throws: `StageApplicationError` naming the first stage that does not fit.
    /// - Complexity: O(stages × sections + touched elements + k log k).
    @inlinable
    package func replay(
        on source: [ArraySection<Model, Element>], mergeModel: (Model, Model) -> Model,
        merge: (Element, Element) -> Element
    ) throws(StageApplicationError) -> (changeset: Self, result: [ArraySection<Model, Element>], pairing: DiffPairing) {
        var replay = _StageReplay(source: source)
        var merged: [Stage<Model, Element>] = []
        merged.reserveCapacity(stages.count)
        for (index, stage) in stages.enumerated() {
            do {
                merged.append(try replay.apply(stage, mergeModel: mergeModel, merge: merge))
            } catch {
                var located = error
                located.stage = index
                throw located
            }
        }
        let result = replay.result()
        return (Self(stages: merged), result, replay.pairing(target: result))
    }
}
