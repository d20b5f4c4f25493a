/// The key of the hashes a diff pairs items by: `process`, drawn once per process from the
/// system's random generator, so that no one can choose identifiers that collide in advance.
///
/// ```swift
/// let h = PairingHashSeed.process.hash(UnsafeRawBufferPointer(bytes))
/// ```
@frozen
public struct PairingHashSeed: Sendable {
    @usableFromInline
    let premixed: UInt64

    /// A seed of the given value (tests use fixed ones; the diff uses `process`).
    @inlinable
    public init(_ seed: UInt64) {
        premixed = _Wyhash.premix(seed)
    }

    /// The seed of this process.
    public static let process = PairingHashSeed(UInt64.random(in: .min ... .max))

    /// The wyhash (final version 4.2) of `bytes` under this seed.
    /// - Complexity: O(n); two multiplications up to 16 bytes.
    @inlinable
    public func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        _Wyhash.hash(bytes, premixed: premixed, asciiOnly: false)!
    }
}

/// An identifier that gives the diff the hash it pairs items by, cheaper than `hashValue` (which
/// is SipHash): `String` and ListJSON's `ExactString` hash their UTF-8 bytes with wyhash.
///
/// Equal identifiers must have equal hashes under the same seed; unequal ones may collide, at the
/// cost of time only: the diff checks every pair it makes with `==`, and pairs by identifier
/// alone when one does not hold.
///
/// ```swift
/// struct Key: PairingHashable { var bytes: [UInt8]
///     func pairingHash(seed: PairingHashSeed) -> UInt64 { bytes.withUnsafeBytes { seed.hash($0) } } }
/// ```
public protocol PairingHashable: Hashable {
    /// The hash of this identifier under `seed`.
    /// - Complexity: should be O(size of the identifier).
    func pairingHash(seed: PairingHashSeed) -> UInt64
}
