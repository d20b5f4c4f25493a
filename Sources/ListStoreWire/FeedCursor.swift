import ListStoreCore

/// Where a follower of the store feed is, as the HTTP API writes it: the store (its uuid and epoch)
/// and a place in its feed, in one token, `<uuid>.<epoch>.<place>`. A cursor names its store, so
/// that a server tells a cursor of another store, or of this store before a restore (another
/// epoch), from one it can resume; its place names the feed's event by its position and
/// fingerprint (`FeedEvent.fingerprint`), so that a store restored without a new epoch tells a
/// cursor of its former history too.
///
/// The place is `<position>` or `<position>-<fingerprint, 16 hex digits>` as a store in this
/// process, or a journal server to its service token, writes it; a journal server seals the
/// cursors it gives users (`s…`: only a server of the same store opens it), so that a cursor says
/// nothing of the lists its user cannot read. A client keeps a cursor as it is and sends it back.
///
/// ```swift
/// let cursor = FeedCursor(store: try await store.identity(), position: page.position, fingerprint: page.fingerprint)
/// let text = cursor.description          // "3f25….1.42-9c1d…"
/// let again = try FeedCursor(parsing: text)
/// ```
public struct FeedCursor: Sendable, Hashable, CustomStringConvertible {
    /// The store the cursor is of.
    public var store: StoreIdentity
    /// The place in the feed, as its writer wrote it (see the type's overview).
    public var place: String

    /// A cursor at `place`, as a source wrote it. - Complexity: O(1).
    public init(store: StoreIdentity, place: String) {
        self.store = store
        self.place = place
    }

    /// A cursor at `position`, whose event has `fingerprint` (`nil`: not checked).
    /// - Complexity: O(1).
    public init(store: StoreIdentity, position: Int, fingerprint: Int64? = nil) {
        self.store = store
        place = fingerprint.map { "\(position)-\(Self.hex($0))" } ?? "\(position)"
    }

    /// Parses what `description` writes.
    /// - Throws: `StoreError(.invalidArgument)` naming what is wrong, for any other text.
    /// - Complexity: O(length of `text`).
    public init(parsing text: String) throws {
        let parts = text.split(separator: ".", maxSplits: 2, omittingEmptySubsequences: false)
        // Numbers of 1 to 18 digits, no sign: what the API's document describes.
        func number(_ part: Substring) -> Int? {
            (1...18).contains(part.utf8.count) && part.utf8.allSatisfy({ (0x30...0x39).contains($0) }) ? Int(part) : nil
        }
        guard parts.count == 3, (1...64).contains(parts[0].utf8.count),
            parts[0].allSatisfy({ $0.isASCII && ($0.isHexDigit || $0 == "-") }),
            let epoch = number(parts[1]), (1...256).contains(parts[2].utf8.count),
            parts[2].utf8.allSatisfy(Self.isPlaceByte)
        else {
            throw StoreError(.invalidArgument, "not a feed cursor (a cursor the server answered, as it was): \(text.prefix(80).debugDescription)")
        }
        self.init(store: StoreIdentity(uuid: String(parts[0]), epoch: epoch), place: String(parts[2]))
        guard isSealed || point != nil else {
            throw StoreError(.invalidArgument, "not a feed cursor (a cursor the server answered, as it was): \(text.prefix(80).debugDescription)")
        }
    }

    /// `<uuid>.<epoch>.<place>`.
    public var description: String { "\(store.uuid).\(store.epoch).\(place)" }

    /// Whether the place is sealed (a journal server's cursor for a user).
    public var isSealed: Bool { place.utf8.first == UInt8(ascii: "s") }

    /// The position and fingerprint of a cursor that is not sealed; `nil` for a sealed one.
    public var point: (position: Int, fingerprint: Int64?)? {
        let parts = place.split(separator: "-", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), (1...18).contains(parts[0].utf8.count),
            parts[0].utf8.allSatisfy({ (0x30...0x39).contains($0) }), let position = Int(parts[0])
        else { return nil }
        guard parts.count == 2 else { return (position, nil) }
        guard parts[1].utf8.count == 16, let bits = UInt64(parts[1], radix: 16) else { return nil }
        return (position, Int64(bitPattern: bits))
    }

    /// The position of a cursor that is not sealed (0 for a sealed one, whose position only its
    /// server reads).
    public var position: Int { point?.position ?? 0 }

    /// The bytes a place may hold: those of base64url and digits.
    static func isPlaceByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default: false
        }
    }

    /// 16 lowercase hex digits.
    static func hex(_ value: Int64) -> String {
        let digits = String(UInt64(bitPattern: value), radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
