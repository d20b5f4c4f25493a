/// A strict RFC 8259 JSON parser that keeps numbers exact and never overflows the stack.
///
/// - The grammar is followed exactly: no comments, no trailing commas, no single quotes, no `NaN`,
///   no leading zeros, `+1`, `.5` or `1.`; nothing but whitespace may follow the value.
/// - Input must be well-formed UTF-8 (RFC 3629: no overlong forms, no encoded surrogates, nothing beyond
///   U+10FFFF); escapes (`\uXXXX` including `\u0000`, surrogate pairs) must be valid, and lone
///   surrogates are rejected.
/// - A leading UTF-8 byte order mark (EF BB BF) is accepted and skipped, as RFC 8259 §8.1 allows.
/// - A key that occurs twice in one object is an error.
/// - Nesting of arrays and objects is limited (`maxDepth`, `defaultMaxDepth` = 516 by default). The parser is iterative,
///   so even a limit far larger than that fails cleanly rather than crashing.
///
/// ```swift
/// let value = try JSONParser().parse(Array(#"{"a":[1,2]}"#.utf8))
/// let deep = JSONParser(maxDepth: 10_000)
/// ```
public struct JSONParser: Sendable {
    /// The deepest nesting of an item's content that a store accepts (`[[1]]` has depth 2).
    ///
    /// This is the one depth rule of the formats: a commit whose contents nest deeper is refused
    /// (`invalidSnapshot`), and every document that carries contents (snapshot, stages, journal,
    /// diff, events) nests them at most `documentEnvelopeDepth` levels down, so whatever a store
    /// accepted parses again within `defaultMaxDepth`.
    public static let maxContentDepth = 500

    /// How many levels the documents (`Docs/Formats.md`) may add around a content: the deepest, an
    /// element of a section inserted by a stage of a `log --json` document, sits 9 levels down.
    public static let documentEnvelopeDepth = 16

    /// The nesting limit used when none is given: room for the deepest content a store accepts
    /// inside the deepest document that carries it.
    public static let defaultMaxDepth = maxContentDepth + documentEnvelopeDepth

    /// The deepest nesting of arrays and objects accepted; `[[1]]` has depth 2, a scalar depth 0.
    public var maxDepth: Int

    /// Creates a parser.
    /// - Parameter maxDepth: the deepest nesting of arrays and objects accepted (at least 0).
    public init(maxDepth: Int = JSONParser.defaultMaxDepth) {
        precondition(maxDepth >= 0, "JSONParser: maxDepth must not be negative")
        self.maxDepth = maxDepth
    }

    /// Parses one JSON document from UTF-8 bytes.
    ///
    /// Contiguous collections (`[UInt8]`, `ArraySlice<UInt8>`, native `String.UTF8View`, …) are read in
    /// place; other collections are copied into an array first.
    /// - Throws: `JSONParseError` with the reason, line, column and byte offset of the first problem.
    /// - Complexity: O(n) in the size of the input, plus O(k log k) for each object of k keys that is
    ///   not already in key order.
    public func parse(_ bytes: some Collection<UInt8>) throws(JSONParseError) -> JSONValue {
        let result: Result<JSONValue, JSONParseError>? = bytes.withContiguousStorageIfAvailable { buffer in
            Result { () throws(JSONParseError) -> JSONValue in try parse(buffer: buffer) }
        }
        if let result { return try result.get() }
        let copy = Array(bytes)
        let copied = copy.withUnsafeBufferPointer { buffer in
            Result { () throws(JSONParseError) -> JSONValue in try parse(buffer: buffer) }
        }
        return try copied.get()
    }

    /// Parses one JSON document from a string (its UTF-8 form).
    /// - Throws: `JSONParseError` with the reason, line, column and byte offset of the first problem.
    /// - Complexity: O(n) in the size of the input.
    public func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        try parse(text.utf8)
    }

    private func parse(buffer: UnsafeBufferPointer<UInt8>) throws(JSONParseError) -> JSONValue {
        var core = _Core(input: buffer, maxDepth: maxDepth)
        return try core.parseDocument()
    }
}

