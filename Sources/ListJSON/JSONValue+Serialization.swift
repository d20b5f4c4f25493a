extension JSONValue {
    /// The canonical JSON text of the value, as UTF-8 bytes.
    ///
    /// Canonical means: no insignificant whitespace; object keys in code point order (they are stored
    /// that way); numbers written as their literal text; strings escaped minimally in the style of
    /// RFC 8785 — `"` and `\` are escaped, control characters below U+0020 are written as `\b`, `\t`,
    /// `\n`, `\f`, `\r` or `\u00xx` (lowercase hex), and every other character is written as raw UTF-8.
    /// Equal values give equal bytes, so the bytes can be hashed to detect changes.
    ///
    /// ```swift
    /// let value: JSONValue = ["b": [1, .null], "a": "tab\there"]
    /// String(decoding: value.serializedBytes(), as: UTF8.self)   // {"a":"tab\there","b":[1,null]}
    /// ```
    /// - Complexity: O(size of the value).
    public func serializedBytes() -> [UInt8] {
        var output: [UInt8] = []
        serialize(into: &output)
        return output
    }

    /// The canonical JSON text of the value (see `serializedBytes()`).
    /// - Complexity: O(size of the value).
    public func serialized() -> String {
        String(decoding: serializedBytes(), as: UTF8.self)
    }

    /// Appends the canonical JSON text of the value (see `serializedBytes()`) to `output`.
    /// - Complexity: O(size of the value), amortised.
    public func serialize(into output: inout [UInt8]) {
        switch self {
        case .null:
            output.append(contentsOf: [0x6E, 0x75, 0x6C, 0x6C])  // null
        case .bool(true):
            output.append(contentsOf: [0x74, 0x72, 0x75, 0x65])  // true
        case .bool(false):
            output.append(contentsOf: [0x66, 0x61, 0x6C, 0x73, 0x65])  // false
        case .number(let number):
            output.append(contentsOf: number.literal.utf8)
        case .string(let string):
            JSONValue.serializeString(string, into: &output)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            var first = true
            for element in elements {
                if !first { output.append(UInt8(ascii: ",")) }
                first = false
                element.serialize(into: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let object):
            output.append(UInt8(ascii: "{"))
            var first = true
            for member in object.members {
                if !first { output.append(UInt8(ascii: ",")) }
                first = false
                JSONValue.serializeString(member.key, into: &output)
                output.append(UInt8(ascii: ":"))
                member.value.serialize(into: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    /// Appends `string` as a quoted, minimally escaped JSON string.
    static func serializeString(_ string: String, into output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        _UTF8Bytes.with(string) { bytes in
            var runStart = 0
            var i = 0
            let n = bytes.count
            while i < n {
                let b = bytes[i]
                if b >= 0x20 && b != UInt8(ascii: "\"") && b != UInt8(ascii: "\\") {
                    i += 1
                    continue
                }
                if runStart < i { output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<i])) }
                output.append(UInt8(ascii: "\\"))
                switch b {
                case UInt8(ascii: "\""): output.append(UInt8(ascii: "\""))
                case UInt8(ascii: "\\"): output.append(UInt8(ascii: "\\"))
                case 0x08: output.append(UInt8(ascii: "b"))
                case 0x09: output.append(UInt8(ascii: "t"))
                case 0x0A: output.append(UInt8(ascii: "n"))
                case 0x0C: output.append(UInt8(ascii: "f"))
                case 0x0D: output.append(UInt8(ascii: "r"))
                default:
                    // \u00xx, lowercase hex; b < 0x20, so the high nibble is 0 or 1.
                    let low = b & 0xF
                    output.append(UInt8(ascii: "u"))
                    output.append(UInt8(ascii: "0"))
                    output.append(UInt8(ascii: "0"))
                    output.append(UInt8(ascii: "0") + (b >> 4))
                    output.append(low < 10 ? UInt8(ascii: "0") + low : UInt8(ascii: "a") + low - 10)
                }
                i += 1
                runStart = i
            }
            if runStart < n { output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<n])) }
        }
        output.append(UInt8(ascii: "\""))
    }
}
