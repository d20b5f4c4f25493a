/// The position of an element: the index of its section and its index inside that section.
@frozen
public struct ElementPath: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Zero-based index of the section.
    public var section: Int
    /// Zero-based index of the element inside its section.
    public var element: Int

    /// Creates a path.
    @inlinable
    public init(section: Int, element: Int) {
        self.section = section
        self.element = element
    }

    @inlinable
    public static func < (lhs: ElementPath, rhs: ElementPath) -> Bool {
        (lhs.section, lhs.element) < (rhs.section, rhs.element)
    }

    public var description: String { "[\(section), \(element)]" }
}

/// A move of an item from a position in the before-state of a stage to a position in its after-state.
@frozen
public struct Move<Position: Hashable & Sendable>: Hashable, Sendable {
    /// Where the item is in the before-state.
    public var from: Position
    /// Where the item is in the after-state.
    public var to: Position

    /// Creates a move.
    @inlinable
    public init(from: Position, to: Position) {
        self.from = from
        self.to = to
    }
}
