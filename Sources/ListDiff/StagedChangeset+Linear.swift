extension StagedChangeset where Model == LinearSection {
    /// Computes the staged changeset between two linear lists.
    ///
    /// A linear list is a snapshot with one section: every path has `section == 0` and no section
    /// operation appears.
    ///
    /// ```swift
    /// let changeset = StagedChangeset(source: ["a", "b", "c"], target: ["c", "a", "d"])
    /// // one stage: delete [0, 1], move [0, 2] → [0, 0], insert [0, 2]
    /// ```
    /// - Complexity: O(n + k log n).
    @inlinable
    public init(source: [Element], target: [Element]) {
        self.init(
            source: [ArraySection(model: LinearSection(), elements: source)],
            target: [ArraySection(model: LinearSection(), elements: target)])
    }

    /// Applies every stage in order to a linear list.
    ///
    /// - Throws: `StageApplicationError` naming the first stage that does not fit.
    @inlinable
    public func apply(to source: [Element]) throws(StageApplicationError) -> [Element] {
        let result = try apply(to: [ArraySection(model: LinearSection(), elements: source)])
        guard result.count == 1 else {
            throw StageApplicationError(.indexOutOfRange, detail: "a linear list must keep exactly one section")
        }
        return result[0].elements
    }
}
