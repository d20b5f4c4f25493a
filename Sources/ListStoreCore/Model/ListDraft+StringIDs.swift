import ListDiff
import ListJSON

extension ListDraft where Model.DifferenceIdentifier == ExactString {
    /// The index of the first section with id `id` (compared byte for byte).
    /// - Complexity: O(sections).
    public func sectionIndex(_ id: String) -> Int? {
        sectionIndex(ExactString(id))
    }

    /// Removes the section `id` with its elements.
    /// - Throws: `.invalidEdit` when there is no such section.
    public mutating func removeSection(_ id: String) throws {
        try removeSection(ExactString(id))
    }

    /// Moves the section `id` so that it ends up at `index`.
    /// - Throws: `.invalidEdit` when there is no such section or `index` is out of range.
    public mutating func moveSection(_ id: String, to index: Int) throws {
        try moveSection(ExactString(id), to: index)
    }

    /// Adds an element at the end of the section `id`.
    /// - Throws: `.invalidEdit` when there is no such section.
    public mutating func append(_ element: Element, toSection id: String) throws {
        try append(element, toSection: ExactString(id))
    }
}

extension ListDraft where Element.DifferenceIdentifier == ExactString {
    /// The path of the first element with id `id` (compared byte for byte).
    /// - Complexity: O(elements).
    public func elementPath(_ id: String) -> ElementPath? {
        elementPath(ExactString(id))
    }

    /// Removes the first element with id `id`.
    /// ```swift
    /// try draft.removeElement(message.id)
    /// ```
    /// - Throws: `.invalidEdit` when there is no such element.
    public mutating func removeElement(_ id: String) throws {
        try removeElement(ExactString(id))
    }

    /// Moves the first element with id `id` so that it ends up at `path` (in any section).
    /// - Throws: `.invalidEdit` when there is no such element or `path` is out of range once the
    ///   element is taken out.
    public mutating func moveElement(_ id: String, to path: ElementPath) throws {
        try moveElement(ExactString(id), to: path)
    }
}
