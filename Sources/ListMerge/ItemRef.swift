import ListJSON

/// Which item an intent means: an id and, for a repeated id, which occurrence of it.
///
/// Ids may repeat in a snapshot (rule 6 of <doc:OfflineWritesAndConflicts>); the diff pairs the
/// k-th occurrence of an id in one snapshot with the k-th occurrence in the other, in document
/// order (sections in order; elements section after section). A reference names that occurrence by
/// its `ordinal`:
/// - an item of the base (deleted, moved, updated or kept by mine) has the ordinal of its occurrence
///   among the base's sections (or elements) with the same id;
/// - an item mine adds first takes the ordinals of base items with that id that the diff leaves
///   unpaired (deleted with their section, or moved out of a section both have into a new one), in
///   document order, then counts on from the base's number of occurrences.
///
/// Both are the k-th occurrence in document order whenever ids are unique, and whenever the diff pairs
/// the k-th occurrence with the k-th. Sections and elements are counted separately. Ids compare byte
/// for byte (`ExactString`).
///
/// ```swift
/// let ref: ItemRef = "m1"             // ordinal 0
/// let second = ItemRef("m1", ordinal: 1)
/// ```
public struct ItemRef: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The item's id.
    public var id: String
    /// Which occurrence of `id`: 0 for the first (always 0 when the id is unique).
    public var ordinal: Int

    /// Creates a reference to the `ordinal`-th occurrence of `id`.
    /// - Precondition: `ordinal >= 0`.
    public init(_ id: String, ordinal: Int = 0) {
        precondition(ordinal >= 0, "ItemRef: negative ordinal")
        self.id = id
        self.ordinal = ordinal
    }

    /// A reference to the first occurrence of the id.
    public init(stringLiteral value: String) {
        self.init(value)
    }

    /// Whether both references name the same occurrence of the same id (compared byte for byte).
    /// - Complexity: O(length of the ids).
    public static func == (lhs: ItemRef, rhs: ItemRef) -> Bool {
        lhs.ordinal == rhs.ordinal && ExactString(lhs.id) == ExactString(rhs.id)
    }

    /// Hashes the id's bytes and the ordinal.
    public func hash(into hasher: inout Hasher) {
        ExactString(id).hash(into: &hasher)
        hasher.combine(ordinal)
    }

    /// `id` for the first occurrence, `id#ordinal` otherwise.
    public var description: String { ordinal == 0 ? id : "\(id)#\(ordinal)" }
}
