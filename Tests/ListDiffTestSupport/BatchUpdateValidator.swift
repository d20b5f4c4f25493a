import ListDiff

/// A stage that breaks the stage contract, or a changeset that does not reach its target.
public struct ContractViolation: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// Checks stages against the stage contract (ListDiff's "The Stage Contract") the way UIKit's batch
/// updates read them, independently of the engine: it never calls `Stage.apply`, and it computes
/// after-states naively with `remove(at:)` in descending and `insert(_:at:)` in ascending order.
public enum BatchUpdateValidator {
    /// Validates one stage against its before-state and returns its after-state.
    ///
    /// - Throws: `ContractViolation` naming the first broken rule.
    public static func validate<Model, Element>(
        _ stage: Stage<Model, Element>, before: [ArraySection<Model, Element>]
    ) throws -> [ArraySection<Model, Element>] {
        func fail(_ message: String) -> ContractViolation { ContractViolation(message) }

        // Rule 6: no empty stage.
        let structural = stage.sectionDeleted.count + stage.sectionInserted.count + stage.sectionMoved.count
            + stage.elementDeleted.count + stage.elementInserted.count + stage.elementMoved.count
        let updates = stage.sectionUpdated.count + stage.elementUpdated.count
        if structural + updates == 0 { throw fail("empty stage") }
        // Rule 3: an update stage holds nothing but updates.
        if updates > 0 && structural > 0 { throw fail("updates mixed with structural operations") }

        if updates > 0 {
            var state = before
            var updatedSections = Set<Int>()
            for update in stage.sectionUpdated {
                guard state.indices.contains(update.index) else { throw fail("section update \(update.index) out of range") }
                guard updatedSections.insert(update.index).inserted else { throw fail("section \(update.index) updated twice") }
                state[update.index].model = update.model
            }
            var updatedElements = Set<ElementPath>()
            for change in stage.elementUpdated {
                let p = change.path
                guard state.indices.contains(p.section), state[p.section].elements.indices.contains(p.element) else {
                    throw fail("element update \(p) out of range")
                }
                // Rule 3: no element update in a section updated by the same stage.
                if updatedSections.contains(p.section) { throw fail("element update \(p) in an updated section") }
                guard updatedElements.insert(p).inserted else { throw fail("element \(p) updated twice") }
                state[p.section].elements[p.element] = change.element
            }
            return state
        }

        // Section bookkeeping (rule 5).
        let beforeCount = before.count
        let afterCount = beforeCount - stage.sectionDeleted.count + stage.sectionInserted.count
        var sectionRemovedBefore = Set<Int>()
        for index in stage.sectionDeleted + stage.sectionMoved.map(\.from) {
            guard index >= 0 && index < beforeCount else { throw fail("section removal \(index) out of range \(beforeCount)") }
            guard sectionRemovedBefore.insert(index).inserted else { throw fail("section \(index) removed twice") }
        }
        var sectionPlacedAfter = Set<Int>()
        for index in stage.sectionInserted.map(\.index) + stage.sectionMoved.map(\.to) {
            guard index >= 0 && index < afterCount else { throw fail("section placement \(index) out of range \(afterCount)") }
            guard sectionPlacedAfter.insert(index).inserted else { throw fail("section \(index) placed twice") }
        }

        // Rule 4: element operations stay out of sections the stage deletes, inserts or moves.
        let elementRemovals = stage.elementDeleted + stage.elementMoved.map(\.from)
        let elementPlacements = stage.elementInserted.map(\.path) + stage.elementMoved.map(\.to)
        for path in elementRemovals where sectionRemovedBefore.contains(path.section) {
            throw fail("element removal \(path) in a section the stage deletes or moves")
        }
        for path in elementPlacements where sectionPlacedAfter.contains(path.section) {
            throw fail("element placement \(path) in a section the stage inserts or moves")
        }

        // Element removals, before-state coordinates, descending.
        var state = before
        var movedValues: [ElementPath: Element] = [:]
        var seenRemovals = Set<ElementPath>()
        for path in elementRemovals {
            guard state.indices.contains(path.section), state[path.section].elements.indices.contains(path.element) else {
                throw fail("element removal \(path) out of range")
            }
            guard seenRemovals.insert(path).inserted else { throw fail("element \(path) removed twice") }
        }
        for move in stage.elementMoved { movedValues[move.from] = state[move.from.section].elements[move.from.element] }
        for path in elementRemovals.sorted(by: >) { state[path.section].elements.remove(at: path.element) }

        // Section removals descending, then placements ascending.
        var movedSections: [Int: ArraySection<Model, Element>] = [:]
        for move in stage.sectionMoved { movedSections[move.to] = state[move.from] }
        for index in sectionRemovedBefore.sorted(by: >) { state.remove(at: index) }
        var sectionPlacements: [(Int, ArraySection<Model, Element>)] = stage.sectionInserted.map { ($0.index, $0.section) }
        sectionPlacements += stage.sectionMoved.map { ($0.to, movedSections[$0.to]!) }
        for (index, section) in sectionPlacements.sorted(by: { $0.0 < $1.0 }) {
            guard index <= state.count else { throw fail("section placement \(index) leaves a gap") }
            state.insert(section, at: index)
        }
        guard state.count == afterCount else { throw fail("section counts do not balance") }

        // Element placements, after-state coordinates, ascending.
        var placements: [(ElementPath, Element)] = stage.elementInserted.map { ($0.path, $0.element) }
        placements += stage.elementMoved.map { ($0.to, movedValues[$0.from]!) }
        var seenPlacements = Set<ElementPath>()
        for (path, element) in placements.sorted(by: { $0.0 < $1.0 }) {
            guard state.indices.contains(path.section) else { throw fail("element placement \(path): no such section") }
            guard seenPlacements.insert(path).inserted else { throw fail("element \(path) placed twice") }
            guard path.element >= 0 && path.element <= state[path.section].elements.count else {
                throw fail("element placement \(path) out of range")
            }
            state[path.section].elements.insert(element, at: path.element)
        }
        return state
    }

    /// Validates every stage of a changeset in order and requires the last after-state to equal `target`.
    ///
    /// - Returns: the after-state of each stage.
    /// - Throws: `ContractViolation` naming the stage and the broken rule.
    @discardableResult
    public static func validate<Model: Equatable, Element: Equatable>(
        _ changeset: StagedChangeset<Model, Element>,
        source: [ArraySection<Model, Element>],
        target: [ArraySection<Model, Element>]
    ) throws -> [[ArraySection<Model, Element>]] {
        var state = source
        var states: [[ArraySection<Model, Element>]] = []
        for (index, stage) in changeset.enumerated() {
            do {
                state = try validate(stage, before: state)
            } catch let violation as ContractViolation {
                throw ContractViolation("stage \(index + 1) of \(changeset.count): \(violation)")
            }
            states.append(state)
        }
        if source == target && !changeset.isEmpty { throw ContractViolation("equal snapshots gave \(changeset.count) stages") }
        guard state == target else { throw ContractViolation("replay does not reach the target") }
        return states
    }
}