extension JSONValue {
    /// Parses one JSON document from UTF-8 bytes with `JSONParser`.
    ///
    /// ```swift
    /// let value = try JSONValue(parsing: Array("[1, 2.50, \"x\"]".utf8))
    /// ```
    /// - Parameter maxDepth: the deepest nesting of arrays and objects accepted.
    /// - Throws: `JSONParseError` with the reason, line, column and byte offset of the first problem.
    /// - Complexity: O(n) in the size of the input.
    public init(parsing bytes: some Collection<UInt8>, maxDepth: Int = JSONParser.defaultMaxDepth)
        throws(JSONParseError)
    {
        self = try JSONParser(maxDepth: maxDepth).parse(bytes)
    }

    /// Parses one JSON document from a string with `JSONParser`.
    ///
    /// ```swift
    /// let value = try JSONValue(parsing: #"{"id":"m1","content":null}"#)
    /// ```
    /// - Parameter maxDepth: the deepest nesting of arrays and objects accepted.
    /// - Throws: `JSONParseError` with the reason, line, column and byte offset of the first problem.
    /// - Complexity: O(n) in the size of the input.
    public init(parsing text: String, maxDepth: Int = JSONParser.defaultMaxDepth) throws(JSONParseError) {
        self = try JSONParser(maxDepth: maxDepth).parse(text.utf8)
    }
}

// MARK: - The parsing machine

private enum ASCII {
    static let quote = UInt8(ascii: "\"")
    static let backslash = UInt8(ascii: "\\")
    static let slash = UInt8(ascii: "/")
    static let comma = UInt8(ascii: ",")
    static let colon = UInt8(ascii: ":")
    static let openBrace = UInt8(ascii: "{")
    static let closeBrace = UInt8(ascii: "}")
    static let openBracket = UInt8(ascii: "[")
    static let closeBracket = UInt8(ascii: "]")
    static let minus = UInt8(ascii: "-")
    static let plus = UInt8(ascii: "+")
    static let dot = UInt8(ascii: ".")
    static let zero = UInt8(ascii: "0")
    static let lowerE = UInt8(ascii: "e")
    static let upperE = UInt8(ascii: "E")
    static let space = UInt8(ascii: " ")
    static let tab = UInt8(ascii: "\t")
    static let lineFeed = UInt8(ascii: "\n")
    static let carriageReturn = UInt8(ascii: "\r")
}

/// One open array or object while parsing.
private struct _Frame {
    var isObject: Bool
    /// Where the container's values start on the value stack.
    var valueStart: Int
    /// Where the object's keys start on the key stack.
    var keyStart: Int
}

/// The parser proper: a loop over a contiguous buffer with explicit stacks instead of recursion.
private struct _Core {
    let input: UnsafeBufferPointer<UInt8>
    let end: Int
    let maxDepth: Int
    var pos = 0
    var frames: [_Frame] = []
    var values = _Stack<JSONValue>()
    var keys = _Stack<String>()
    var keyOffsets: [Int] = []
    var scratch: [UInt8] = []

    init(input: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.input = input
        self.end = input.count
        self.maxDepth = maxDepth
    }

    var hasBOM: Bool {
        end >= 3 && input[0] == 0xEF && input[1] == 0xBB && input[2] == 0xBF
    }

    mutating func parseDocument() throws(JSONParseError) -> JSONValue {
        defer {
            values.release()
            keys.release()
        }
        if hasBOM { pos = 3 }
        skipWhitespace()
        guard pos < end else { throw fail(.emptyInput, at: pos) }
        let value = try parseValue()
        skipWhitespace()
        guard pos == end else { throw fail(.trailingCharacters, at: pos) }
        return value
    }

    // MARK: Errors

