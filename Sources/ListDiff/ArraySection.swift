/// A section of a snapshot: a model that identifies and describes the section, and its elements.
///
/// A snapshot is an array of sections; a linear list is a snapshot with one section.
///
/// ```swift
/// let today = ArraySection(model: "today", elements: ["m1", "m2"])
/// ```
@frozen
public struct ArraySection<Model: Differentiable, Element: Differentiable> {
    /// The section's own identity and content.
    public var model: Model
    /// The section's elements, in order.
    public var elements: [Element]

    /// Creates a section from its model and elements.
    @inlinable
    public init(model: Model, elements: [Element]) {
        self.model = model
        self.elements = elements
    }
}

extension ArraySection: Equatable where Model: Equatable, Element: Equatable {}
extension ArraySection: Hashable where Model: Hashable, Element: Hashable {}
extension ArraySection: Sendable where Model: Sendable, Element: Sendable {}

extension ArraySection: CustomStringConvertible {
    public var description: String { "ArraySection(model: \(model), elements: \(elements))" }
}

/// The model of the single section that holds a linear list.
///
/// All `LinearSection` values are equal and share one identity, so a diff of two linear lists never
/// produces section operations.
@frozen
public struct LinearSection: Differentiable, Hashable, Sendable {
    /// Creates the section model.
    @inlinable
    public init() {}
}
