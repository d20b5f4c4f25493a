/// A content's fingerprint: 64 bits of SipHash under the process's random key (Swift's `Hasher`;
/// two of them where `Int` has 32 bits), never 0. A commit of a snapshot compares the target's
/// contents with the head's by fingerprint (the head keeps no contents), so that only changed
/// contents are hashed with SHA-256; the key is drawn per process and never stored, so contents
/// cannot be made to collide from outside it, and two different contents share a fingerprint with
/// probability 2^-64. (With `SWIFT_DETERMINISTIC_HASHING` set, the key is fixed: a setting for
/// tests only.) Fingerprints are never stored.
package enum _Fingerprint {
    /// The fingerprint of `content`.
    /// - Complexity: O(content.count).
    package static func of(_ content: [UInt8]) -> UInt64 {
        func hash(_ salt: UInt8) -> UInt64 {
            var hasher = Hasher()
            hasher.combine(salt)
            content.withUnsafeBytes { hasher.combine(bytes: $0) }
            return UInt64(UInt(bitPattern: hasher.finalize()))
        }
        #if _pointerBitWidth(_64)
            let value = hash(0)
        #else
            let value = hash(0) << 32 | (hash(1) & 0xFFFF_FFFF)
        #endif
        return value == 0 ? 1 : value
    }
}
