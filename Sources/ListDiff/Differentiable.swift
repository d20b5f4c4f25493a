/// A type whose values have an identity that survives changes to their content.
///
/// The difference identifier says *who* an item is; two snapshots that hold items with the same
/// identifier hold the same item, possibly moved or changed. Identifiers may repeat: repeated
/// identifiers are paired first-in-first-out, and the diff stays exact.
///
/// ```swift
/// struct Message: ContentIdentifiable { let id: String; var text: String
///     var differenceIdentifier: String { id } }
/// ```
public protocol ContentIdentifiable {
    /// The type of the identity of a value.
    associatedtype DifferenceIdentifier: Hashable

    /// The identity of this value: equal for the same item before and after a change.
    var differenceIdentifier: DifferenceIdentifier { get }

    /// The hash the diff pairs items by: `identifier.pairingHash(seed:)` when the identifier is
    /// `PairingHashable` (`String`, `ExactString`), `identifier.hashValue` otherwise.
    ///
    /// The defaults are chosen by the identifier's type, and are what you want: to make pairing
    /// faster or seeded, adopt `PairingHashable` in the identifier type rather than implementing
    /// this. An implementation must give equal hashes for equal identifiers and the same hash for
    /// the same seed within a process.
    ///
    /// ```swift
    /// let hash = Message.pairingHash(of: "m1", seed: .process)
    /// ```
    /// - Complexity: O(length of the identifier).
    static func pairingHash(of identifier: DifferenceIdentifier, seed: PairingHashSeed) -> Int
}

extension ContentIdentifiable {
    /// `identifier.hashValue`.
    @inlinable
    public static func pairingHash(of identifier: DifferenceIdentifier, seed: PairingHashSeed) -> Int {
        identifier.hashValue
    }
}

extension ContentIdentifiable where DifferenceIdentifier: PairingHashable {
    /// `identifier.pairingHash(seed:)`.
    @inlinable
    public static func pairingHash(of identifier: DifferenceIdentifier, seed: PairingHashSeed) -> Int {
        Int(truncatingIfNeeded: identifier.pairingHash(seed: seed))
    }
}

/// A type whose values can tell whether their content, what a user sees, has changed.
public protocol ContentEquatable {
    /// Whether this value shows the same content as `source`.
    ///
    /// A matched pair of items whose content differs becomes an update in a staged changeset.
    /// - Complexity: should be O(1) or O(size of the content).
    func isContentEqual(to source: Self) -> Bool
}

/// A type that can be diffed: it has a difference identifier and comparable content.
///
/// ```swift
/// struct Row: Differentiable {
///     var id: String
///     var title: String
///     var differenceIdentifier: String { id }
///     func isContentEqual(to source: Row) -> Bool { title == source.title }
/// }
/// ```
public typealias Differentiable = ContentIdentifiable & ContentEquatable

extension ContentEquatable where Self: Equatable {
    /// Equatable values compare their content with `==`.
    @inlinable
    public func isContentEqual(to source: Self) -> Bool { self == source }
}

extension ContentIdentifiable where Self: Hashable {
    /// Hashable values are their own identity.
    @inlinable
    public var differenceIdentifier: Self { self }
}

extension String: ContentIdentifiable, ContentEquatable {}
extension Substring: ContentIdentifiable, ContentEquatable {}
extension Character: ContentIdentifiable, ContentEquatable {}
extension Int: ContentIdentifiable, ContentEquatable {}
extension Int64: ContentIdentifiable, ContentEquatable {}
extension UInt64: ContentIdentifiable, ContentEquatable {}
extension Int32: ContentIdentifiable, ContentEquatable {}
extension UInt32: ContentIdentifiable, ContentEquatable {}
extension Bool: ContentIdentifiable, ContentEquatable {}
