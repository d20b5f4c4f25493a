extension Stage {
    /// Applies this stage to a snapshot, returning the stage's after-state.
    ///
    /// Removals are read in the before-state, placements in the after-state, updates where the item
    /// lands; items that are neither removed nor placed keep their relative order.
    ///
    /// ```swift
    /// let next = try stage.apply(to: sections)
    /// ```
    /// - Throws: `StageApplicationError` when an index is out of range, an item is removed or placed
    ///   twice, or an element operation addresses a section the stage deletes, inserts or moves. The
    ///   input is never modified.
    /// - Complexity: O(s + e + k log k): s sections, e elements in the sections the stage touches,
    ///   k operations.
    @inlinable
    public func apply(
        to sections: [ArraySection<Model, Element>]
    ) throws(StageApplicationError) -> [ArraySection<Model, Element>] {
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
        for index in sectionDeleted { try removeSection(index, "section deleted at") }
        for move in sectionMoved { try removeSection(move.from, "section moved from") }

        // Element removals, in the before-state, grouped by section.
        var removals: [Int: [(element: Int, move: Int)]] = [:]
        for path in elementDeleted { removals[path.section, default: []].append((path.element, -1)) }
        for (k, move) in elementMoved.enumerated() {
            removals[move.from.section, default: []].append((move.from.element, k))
        }
        var state = sections
        var moved = [Element?](repeating: nil, count: elementMoved.count)
        for (section, list) in removals {
            guard section >= 0 && section < beforeCount else {
                throw StageApplicationError(.indexOutOfRange, detail: "element removed from section \(section) of \(beforeCount)")
            }
            guard !removedSection[section] else {
                throw StageApplicationError(.sectionConflict, detail: "element removed from section \(section)")
            }
            let old = state[section].elements
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
                if move >= 0 { moved[move] = old[element] }
            }
            var kept: [Element] = []
            kept.reserveCapacity(old.count - list.count)
            for e in old.indices where !gone[e] { kept.append(old[e]) }
            state[section].elements = kept
        }

        // Section placements, in the after-state.
        let afterCount = beforeCount - sectionDeleted.count + sectionInserted.count
        var placedSection = [ArraySection<Model, Element>?](repeating: nil, count: max(afterCount, 0))
        var changedSection = Set<Int>()
        func placeSection(_ index: Int, _ section: ArraySection<Model, Element>, _ what: String) throws(StageApplicationError) {
            guard index >= 0 && index < afterCount else {
                throw StageApplicationError(.indexOutOfRange, detail: "\(what) \(index) of \(afterCount) sections")
            }
            guard placedSection[index] == nil else {
                throw StageApplicationError(.placedTwice, detail: "\(what) \(index)")
            }
            placedSection[index] = section
            changedSection.insert(index)
        }
        for insertion in sectionInserted { try placeSection(insertion.index, insertion.section, "section inserted at") }
        for move in sectionMoved { try placeSection(move.to, state[move.from], "section moved to") }
        if !sectionDeleted.isEmpty || !sectionInserted.isEmpty || !sectionMoved.isEmpty {
            var after: [ArraySection<Model, Element>] = []
            after.reserveCapacity(afterCount)
            var source = 0
            for slot in placedSection {
                if let slot {
                    after.append(slot)
                } else {
                    while removedSection[source] { source += 1 }
                    after.append(state[source])
                    source += 1
                }
            }
            state = after
        }

        // Element placements, in the after-state, grouped by section.
        var placements: [Int: [(element: Int, value: Element)]] = [:]
        for change in elementInserted { placements[change.path.section, default: []].append((change.path.element, change.element)) }
        for (k, move) in elementMoved.enumerated() {
            placements[move.to.section, default: []].append((move.to.element, moved[k]!))
        }
        for (section, list) in placements {
            guard section >= 0 && section < state.count else {
                throw StageApplicationError(.indexOutOfRange, detail: "element placed in section \(section) of \(state.count)")
            }
            guard !changedSection.contains(section) else {
                throw StageApplicationError(.sectionConflict, detail: "element placed in section \(section)")
            }
            let old = state[section].elements
            let count = old.count + list.count
            var slots = [Element?](repeating: nil, count: count)
            for (element, value) in list {
                guard element >= 0 && element < count else {
                    throw StageApplicationError(
                        .indexOutOfRange, detail: "element placed at \(ElementPath(section: section, element: element)) of \(count)")
                }
                guard slots[element] == nil else {
                    throw StageApplicationError(
                        .placedTwice, detail: "element \(ElementPath(section: section, element: element))")
                }
                slots[element] = value
            }
            var next = old.makeIterator()
            state[section].elements = slots.map { $0 ?? next.next()! }
        }

        // Updates, where the items are.
        for update in sectionUpdated {
            guard update.index >= 0 && update.index < state.count else {
                throw StageApplicationError(.indexOutOfRange, detail: "section updated at \(update.index) of \(state.count)")
            }
            state[update.index].model = update.model
        }
        for change in elementUpdated {
            let path = change.path
            guard path.section >= 0 && path.section < state.count,
                path.element >= 0 && path.element < state[path.section].elements.count
            else {
                throw StageApplicationError(.indexOutOfRange, detail: "element updated at \(path)")
            }
            state[path.section].elements[path.element] = change.element
        }
        return state
    }
}

extension StagedChangeset {
    /// Applies every stage in order to `source`; for the changeset computed from `source` and a target,
    /// the result equals the target.
    ///
    /// ```swift
    /// let replica = try changeset.apply(to: replica)
    /// ```
    /// - Throws: `StageApplicationError` naming the first stage that does not fit.
    /// - Complexity: O(stages × sections + touched elements + k log k).
    @inlinable
    public func apply(
        to source: [ArraySection<Model, Element>]
    ) throws(StageApplicationError) -> [ArraySection<Model, Element>] {
        try forEachStage(applyingTo: source) { _, _ in }
    }

    /// Applies the stages in order and hands each stage with its after-state to `body`, the way a UI
    /// runs one batch update per stage: set the data source to the after-state, then animate the stage.
    ///
    /// ```swift
    /// try changeset.forEachStage(applyingTo: items) { stage, data in
    ///     tableView.performBatchUpdates { self.items = data; /* deletes, inserts, moves, reloads */ }
    /// }
    /// ```
    /// - Returns: the state after the last stage.
    /// - Throws: `StageApplicationError` naming the first stage that does not fit; `body` itself may not throw.
    @inlinable
    @discardableResult
    public func forEachStage(
        applyingTo source: [ArraySection<Model, Element>],
        _ body: (Stage<Model, Element>, [ArraySection<Model, Element>]) -> Void
    ) throws(StageApplicationError) -> [ArraySection<Model, Element>] {
        var state = source
        for (index, stage) in stages.enumerated() {
            do {
                state = try stage.apply(to: state)
            } catch {
                var located = error
                located.stage = index
                throw located
            }
            body(stage, state)
        }
        return state
    }
}
