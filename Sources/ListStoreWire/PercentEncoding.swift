import ListStoreCore

/// Percent-encoding of URL path segments (RFC 3986): list and consumer names travel in paths.
///
/// ```swift
/// PercentEncoding.encode("a/b c")      // "a%2Fb%20c"
/// PercentEncoding.decode("a%2Fb%20c")  // "a/b c"
/// ```
package enum PercentEncoding {
    /// `text` with every byte of its UTF-8 outside the unreserved set (`A–Z a–z 0–9 - . _ ~`) encoded,
    /// and the dots of `.` and `..` too: as path segments, a URL's normalization (a proxy's, a URL
    /// loader's) would resolve them away.
    /// - Complexity: O(length).
    package static func encode(_ text: String) -> String {
        if text == "." || text == ".." { return String(repeating: "%2E", count: text.utf8.count) }
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                out.append(byte)
            default:
                out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 15)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The text `encoded` encodes, or `nil` when a `%` is not followed by two hexadecimal digits or
    /// the bytes are not UTF-8.
    /// - Complexity: O(length).
    package static func decode(_ encoded: String) -> String? {
        var bytes: [UInt8] = []
        var input = Array(encoded.utf8)[...]
        while let byte = input.popFirst() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard input.count >= 2, let high = _Hex.value(input.removeFirst()), let low = _Hex.value(input.removeFirst()) else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
