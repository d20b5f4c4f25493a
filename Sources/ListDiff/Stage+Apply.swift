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
        var replay = _StageReplay(source: sections)
        _ = try replay.apply(self, mergeModel: { $1 }, merge: { $1 })
        return replay.result()
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
