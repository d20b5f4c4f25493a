import Crypto
import CryptoExtras
import Foundation
import ListStoreCore
import ListStoreWire

/// Seals and opens the store feed cursors a server gives users, so that a cursor says nothing of
/// the lists its user cannot read (RunningAServer.md, “Cursors”). A sealed place (`s…`) is the
/// position and fingerprint, under AES-GCM-SIV with a fresh random nonce, keyed from the store's
/// secret and bound to its uuid and epoch. SIV because a server seals once per event per user
/// stream for as long as the store lives: with plain GCM two seals that drew the same nonce would
/// give the key away; with SIV they only tell that two cursors are at the same place.
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
    ///   says nothing of the feed.
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
