import Crypto
import CryptoExtras
import Foundation
import ListStoreCore
import ListStoreWire

/// Seals and opens the store feed cursors a server gives users, so that a cursor says nothing of
/// the lists its user cannot read: a sealed cursor's place (`FeedCursor.place`, `s…`) is the
/// position and fingerprint of the feed's event it stands at, encrypted and authenticated with
/// AES-GCM-SIV (swift-crypto's) under a key derived from the store's secret (made with the store, so
/// that every server of one store opens every other's), bound to the store's uuid and epoch. Each
/// sealing draws a new random nonce: two cursors at the same place look unrelated, and neither tells
/// how far the feed moved. SIV because a server seals once per event per user stream, for as long
/// as the store lives: with plain GCM, two seals that drew the same nonce would give the key away;
/// with SIV, they only tell that two cursors are at the same place.
///
/// The service token, which reads every list, gets cursors that are not sealed (`<position>` or
/// `<position>-<fingerprint>`); a user's plain cursor is refused, so that no one learns the feed's
/// length by asking for positions.
struct FeedCursorSeal: Sendable {
    private let key: SymmetricKey

    /// A seal keyed by the store's feed secret.
    init(secret: [UInt8]) {
        key = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: secret), info: Array("liststore feed cursor".utf8), outputByteCount: 32)
    }

    /// A cursor at `position` (whose event has `fingerprint`) of `store`'s feed: sealed when
    /// `sealed`, as a user's; plain otherwise.
    func cursor(at position: Int, fingerprint: Int64?, store: StoreIdentity, sealed: Bool) -> FeedCursor {
        guard sealed else { return FeedCursor(store: store, position: position, fingerprint: fingerprint) }
        var plaintext = [UInt8]()
        plaintext.reserveCapacity(16)
        for value in [Int64(position), fingerprint ?? 0] {
            withUnsafeBytes(of: value.bigEndian) { plaintext.append(contentsOf: $0) }
        }
        // Sealing with a fresh random nonce cannot fail for a 32-byte key.
        let box = try! AES.GCM._SIV.seal(plaintext, using: key, nonce: AES.GCM._SIV.Nonce(), authenticating: Self.binding(store))
        return FeedCursor(store: store, place: "s" + Self.base64URL(Array(box.combined)))
    }

    /// The position and fingerprint `cursor` stands at: a sealed cursor this store's servers
    /// sealed, or (unless `sealedOnly`) a plain one.
    /// - Throws: `APIError` 410 `cursorExpired` for a cursor that is neither, with a message that
    ///   says nothing of the feed: the client reads its lists anew and follows from a new cursor,
    ///   as after any cursor it can no longer follow (a replica set recorded before cursors were
    ///   sealed starts over so).
    func open(_ cursor: FeedCursor, sealedOnly: Bool) throws -> (position: Int, fingerprint: Int64?) {
        if !cursor.isSealed {
            guard !sealedOnly, let point = cursor.point else { throw Self.refused }
            return point
        }
        guard let bytes = Self.bytes(base64URL: cursor.place.dropFirst()), bytes.count == 12 + 16 + 16,
            let box = try? AES.GCM._SIV.SealedBox(combined: bytes),
            let plaintext = try? AES.GCM._SIV.open(box, using: key, authenticating: Self.binding(cursor.store)), plaintext.count == 16
        else { throw Self.refused }
        let values = stride(from: 0, to: 16, by: 8).map { offset in
            plaintext[offset..<offset + 8].reduce(Int64(0)) { $0 << 8 | Int64($1) }
        }
        guard values[0] >= 0 else { throw Self.refused }
        return (Int(values[0]), values[1] == 0 ? nil : values[1])
    }

    private static let refused = APIError(
        .gone, "cursorExpired",
        "the cursor is not one this server gave to this token: read the lists anew, then follow from the cursor of a new request")

    /// `error` as a user may be told it: a store feed cursor that cannot be followed, with a
    /// message that names no position of the feed (the store's says where the feed starts and ends).
    static func forUser(_ error: any Error) -> any Error {
        guard let error = error as? StoreError, error.code == .cursorExpired || error.code == .cursorOfAnotherHistory else { return error }
        return StoreError(error.code, "the cursor can no longer be followed: read the lists anew, then follow from the cursor of a new request")
    }

    /// What a sealed place is bound to: its store's uuid and epoch.
    private static func binding(_ store: StoreIdentity) -> [UInt8] { Array("\(store.uuid).\(store.epoch)".utf8) }

    private static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    private static func bytes(base64URL text: Substring) -> [UInt8]? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64).map(Array.init)
    }
}
