import ListDiff

/// A copy of a list's head to change with director-style operations — add, remove, move and reload
/// sections and elements, addressed by identifier — before `Store.edit` commits it.
///
/// ```swift
/// try store.edit("inbox") { draft in
///     try draft.append(ListItem(id: "m9", json: ["text": "new"]), toSection: ExactString("today"))
///     try draft.moveElement(ExactString("m2"), to: ElementPath(section: 1, element: 0))
///     try draft.reloadElement(ListItem(id: "m1", json: ["text": "edited"]))
///     try draft.removeSection(ExactString("archive"))
/// }
/// ```
/// Anything else can be done on `sections` directly. Operations that name a missing identifier or an
/// index out of range throw `StoreError.invalidEdit` and change nothing.
public struct ListDraft<Model: Differentiable, Element: Differentiable> {
    /// The sections as edited so far.
    public var sections: [ArraySection<Model, Element>]

    /// A draft holding `sections`.
    public init(sections: [ArraySection<Model, Element>]) {
        self.sections = sections
    }

    // MARK: Sections

    /// The index of the first section with identifier `id`.
    /// - Complexity: O(sections).
    public func sectionIndex(_ id: Model.DifferenceIdentifier) -> Int? {
        sections.firstIndex { $0.model.differenceIdentifier == id }
    }

    /// Adds a section at the end.
    public mutating func appendSection(_ model: Model, elements: [Element] = []) {
        sections.append(ArraySection(model: model, elements: elements))
    }

    /// Inserts a section at `index` (0...count).
    /// - Throws: `.invalidEdit` when `index` is out of range.
    public mutating func insertSection(_ model: Model, elements: [Element] = [], at index: Int) throws {
        guard (0...sections.count).contains(index) else { throw outOfRange("section index \(index)", sections.count + 1) }
        sections.insert(ArraySection(model: model, elements: elements), at: index)
    }

    /// Removes the section `id` with its elements.
    /// - Throws: `.invalidEdit` when there is no such section.
    public mutating func removeSection(_ id: Model.DifferenceIdentifier) throws {
        sections.remove(at: try section(id))
    }

    /// Moves the section `id` so that it ends up at `index`.
    /// - Throws: `.invalidEdit` when there is no such section or `index` is out of range.
    public mutating func moveSection(_ id: Model.DifferenceIdentifier, to index: Int) throws {
        let from = try section(id)
        guard (0..<sections.count).contains(index) else { throw outOfRange("section index \(index)", sections.count) }
        sections.insert(sections.remove(at: from), at: index)
    }

    /// Replaces the model of the section with `model`'s identifier (its content changes).
    /// - Throws: `.invalidEdit` when there is no such section.
    public mutating func reloadSection(_ model: Model) throws {
        sections[try section(model.differenceIdentifier)].model = model
    }

    // MARK: Elements

    /// The path of the first element with identifier `id`.
    /// - Complexity: O(elements).
    public func elementPath(_ id: Element.DifferenceIdentifier) -> ElementPath? {
        for (s, section) in sections.enumerated() {
            if let e = section.elements.firstIndex(where: { $0.differenceIdentifier == id }) {
                return ElementPath(section: s, element: e)
            }
        }
        return nil
    }

    /// Adds an element at the end of the section `id`.
    /// - Throws: `.invalidEdit` when there is no such section.
    public mutating func append(_ element: Element, toSection id: Model.DifferenceIdentifier) throws {
        sections[try section(id)].elements.append(element)
    }

    /// Inserts an element at `path` (its element index may equal the section's count).
    /// - Throws: `.invalidEdit` when `path` is out of range.
    public mutating func insert(_ element: Element, at path: ElementPath) throws {
        guard sections.indices.contains(path.section) else { throw outOfRange("section index \(path.section)", sections.count) }
        guard (0...sections[path.section].elements.count).contains(path.element) else {
            throw outOfRange("element index \(path.element)", sections[path.section].elements.count + 1)
        }
        sections[path.section].elements.insert(element, at: path.element)
    }

    /// Removes the first element with identifier `id`.
    /// - Throws: `.invalidEdit` when there is no such element.
    public mutating func removeElement(_ id: Element.DifferenceIdentifier) throws {
        let path = try element(id)
        sections[path.section].elements.remove(at: path.element)
    }

    /// Moves the first element with identifier `id` so that it ends up at `path` (in any section).
    /// - Throws: `.invalidEdit` when there is no such element or `path` is out of range once the
    ///   element is taken out.
    public mutating func moveElement(_ id: Element.DifferenceIdentifier, to path: ElementPath) throws {
        let from = try element(id)
        var copy = self
        let element = copy.sections[from.section].elements.remove(at: from.element)
        try copy.insert(element, at: path)
        self = copy
    }

    /// Replaces the first element with `element`'s identifier (its content changes).
    /// - Throws: `.invalidEdit` when there is no such element.
    public mutating func reloadElement(_ element: Element) throws {
        let path = try self.element(element.differenceIdentifier)
        sections[path.section].elements[path.element] = element
    }

    // MARK: Errors

    private func section(_ id: Model.DifferenceIdentifier) throws -> Int {
        guard let index = sectionIndex(id) else { throw StoreError(.invalidEdit, "no section with id \(id)") }
        return index
    }

    private func element(_ id: Element.DifferenceIdentifier) throws -> ElementPath {
        guard let path = elementPath(id) else { throw StoreError(.invalidEdit, "no element with id \(id)") }
        return path
    }

    private func outOfRange(_ what: String, _ count: Int) -> StoreError {
        StoreError(.invalidEdit, "\(what) is out of range (0..<\(count))")
    }
}
