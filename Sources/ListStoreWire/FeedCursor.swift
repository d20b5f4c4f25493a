import ListStoreCore

/// Where a follower of the store feed is, as the HTTP API writes it: the store (its uuid and
/// epoch) and the feed position, in one opaque token, `<uuid>.<epoch>.<position>`. A cursor names
/// its store, so that a server tells a cursor of another store, or of this store before a restore
/// (another epoch), from one it can resume.
///
/// ```swift
/// let cursor = FeedCursor(store: try await store.identity(), position: page.position)
/// let text = cursor.description          // "3f25….1.42"
/// let again = try FeedCursor(parsing: text)
/// ```
public struct FeedCursor: Sendable, Hashable, CustomStringConvertible {
    /// The store the position is of.
    public var store: StoreIdentity
    /// The feed position.
    public var position: Int

    /// A cursor. - Complexity: O(1).
    public init(store: StoreIdentity, position: Int) {
        self.store = store
        self.position = position
    }

    /// Parses what `description` writes.
    /// - Throws: `StoreError(.invalidArgument)` naming what is wrong, for any other text.
    /// - Complexity: O(length of `text`).
    public init(parsing text: String) throws {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        // Numbers of 1 to 18 digits, no sign: what the API's document describes.
        func number(_ part: Substring) -> Int? {
            (1...18).contains(part.utf8.count) && part.utf8.allSatisfy({ (0x30...0x39).contains($0) }) ? Int(part) : nil
        }
        guard parts.count == 3, (1...64).contains(parts[0].utf8.count),
            parts[0].allSatisfy({ $0.isASCII && ($0.isHexDigit || $0 == "-") }),
            let epoch = number(parts[1]), let position = number(parts[2])
        else {
            throw StoreError(.invalidArgument, "not a feed cursor (a cursor the server answered, as it was): \(text.prefix(80).debugDescription)")
        }
        self.init(store: StoreIdentity(uuid: String(parts[0]), epoch: epoch), position: position)
    }

    /// `<uuid>.<epoch>.<position>`.
    public var description: String { "\(store.uuid).\(store.epoch).\(position)" }
}