    /// An error at `offset`, with its line and column.
    func fail(_ reason: JSONParseError.Reason, at offset: Int) -> JSONParseError {
        var line = 1
        var lineStart = 0
        var i = 0
        while i < offset && i < end {
            let b = input[i]
            if b == ASCII.lineFeed {
                line += 1
                lineStart = i + 1
            } else if b == ASCII.carriageReturn && !(i + 1 < end && input[i + 1] == ASCII.lineFeed) {
                line += 1
                lineStart = i + 1
            }
            i += 1
        }
        var j = lineStart == 0 && hasBOM && offset >= 3 ? 3 : lineStart
        var column = 1
        while j < offset && j < end {
            if input[j] & 0xC0 != 0x80 { column += 1 }
            j += 1
        }
        return JSONParseError(reason, line: line, column: column, offset: offset)
    }

    /// The error for a missing token: end of input, or an unexpected byte.
    func expected(_ what: String) -> JSONParseError {
        pos < end ? fail(.unexpected(expected: what), at: pos) : fail(.unexpectedEndOfInput(expected: what), at: pos)
    }

    static func hex(_ value: UInt32, digits: Int) -> String {
        let text = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }

    // MARK: Structure

    @inline(__always)
    mutating func skipWhitespace() {
        while pos < end {
            let b = input[pos]
            guard b == ASCII.space || b == ASCII.lineFeed || b == ASCII.carriageReturn || b == ASCII.tab else { return }
            pos += 1
        }
    }

    /// Parses the value at `pos` (whitespace already skipped), with everything nested in it.
    mutating func parseValue() throws(JSONParseError) -> JSONValue {
        nextValue: while true {
            guard pos < end else { throw fail(.unexpectedEndOfInput(expected: "a JSON value"), at: pos) }
            var value: JSONValue
            let b = input[pos]
            switch b {
            case ASCII.openBrace:
                guard frames.count < maxDepth else { throw fail(.tooDeep(limit: maxDepth), at: pos) }
                pos += 1
                skipWhitespace()
                if pos < end && input[pos] == ASCII.closeBrace {
                    pos += 1
                    value = .object(JSONObject())
                } else {
                    frames.append(_Frame(isObject: true, valueStart: values.count, keyStart: keys.count))
                    try parseKeyAndColon()
                    continue nextValue
                }
            case ASCII.openBracket:
                guard frames.count < maxDepth else { throw fail(.tooDeep(limit: maxDepth), at: pos) }
                pos += 1
                skipWhitespace()
                if pos < end && input[pos] == ASCII.closeBracket {
                    pos += 1
                    value = .array([])
                } else {
                    frames.append(_Frame(isObject: false, valueStart: values.count, keyStart: keys.count))
                    continue nextValue
                }
            case ASCII.quote:
                value = .string(try parseString())
            case ASCII.minus, ASCII.zero...UInt8(ascii: "9"):
                value = .number(try parseNumber())
            case UInt8(ascii: "t"):
                try expectWord("true")
                value = .bool(true)
            case UInt8(ascii: "f"):
                try expectWord("false")
                value = .bool(false)
            case UInt8(ascii: "n"):
                try expectWord("null")
                value = .null
            default:
                // Bytes that are not UTF-8 at all are reported as such, before "unexpected".
                if input[pos] >= 0x80 {
                    let start = pos
                    try skipMultibyte()
                    pos = start
                }
                throw fail(.unexpected(expected: "a JSON value"), at: pos)
            }

            // A value is complete: attach it to the open container, closing containers as they end.
            while let frame = frames.last {
                skipWhitespace()
                values.append(value)
                if frame.isObject {
                    guard pos < end else { throw expected("',' or '}' in object") }
                    if input[pos] == ASCII.comma {
                        pos += 1
                        skipWhitespace()
                        try parseKeyAndColon()
                        continue nextValue
                    }
                    guard input[pos] == ASCII.closeBrace else { throw expected("',' or '}' in object") }
                    pos += 1
                    value = .object(try closeObject(frame))
                } else {
                    guard pos < end else { throw expected("',' or ']' in array") }
                    if input[pos] == ASCII.comma {
                        pos += 1
                        skipWhitespace()
                        continue nextValue
                    }
                    guard input[pos] == ASCII.closeBracket else { throw expected("',' or ']' in array") }
                    pos += 1
                    value = .array(values.popArray(from: frame.valueStart))
                }
                frames.removeLast()
            }
            return value
        }
    }

