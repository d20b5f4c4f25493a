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
        JSONWriter.write(self, into: &output)
    }
}
