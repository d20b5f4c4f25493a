/// A version of a list: its sections and elements, with the version's number and digest.
public struct ListSnapshot: Sendable, Hashable {
    /// The list.
    public var list: String
    /// The version (0: the list before its first commit).
    public var version: Int
    /// The digest of `sections`.
    public var digest: ListDigest
    /// The sections, in order, each with its elements.
    public var sections: [ListSection]

    /// The number of elements over all sections.
    public var elementCount: Int { sections.reduce(0) { $0 + $1.elements.count } }
}

/// A list of a store, as `Store.lists()` describes it.
public struct ListSummary: Sendable, Hashable {
    /// The list's name.
    public var name: String
    /// The head version.
    public var version: Int
    /// The digest of the head.
    public var digest: ListDigest
    /// The number of sections in the head.
    public var sectionCount: Int
    /// The number of elements in the head.
    public var elementCount: Int
    /// The oldest version whose snapshot can still be rebuilt (0 until the journal is pruned).
    public var baseVersion: Int
}