    /// Parses `"key" :` at `pos` and the whitespace after it.
    mutating func parseKeyAndColon() throws(JSONParseError) {
        guard pos < end, input[pos] == ASCII.quote else { throw expected("a string key in object") }
        keyOffsets.append(pos)
        keys.append(try parseString())
        skipWhitespace()
        guard pos < end, input[pos] == ASCII.colon else { throw expected("':' after object key") }
        pos += 1
        skipWhitespace()
    }

    /// Builds the object of the top frame from the stacks, checking for duplicate keys.
    mutating func closeObject(_ frame: _Frame) throws(JSONParseError) -> JSONObject {
        let count = keys.count - frame.keyStart
        var sorted = true
        var k = 1
        while k < count {
            let order = _UTF8Bytes.compare(keys[frame.keyStart + k - 1], keys[frame.keyStart + k])
            if order == 0 { throw fail(.duplicateKey(keys[frame.keyStart + k]), at: keyOffsets[frame.keyStart + k]) }
            if order > 0 {
                sorted = false
                break
            }
            k += 1
        }
        var members = [_JSONMember](unsafeUninitializedCapacity: count) { buffer, initialized in
            for k in 0..<count {
                (buffer.baseAddress! + k).initialize(
                    to: _JSONMember(keys.take(frame.keyStart + k), values.take(frame.valueStart + k)))
            }
            initialized = count
        }
        keys.drop(to: frame.keyStart)
        values.drop(to: frame.valueStart)
        if !sorted {
            let order = members.indices.sorted { a, b in
                let c = _UTF8Bytes.compare(members[a].key, members[b].key)
                return c != 0 ? c < 0 : a < b
            }
            var duplicate: Int?
            for i in 1..<order.count where _UTF8Bytes.equal(members[order[i - 1]].key, members[order[i]].key) {
                duplicate = min(duplicate ?? order[i], order[i])
            }
            if let duplicate {
                throw fail(.duplicateKey(members[duplicate].key), at: keyOffsets[frame.keyStart + duplicate])
            }
            members = order.map { members[$0] }
        }
        keyOffsets.removeLast(count)
        return JSONObject(sortedUniqueMembers: members)
    }

    /// Consumes `word` (`true`, `false` or `null`) at `pos`.
    mutating func expectWord(_ word: StaticString) throws(JSONParseError) {
        let count = word.utf8CodeUnitCount
        let start = word.utf8Start
        var k = 0
        while k < count {
            guard pos + k < end, input[pos + k] == start[k] else {
                throw fail(.unexpected(expected: "'\(word)'"), at: pos)
            }
            k += 1
        }
        pos += count
    }

    // MARK: Numbers

