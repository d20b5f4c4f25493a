/// A set of hashes that answers "maybe" or "no": one bit per slot of a table at least 16 times
/// larger than the hashes it holds, so that about one "maybe" in 16 of a hash it does not hold is
/// false. It spares a lookup in a set of strings (hashed anew each time) for most of the items a
/// scan meets.
///
/// Not API: package-visible for the engines.
package struct _HashSieve: Sendable {
    private var bits: [UInt64]
    private let mask: Int

    /// A sieve holding `hashes`.
    /// - Complexity: O(hashes).
    package init(_ hashes: [Int]) {
        var slots = 1024
        while slots < 16 * hashes.count { slots *= 2 }
        bits = Array(repeating: 0, count: slots / 64)
        mask = slots - 1
        for hash in hashes { bits[(hash & mask) >> 6] |= 1 << UInt64(hash & 63) }
    }

    /// Whether `hash` may be one of the hashes it holds (`false`: it is not).
    /// - Complexity: O(1).
    @inline(__always)
    package func mayHold(_ hash: Int) -> Bool {
        bits[(hash & mask) >> 6] & (1 << UInt64(hash & 63)) != 0
    }
}
