import ListStore

/// Where a consumer stands in a list: which store (its UUID and epoch), which list, which version.
///
/// A cursor is only meaningful against the store that issued it: a consumer that keeps one can always
/// tell when it is looking at a different store, or at a store whose history was reset or restored
/// (its epoch changed), and gets "resync required" instead of silently wrong changes.
///
/// ```swift
/// let cursor = try await source.cursor(of: "inbox")          // the head, now
/// for try await change in source.changes(of: "inbox", after: cursor) { … }
/// ```
public struct Cursor: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The store that issued the cursor.
    public var store: StoreIdentity
    /// The list.
    public var list: String
    /// The last version the consumer has (0: none).
    public var version: Int

    /// A cursor.
    public init(store: StoreIdentity, list: String, version: Int) {
        self.store = store
        self.list = list
        self.version = version
    }

    /// `list@version in uuid/epoch`.
    public var description: String { "\(list)@\(version) in \(store)" }
}
