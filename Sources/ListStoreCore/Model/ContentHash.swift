import Crypto

/// The SHA-256 of an item's content bytes: stable across processes, machines and releases.
///
/// ```swift
/// ContentHash(of: Array("null".utf8)).hex
/// // "74234e98afe7498fb5daf1f36ac2d78acc339464f950703b8c019892f982b90b"
/// ```
public struct ContentHash: Hashable, Sendable, CustomStringConvertible {
    // The 32 bytes as four big-endian words, so that comparing and hashing are cheap.
    @usableFromInline package var words: (UInt64, UInt64, UInt64, UInt64)

    /// The hash of `content`.
    /// - Complexity: O(content.count).
    public init(of content: [UInt8]) {
        let digest = SHA256.hash(data: content)
        words = digest.withUnsafeBytes { ContentHash.words(of: $0) }
    }

    /// A hash from its 32 bytes; `nil` when `bytes` does not hold exactly 32.
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 32 else { return nil }
        words = Array(bytes).withUnsafeBytes { ContentHash.words(of: $0) }
    }

    /// A hash from 32 bytes at `pointer`.
    package init(unsafeBytes pointer: UnsafeRawPointer) {
        words = ContentHash.words(of: UnsafeRawBufferPointer(start: pointer, count: 32))
    }

    private static func words(of buffer: UnsafeRawBufferPointer) -> (UInt64, UInt64, UInt64, UInt64) {
        func word(_ k: Int) -> UInt64 { UInt64(bigEndian: buffer.loadUnaligned(fromByteOffset: 8 * k, as: UInt64.self)) }
        return (word(0), word(1), word(2), word(3))
    }

    /// The 32 bytes.
    public var bytes: [UInt8] {
        var result = [UInt8]()
        result.reserveCapacity(32)
        append(to: &result)
        return result
    }

    /// Appends the 32 bytes to `output`.
    public func append(to output: inout [UInt8]) {
        withUnsafeBytes { output.append(contentsOf: $0) }
    }

    /// Calls `body` with the 32 bytes.
    package func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        var w = (words.0.bigEndian, words.1.bigEndian, words.2.bigEndian, words.3.bigEndian)
        return Swift.withUnsafeBytes(of: &w, body)
    }

    /// The 64 lowercase hexadecimal digits.
    public var hex: String { _Hex.string(bytes) }

    /// `hex`.
    public var description: String { hex }

    public static func == (lhs: ContentHash, rhs: ContentHash) -> Bool {
        lhs.words == rhs.words
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(words.0)
        hasher.combine(words.1)
    }
}

/// Lowercase hexadecimal text.
package enum _Hex {
    package static func string(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 15)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The bytes of hexadecimal text of an even length (either case), or `nil`.
    package static func bytes(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for k in stride(from: 0, to: digits.count, by: 2) {
            guard let high = value(digits[k]), let low = value(digits[k + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    /// The value of one hexadecimal digit (either case), or `nil`.
    package static func value(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
