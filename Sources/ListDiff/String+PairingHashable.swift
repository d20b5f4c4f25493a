extension String: PairingHashable {
    /// The wyhash of the string's UTF-8 bytes when they are ASCII; otherwise a hash that agrees with
    /// `==`, which is canonical equivalence: see `_nonASCIIPairingHash(_:seed:)`.
    /// - Complexity: O(n).
    @inlinable
    public func pairingHash(seed: PairingHashSeed) -> UInt64 {
        let ascii = utf8.withContiguousStorageIfAvailable {
            _Wyhash.hash(UnsafeRawBufferPointer($0), premixed: seed.premixed, asciiOnly: true)
        }
        if let ascii, let hash = ascii { return hash }
        return _nonASCIIPairingHash(self, seed: seed)
    }
}

/// The pairing hash of a string that is not ASCII (or not contiguous).
///
/// `String`'s `==` is canonical equivalence, so the hash must be one of the normalized form. Only
/// three non-ASCII scalars are canonically equivalent to ASCII ones (U+037E GREEK QUESTION MARK to
/// ";", U+1FEF GREEK VARIA to "`", U+212A KELVIN SIGN to "K"; `PairingHashTests` checks every
/// scalar): a string of ASCII and those is equal to an ASCII string, and is hashed as that string;
/// any other string is equal to no ASCII string, and is hashed by `hashValue` (which normalizes).
@usableFromInline @inline(never)
func _nonASCIIPairingHash(_ string: String, seed: PairingHashSeed) -> UInt64 {
    var ascii = [UInt8]()
    ascii.reserveCapacity(string.utf8.count)
    for scalar in string.unicodeScalars {
        switch scalar.value {
        case 0..<0x80: ascii.append(UInt8(scalar.value))
        case 0x037E: ascii.append(UInt8(ascii: ";"))
        case 0x1FEF: ascii.append(UInt8(ascii: "`"))
        case 0x212A: ascii.append(UInt8(ascii: "K"))
        default: return UInt64(UInt(bitPattern: string.hashValue))
        }
    }
    return ascii.withUnsafeBytes { seed.hash($0) }
}
