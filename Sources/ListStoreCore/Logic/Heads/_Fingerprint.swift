/// A content's fingerprint: 64 bits of SipHash under the process's random key (Swift's `Hasher`),
/// never 0. A commit of a snapshot compares the target's contents with the head's by fingerprint
/// (the head keeps no contents), so that only changed contents are hashed with SHA-256; the key
/// never leaves the process, so contents cannot be made to collide from outside it, and two
/// different contents share a fingerprint with probability 2^-64. Fingerprints are never stored.
package enum _Fingerprint {
    /// The fingerprint of `content`.
    /// - Complexity: O(content.count).
    package static func of(_ content: [UInt8]) -> UInt64 {
        var hasher = Hasher()
        content.withUnsafeBytes { hasher.combine(bytes: $0) }
        hasher.combine(content.count)
        let value = UInt64(bitPattern: Int64(hasher.finalize()))
        return value == 0 ? 1 : value
    }
}
