/// Writes canonical JSON text (see `JSONValue.serializedBytes()`) as UTF-8 bytes, member by member,
/// and appends already-stored canonical JSON (a list's stored contents, a journal entry's stored
/// stages) verbatim.
///
/// The one writer of the JSON formats (`Docs/Formats.md`): `JSONValue` serialization, stage
/// objects, snapshot documents and the documents of the journal over HTTP are all written with it.
/// The caller writes the keys of each object in code point order (debug builds check it);
/// separators are the writer's.
///
/// ```swift
/// var writer = JSONWriter()
/// writer.object { w in
///     w.key("list"); w.string("inbox")
///     w.key("stages"); w.fragment(entry.stagesJSON)   // stored canonical JSON, copied as is
///     w.key("version"); w.int(8)
/// }
/// writer.bytes   // {"list":"inbox","stages":[…],"version":8}
/// ```
///
/// Not API (package-visible): the project's targets share it; what it writes is documented by the
/// documents themselves.
/// - Complexity: every method is O(size of what it writes), amortised.
package struct JSONWriter {
    /// The text written so far.
    @usableFromInline package var bytes: [UInt8]
    /// Whether the next key or array value needs a `,` first.
    @usableFromInline var separated = false
    #if DEBUG
        /// Per open container, the last key written (nil for arrays and objects with no key yet).
        @usableFromInline var lastKeys: [[UInt8]?] = []
    #endif

    /// A writer with no text yet; `capacity` reserves room for that many bytes.
    @inlinable package init(capacity: Int = 0) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    // MARK: Containers

    /// `{`, the members `body` writes, `}`.
    @inlinable package mutating func object(_ body: (inout JSONWriter) -> Void) {
        open(UInt8(ascii: "{"))
        body(&self)
        close(UInt8(ascii: "}"))
    }

    /// `[`, the values `body` writes, `]`.
    @inlinable package mutating func array(_ body: (inout JSONWriter) -> Void) {
        open(UInt8(ascii: "["))
        body(&self)
        close(UInt8(ascii: "]"))
    }

    /// An array of one value per element of `values`, each written by `write`.
    @inlinable package mutating func array<S: Sequence>(_ values: S, _ write: (inout JSONWriter, S.Element) -> Void) {
        open(UInt8(ascii: "["))
        for value in values { write(&self, value) }
        close(UInt8(ascii: "]"))
    }

    @inlinable mutating func open(_ bracket: UInt8) {
        separate()
        bytes.append(bracket)
        separated = false
        #if DEBUG
            lastKeys.append(nil)
        #endif
    }

    @inlinable mutating func close(_ bracket: UInt8) {
        bytes.append(bracket)
        separated = true
        #if DEBUG
            lastKeys.removeLast()
        #endif
    }

    @inlinable mutating func separate() {
        if separated { bytes.append(UInt8(ascii: ",")) }
    }

    // MARK: Keys

    /// `"name":`, after a `,` when a member precedes; the value follows. `name` needs no escaping.
    @inlinable package mutating func key(_ name: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        bytes.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
        separated = false
        #if DEBUG
            checkOrder(Array(UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)))
        #endif
    }

    /// `"name":` for any key, escaped as JSON strings are.
    @inlinable package mutating func key(_ name: String) {
        separate()
        JSONWriter.writeString(name, into: &bytes)
        bytes.append(UInt8(ascii: ":"))
        separated = false
        #if DEBUG
            checkOrder(Array(name.utf8))
        #endif
    }

    /// `"name":value`: a key and its integer.
    @inlinable package mutating func member(_ name: StaticString, _ value: Int) {
        key(name)
        int(value)
    }

    /// `"name":"value"`: a key and its string.
    @inlinable package mutating func member(_ name: StaticString, _ value: String) {
        key(name)
        string(value)
    }

    /// `"name":true|false`: a key and its boolean.
    @inlinable package mutating func member(_ name: StaticString, _ value: Bool) {
        key(name)
        bool(value)
    }

    /// `"name":value`: a key and any JSON value.
    @inlinable package mutating func member(_ name: StaticString, _ value: JSONValue) {
        key(name)
        self.value(value)
    }

    #if DEBUG
        @usableFromInline mutating func checkOrder(_ key: [UInt8]) {
            guard let last = lastKeys.indices.last else { return }
            if let previous = lastKeys[last] {
                assert(previous.lexicographicallyPrecedes(key), "JSONWriter: keys out of code point order")
            }
            lastKeys[last] = key
        }
    #endif

    // MARK: Values

    /// `null`.
    @inlinable package mutating func null() {
        separate()
        bytes.append(contentsOf: [0x6E, 0x75, 0x6C, 0x6C])
        separated = true
    }

    /// `true` or `false`.
    @inlinable package mutating func bool(_ value: Bool) {
        separate()
        if value {
            bytes.append(contentsOf: [0x74, 0x72, 0x75, 0x65])
        } else {
            bytes.append(contentsOf: [0x66, 0x61, 0x6C, 0x73, 0x65])
        }
        separated = true
    }

    /// The integer in decimal, as `JSONValue(value)` writes it.
    @inlinable package mutating func int(_ value: Int) {
        separate()
        JSONWriter.writeInt(value, into: &bytes)
        separated = true
    }

    /// The string, quoted and minimally escaped.
    @inlinable package mutating func string(_ value: String) {
        separate()
        JSONWriter.writeString(value, into: &bytes)
        separated = true
    }

    /// The value's canonical JSON text.
    @inlinable package mutating func value(_ value: JSONValue) {
        separate()
        JSONWriter.write(value, into: &bytes)
        separated = true
    }

    /// Appends `json`, one canonical JSON value written before (a stored content, stored stages),
    /// verbatim as the next value.
    /// - Precondition: `json` is one canonical JSON value; it is not checked.
    @inlinable package mutating func fragment(_ json: some Collection<UInt8>) {
        separate()
        bytes.append(contentsOf: json)
        separated = true
    }

    // MARK: Text

    /// Appends the canonical JSON text of `value`.
    @usableFromInline static func write(_ value: JSONValue, into output: inout [UInt8]) {
        switch value {
        case .null:
            output.append(contentsOf: [0x6E, 0x75, 0x6C, 0x6C])  // null
        case .bool(true):
            output.append(contentsOf: [0x74, 0x72, 0x75, 0x65])  // true
        case .bool(false):
            output.append(contentsOf: [0x66, 0x61, 0x6C, 0x73, 0x65])  // false
        case .number(let number):
            output.append(contentsOf: number.literal.utf8)
        case .string(let string):
            writeString(string, into: &output)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            var first = true
            for element in elements {
                if !first { output.append(UInt8(ascii: ",")) }
                first = false
                write(element, into: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let object):
            output.append(UInt8(ascii: "{"))
            var first = true
            for member in object.members {
                if !first { output.append(UInt8(ascii: ",")) }
                first = false
                writeString(member.key, into: &output)
                output.append(UInt8(ascii: ":"))
                write(member.value, into: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    /// Appends `value` in decimal.
    @usableFromInline static func writeInt(_ value: Int, into output: inout [UInt8]) {
        if value == 0 {
            output.append(UInt8(ascii: "0"))
            return
        }
        // 20 bytes hold the 19 digits of Int.min's magnitude.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var magnitude = value.magnitude
            var start = 20
            while magnitude > 0 {
                start -= 1
                digits[start] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            }
            if value < 0 { output.append(UInt8(ascii: "-")) }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start..<20]))
        }
    }

    /// Appends `string` as a quoted, minimally escaped JSON string.
    @usableFromInline package static func writeString(_ string: String, into output: inout [UInt8]) {
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

extension JSONWriter {
    /// The bytes of one object whose members `body` writes.
    ///
    /// ```swift
    /// let bytes = JSONWriter.object { w in w.key("schemaVersion"); w.int(1) }   // {"schemaVersion":1}
    /// ```
    /// - Complexity: O(size of what `body` writes).
    @inlinable package static func object(capacity: Int = 0, _ body: (inout JSONWriter) -> Void) -> [UInt8] {
        var writer = JSONWriter(capacity: capacity)
        writer.object(body)
        return writer.bytes
    }

    /// `"schemaVersion":1`, the member every document has (`Docs/Formats.md`).
    @inlinable package mutating func schemaVersion() {
        member("schemaVersion", 1)
    }
}
