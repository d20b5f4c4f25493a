/// What a token may do with a list: each grant includes the ones before it.
///
/// ```swift
/// AccessGrant.write >= .read   // true: who may write may read
/// ```
public enum AccessGrant: Int, Sendable, Comparable, CaseIterable, CustomStringConvertible {
    /// Summaries, snapshots, journals, diffs, event streams, and the answers to its pushes.
    case read = 1
    /// Also commits and pushes.
    case write
    /// Also consumers, pruning and deleting the list.
    case admin

    /// The grant named `name` (`read`, `write` or `admin`); `nil` for any other name.
    /// - Complexity: O(1).
    public init?(name: String) {
        guard let grant = Self.allCases.first(where: { $0.description == name }) else { return nil }
        self = grant
    }

    /// `read`, `write` or `admin`.
    public var description: String {
        switch self {
        case .read: "read"
        case .write: "write"
        case .admin: "admin"
        }
    }

    public static func < (a: AccessGrant, b: AccessGrant) -> Bool { a.rawValue < b.rawValue }
}
