import ListDiff

extension ExactString: PairingHashable {
    /// The wyhash of the string's UTF-8 bytes (equality is byte equality).
    /// - Complexity: O(n).
    public func pairingHash(seed: PairingHashSeed) -> UInt64 {
        _UTF8Bytes.with(string) { seed.hash(UnsafeRawBufferPointer($0)) }
    }
}