    mutating func parseNumber() throws(JSONParseError) -> JSONNumber {
        let start = pos
        @inline(__always) func isDigit(_ i: Int) -> Bool { i < end && input[i] &- ASCII.zero < 10 }
        if input[pos] == ASCII.minus { pos += 1 }
        guard isDigit(pos) else { throw fail(.invalidNumber("expected a digit after '-'"), at: pos) }
        if input[pos] == ASCII.zero {
            pos += 1
            if isDigit(pos) { throw fail(.invalidNumber("leading zeros are not allowed"), at: start) }
        } else {
            while isDigit(pos) { pos += 1 }
        }
        if pos < end && input[pos] == ASCII.dot {
            pos += 1
            guard isDigit(pos) else { throw fail(.invalidNumber("expected a digit after '.'"), at: pos) }
            while isDigit(pos) { pos += 1 }
        }
        if pos < end && (input[pos] == ASCII.lowerE || input[pos] == ASCII.upperE) {
            pos += 1
            if pos < end && (input[pos] == ASCII.plus || input[pos] == ASCII.minus) { pos += 1 }
            guard isDigit(pos) else { throw fail(.invalidNumber("expected a digit in the exponent"), at: pos) }
            while isDigit(pos) { pos += 1 }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: input[start..<pos]), as: UTF8.self)
        return JSONNumber(uncheckedLiteral: text)
    }

    // MARK: Strings

    /// Parses the string whose opening quote is at `pos`.
    mutating func parseString() throws(JSONParseError) -> String {
        pos += 1
        let start = pos
        while pos < end {
            let b = input[pos]
            if b == ASCII.quote {
                let text = String(decoding: UnsafeBufferPointer(rebasing: input[start..<pos]), as: UTF8.self)
                pos += 1
                return text
            }
            if b == ASCII.backslash { return try parseEscapedString(from: start) }
            if b < 0x20 { throw controlCharacter(b) }
            if b < 0x80 {
                pos += 1
            } else {
                try skipMultibyte()
            }
        }
        throw fail(.unexpectedEndOfInput(expected: "'\"' to end the string"), at: pos)
    }

    func controlCharacter(_ b: UInt8) -> JSONParseError {
        fail(.invalidString("unescaped control character U+\(_Core.hex(UInt32(b), digits: 4))"), at: pos)
    }

    /// The slow path of `parseString`: the string holds escapes; `pos` is at the first backslash.
    mutating func parseEscapedString(from start: Int) throws(JSONParseError) -> String {
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: UnsafeBufferPointer(rebasing: input[start..<pos]))
        while pos < end {
            let b = input[pos]
            if b == ASCII.quote {
                pos += 1
                return String(decoding: scratch, as: UTF8.self)
            } else if b == ASCII.backslash {
                try parseEscape()
            } else if b < 0x20 {
                throw controlCharacter(b)
            } else if b < 0x80 {
                scratch.append(b)
                pos += 1
            } else {
                let first = pos
                try skipMultibyte()
                scratch.append(contentsOf: UnsafeBufferPointer(rebasing: input[first..<pos]))
            }
        }
        throw fail(.unexpectedEndOfInput(expected: "'\"' to end the string"), at: pos)
    }

    /// Decodes the escape at `pos` (a backslash) into `scratch`.
    mutating func parseEscape() throws(JSONParseError) {
        let escapeStart = pos
        pos += 1
        guard pos < end else { throw fail(.unexpectedEndOfInput(expected: "an escape after '\\'"), at: pos) }
        let e = input[pos]
        pos += 1
        switch e {
        case ASCII.quote: scratch.append(ASCII.quote)
        case ASCII.backslash: scratch.append(ASCII.backslash)
        case ASCII.slash: scratch.append(ASCII.slash)
        case UInt8(ascii: "b"): scratch.append(0x08)
        case UInt8(ascii: "f"): scratch.append(0x0C)
        case UInt8(ascii: "n"): scratch.append(0x0A)
        case UInt8(ascii: "r"): scratch.append(0x0D)
        case UInt8(ascii: "t"): scratch.append(0x09)
        case UInt8(ascii: "u"):
            let unit = try hex4(escapeStart)
            var scalar = unit
            if (0xD800...0xDBFF).contains(unit) {
                guard pos + 1 < end, input[pos] == ASCII.backslash, input[pos + 1] == UInt8(ascii: "u") else {
                    throw loneSurrogate(unit, at: escapeStart)
                }
                let lowStart = pos
                pos += 2
                let low = try hex4(lowStart)
                guard (0xDC00...0xDFFF).contains(low) else { throw loneSurrogate(unit, at: escapeStart) }
                scalar = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(unit) {
                throw loneSurrogate(unit, at: escapeStart)
            }
            appendUTF8(scalar)
        default:
            let shown = e >= 0x20 && e < 0x7F ? "'\\\(Character(Unicode.Scalar(e)))'" : "byte 0x\(_Core.hex(UInt32(e), digits: 2))"
            throw fail(.invalidString("invalid escape \(shown)"), at: escapeStart)
        }
    }

    func loneSurrogate(_ unit: UInt32, at offset: Int) -> JSONParseError {
        fail(.invalidString("lone surrogate \\u\(_Core.hex(unit, digits: 4))"), at: offset)
    }

    /// Reads four hex digits at `pos`.
    mutating func hex4(_ escapeStart: Int) throws(JSONParseError) -> UInt32 {
        var unit: UInt32 = 0
        for _ in 0..<4 {
            guard pos < end else {
                throw fail(.invalidString("expected four hex digits after '\\u'"), at: escapeStart)
            }
            let c = input[pos]
            let digit: UInt8
            switch c {
            case ASCII.zero...UInt8(ascii: "9"): digit = c - ASCII.zero
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = c - UInt8(ascii: "A") + 10
            default: throw fail(.invalidString("expected four hex digits after '\\u'"), at: escapeStart)
            }
            unit = unit << 4 | UInt32(digit)
            pos += 1
        }
        return unit
    }

    mutating func appendUTF8(_ scalar: UInt32) {
        switch scalar {
        case 0..<0x80:
            scratch.append(UInt8(scalar))
        case 0x80..<0x800:
            scratch.append(UInt8(0xC0 | scalar >> 6))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        case 0x800..<0x10000:
            scratch.append(UInt8(0xE0 | scalar >> 12))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        default:
            scratch.append(UInt8(0xF0 | scalar >> 18))
            scratch.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        }
    }

    /// Checks the multi-byte UTF-8 sequence at `pos` (RFC 3629 table) and moves past it.
    @inline(__always)
    mutating func skipMultibyte() throws(JSONParseError) {
        let lead = input[pos]
        let length: Int
        var low: UInt8 = 0x80
        var high: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; low = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; high = 0x9F
        case 0xF0: length = 4; low = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; high = 0x8F
        default: throw fail(.invalidUTF8, at: pos)
        }
        guard pos + length <= end else { throw fail(.invalidUTF8, at: pos) }
        let second = input[pos + 1]
        guard second >= low && second <= high else { throw fail(.invalidUTF8, at: pos) }
        var k = 2
        while k < length {
            guard input[pos + k] & 0xC0 == 0x80 else { throw fail(.invalidUTF8, at: pos) }
            k += 1
        }
        pos += length
    }
}

/// A stack of values in manually managed memory, so that popping a run of values into an array moves
/// them instead of copying (no reference counting per value). `release()` must be called once.
private struct _Stack<Value> {
    private var base: UnsafeMutablePointer<Value>
    private var capacity: Int
    private(set) var count = 0

    init() {
        capacity = 64
        base = .allocate(capacity: capacity)
    }

    /// Pushes a value.
    @inline(__always)
    mutating func append(_ value: consuming Value) {
        if count == capacity { grow() }
        (base + count).initialize(to: value)
        count += 1
    }

    private mutating func grow() {
        let bigger = UnsafeMutablePointer<Value>.allocate(capacity: capacity * 2)
        bigger.moveInitialize(from: base, count: count)
        base.deallocate()
        base = bigger
        capacity *= 2
    }

    /// A copy of the value at `index`.
    subscript(index: Int) -> Value {
        base[index]
    }

    /// Moves the value at `index` out; the slot must then be dropped with `drop(to:)` without being read.
    @inline(__always)
    func take(_ index: Int) -> Value {
        (base + index).move()
    }

    /// Forgets the slots from `start` on, whose values were all taken.
    mutating func drop(to start: Int) {
        count = start
    }

    /// Moves the values from `start` on into an array and removes them.
    mutating func popArray(from start: Int) -> [Value] {
        let n = count - start
        let source = base + start
        let result = [Value](unsafeUninitializedCapacity: n) { buffer, initialized in
            buffer.baseAddress!.moveInitialize(from: source, count: n)
            initialized = n
        }
        count = start
        return result
    }

    /// Destroys the remaining values and frees the memory.
    mutating func release() {
        base.deinitialize(count: count)
        base.deallocate()
        count = 0
        capacity = 0
    }
}
