import ListJSON
import ListDiffTestSupport
import Testing

/// The parser against the RFC 8259 grammar: what it accepts (with the canonical form it yields) and
/// what it rejects (with the reason and place).
@Suite(.heavyWork) struct JSONParserTests {
    /// Parses `text` and returns the error, or records an issue when parsing succeeds.
    private func failure(_ bytes: [UInt8], maxDepth: Int = JSONParser.defaultMaxDepth) -> JSONParseError? {
        do {
            let value = try JSONValue(parsing: bytes, maxDepth: maxDepth)
            Issue.record("accepted \(bytes.count) bytes as \(value)")
            return nil
        } catch {
            return error
        }
    }

    private func failure(_ text: String) -> JSONParseError? {
        failure(Array(text.utf8))
    }

    @Test(arguments: [
        // Numbers keep their literal text.
        ("0", "0"), ("-0", "-0"), ("1", "1"), ("-1", "-1"), ("1.5", "1.5"), ("1e5", "1e5"), ("1E+5", "1E+5"),
        ("1e-5", "1e-5"), ("-0.0e-0", "-0.0e-0"), ("10.010", "10.010"), ("1E400", "1E400"),
        ("123456789012345678901234567890", "123456789012345678901234567890"),
        ("0.1000000000000000055511151231257827", "0.1000000000000000055511151231257827"),
        ("18446744073709551615", "18446744073709551615"), ("-9223372036854775808", "-9223372036854775808"),
        // Literals and whitespace.
        ("true", "true"), ("false", "false"), ("null", "null"), (" \t\r\n null \t\r\n", "null"),
        ("[ 1 , 2 ,\n3 ]", "[1,2,3]"), ("[]", "[]"), ("{}", "{}"), ("[[],{}]", "[[],{}]"), ("[ ]", "[]"), ("{ }", "{}"),
        // Strings and escapes.
        (#""""#, #""""#), (#""a\/b""#, #""a/b""#), (#""\"\\""#, #""\"\\""#),
        (#""\b\f\n\r\t""#, #""\b\f\n\r\t""#), (#""\u0000""#, #""\u0000""#), (#""\u001F\u0001""#, #""\u001f\u0001""#),
        (#""\u007f""#, "\"\u{7F}\""), (#""\u00e9\u00E9""#, "\"éé\""), (#""\u2028""#, "\"\u{2028}\""),
        (#""\ud83d\ude00""#, "\"😀\""), (#""\uD834\uDD1E""#, "\"\u{1D11E}\""), ("\"日本語 🙂\"", "\"日本語 🙂\""),
        (#""\uFFFF\uFFFE""#, "\"\u{FFFF}\u{FFFE}\""),
        // Objects: keys sorted by code point, whatever the input order.
        (#"{"b":1,"a":2}"#, #"{"a":2,"b":1}"#), (#"{ "a" : [ { "y" : null , "x" : true } ] }"#, #"{"a":[{"x":true,"y":null}]}"#),
        ("{\"é\":1,\"e\u{301}\":2}", "{\"e\u{301}\":2,\"é\":1}"),
    ])
    func accepts(_ input: String, _ canonical: String) throws {
        let value = try JSONValue(parsing: input)
        #expect(value.serialized() == canonical)
        #expect(try JSONValue(parsing: canonical) == value)
    }

    @Test(arguments: [
        // Empty input.
        ("", JSONParseError.Reason.emptyInput), (" \n\t ", .emptyInput),
        // Numbers.
        ("01", .invalidNumber("leading zeros are not allowed")), ("-01", .invalidNumber("leading zeros are not allowed")),
        ("00", .invalidNumber("leading zeros are not allowed")), ("+1", .unexpected(expected: "a JSON value")),
        (".5", .unexpected(expected: "a JSON value")), ("1.", .invalidNumber("expected a digit after '.'")),
        ("1.e5", .invalidNumber("expected a digit after '.'")), ("1e", .invalidNumber("expected a digit in the exponent")),
        ("1e+", .invalidNumber("expected a digit in the exponent")), ("-", .invalidNumber("expected a digit after '-'")),
        ("--1", .invalidNumber("expected a digit after '-'")), ("-Infinity", .invalidNumber("expected a digit after '-'")),
        ("NaN", .unexpected(expected: "a JSON value")), ("Infinity", .unexpected(expected: "a JSON value")),
        ("0x10", .trailingCharacters), ("1_000", .trailingCharacters), ("[1.5.2]", .unexpected(expected: "',' or ']' in array")),
        // Literals.
        ("tru", .unexpected(expected: "'true'")), ("True", .unexpected(expected: "a JSON value")),
        ("nul", .unexpected(expected: "'null'")), ("fals", .unexpected(expected: "'false'")), ("nulll", .trailingCharacters),
        // Structure.
        ("[1,]", .unexpected(expected: "a JSON value")), (#"{"a":1,}"#, .unexpected(expected: "a string key in object")),
        ("[1 2]", .unexpected(expected: "',' or ']' in array")), (#"{"a" 1}"#, .unexpected(expected: "':' after object key")),
        (#"{"a":1 "b":2}"#, .unexpected(expected: "',' or '}' in object")), ("{a:1}", .unexpected(expected: "a string key in object")),
        ("{'a':1}", .unexpected(expected: "a string key in object")), ("[1", .unexpectedEndOfInput(expected: "',' or ']' in array")),
        (#"{"a":1"#, .unexpectedEndOfInput(expected: "',' or '}' in object")), ("[", .unexpectedEndOfInput(expected: "a JSON value")),
        (#"{"a":"#, .unexpectedEndOfInput(expected: "a JSON value")), (#"{"a""#, .unexpectedEndOfInput(expected: "':' after object key")),
        ("{", .unexpectedEndOfInput(expected: "a string key in object")), ("]", .unexpected(expected: "a JSON value")),
        ("[,1]", .unexpected(expected: "a JSON value")), ("[1,,2]", .unexpected(expected: "a JSON value")),
        ("/* c */ 1", .unexpected(expected: "a JSON value")), ("[1] // c", .trailingCharacters),
        // Trailing garbage.
        ("1 2", .trailingCharacters), ("{} x", .trailingCharacters), ("[]]", .trailingCharacters), ("\"a\"\"b\"", .trailingCharacters),
        ("null\u{0}", .trailingCharacters),
        // Strings.
        ("\"abc", .unexpectedEndOfInput(expected: "'\"' to end the string")),
        (#""a\"#, .unexpectedEndOfInput(expected: "an escape after '\\'")),
        (#""\x""#, .invalidString("invalid escape '\\x'")), (#""\'""#, .invalidString("invalid escape '\\''")),
        (#""\U0041""#, .invalidString("invalid escape '\\U'")),
        (#""\u12""#, .invalidString("expected four hex digits after '\\u'")),
        (#""\u12G4""#, .invalidString("expected four hex digits after '\\u'")),
        (#""\uD800""#, .invalidString("lone surrogate \\uD800")), (#""\uDC00""#, .invalidString("lone surrogate \\uDC00")),
        (#""\uD800\u0041""#, .invalidString("lone surrogate \\uD800")), (#""\uD800x""#, .invalidString("lone surrogate \\uD800")),
        (#""\uDBFF\uDBFF""#, .invalidString("lone surrogate \\uDBFF")), (#""\uDE00\uD83D""#, .invalidString("lone surrogate \\uDE00")),
        ("\"a\tb\"", .invalidString("unescaped control character U+0009")),
        ("\"\n\"", .invalidString("unescaped control character U+000A")),
        ("\"\u{0}\"", .invalidString("unescaped control character U+0000")),
        ("\"\u{1F}\"", .invalidString("unescaped control character U+001F")),
        // Duplicate keys, in order and out of order, also when written with an escape.
        (#"{"a":1,"a":2}"#, .duplicateKey("a")), (#"{"b":1,"a":2,"b":3}"#, .duplicateKey("b")),
        (#"{"a":1,"\u0061":2}"#, .duplicateKey("a")), (#"{"x":{"k":1,"k":1}}"#, .duplicateKey("k")),
    ] as [(String, JSONParseError.Reason)])
    func rejects(_ input: String, _ reason: JSONParseError.Reason) {
        #expect(failure(input)?.reason == reason, "\(input.debugDescription)")
    }

    @Test(arguments: [
        [0x22, 0xC0, 0xAF, 0x22],  // overlong "/"
        [0x22, 0xC1, 0xBF, 0x22],  // overlong
        [0x22, 0xE0, 0x80, 0xAF, 0x22],  // overlong 3-byte
        [0x22, 0xF0, 0x80, 0x80, 0xAF, 0x22],  // overlong 4-byte
        [0x22, 0xED, 0xA0, 0x80, 0x22],  // encoded surrogate U+D800
        [0x22, 0xED, 0xBF, 0xBF, 0x22],  // encoded surrogate U+DFFF
        [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22],  // U+110000
        [0x22, 0xF5, 0x80, 0x80, 0x80, 0x22],  // lead byte beyond U+10FFFF
        [0x22, 0xFF, 0x22], [0x22, 0xFE, 0x22],  // never valid
        [0x22, 0x80, 0x22], [0x22, 0xBF, 0x22],  // lone continuation bytes
        [0x22, 0xC3, 0x22],  // truncated 2-byte
        [0x22, 0xE2, 0x82, 0x22],  // truncated 3-byte
        [0x22, 0xF0, 0x9F, 0x98, 0x22],  // truncated 4-byte
        [0x22, 0xC3],  // truncated at end of input
        [0x22, 0xC3, 0x28, 0x22],  // bad continuation
        [0x22, 0xE2, 0x28, 0xA1, 0x22],  // bad second byte
        [0x22, 0xE2, 0x82, 0x28, 0x22],  // bad third byte
        [0x22, 0x5C, 0x6E, 0xC0, 0x80, 0x22],  // invalid after an escape (slow path)
        [0x7B, 0x22, 0xC0, 0x80, 0x22, 0x3A, 0x31, 0x7D],  // invalid in a key
    ] as [[UInt8]])
    func rejectsInvalidUTF8(_ bytes: [UInt8]) {
        #expect(failure(bytes)?.reason == .invalidUTF8, "\(bytes)")
    }

    @Test func rejectsNonASCIIOutsideStrings() {
        #expect(failure(Array("é".utf8))?.reason == .unexpected(expected: "a JSON value"))
        #expect(failure(Array("[1]\u{A0}".utf8))?.reason == .trailingCharacters)
    }

    @Test func acceptsValidUTF8AtTheEdges() throws {
        // U+0080, U+07FF, U+0800, U+D7FF, U+E000, U+FFFF, U+10000, U+10FFFF.
        let scalars: [UInt32] = [0x80, 0x7FF, 0x800, 0xD7FF, 0xE000, 0xFFFF, 0x10000, 0x10FFFF]
        for scalar in scalars {
            let text = String(Unicode.Scalar(scalar)!)
            let value = try JSONValue(parsing: Array("\"\(text)\"".utf8))
            #expect(value == .string(text))
            #expect(value.serializedBytes() == Array("\"\(text)\"".utf8))
        }
    }

    @Test func byteOrderMarkIsSkippedAtTheStartOnly() throws {
        #expect(try JSONValue(parsing: [0xEF, 0xBB, 0xBF] + Array("[1]".utf8)) == [1])
        #expect(failure([0xEF, 0xBB, 0xBF])?.reason == .emptyInput)
        #expect(failure(Array(" ".utf8) + [0xEF, 0xBB, 0xBF] + Array("1".utf8))?.reason == .unexpected(expected: "a JSON value"))
        let error = failure([0xEF, 0xBB, 0xBF] + Array("[1 x]".utf8))
        #expect(error?.column == 4 && error?.offset == 6)
    }

    @Test func absurdNestingIsAnErrorNotACrash() {
        let deep = [UInt8](repeating: UInt8(ascii: "["), count: 100_000)
        let error = failure(deep)
        #expect(error?.reason == .tooDeep(limit: JSONParser.defaultMaxDepth))
        #expect(error?.offset == JSONParser.defaultMaxDepth)
        #expect(failure(deep, maxDepth: 10_000)?.reason == .tooDeep(limit: 10_000))
        let objects = Array(String(repeating: #"{"a":"#, count: 100_000).utf8)
        #expect(failure(objects)?.reason == .tooDeep(limit: JSONParser.defaultMaxDepth))
        let closed = Array((String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)).utf8)
        #expect(failure(closed)?.reason == .tooDeep(limit: JSONParser.defaultMaxDepth))
        #expect(failure(Array("[]".utf8), maxDepth: 0)?.reason == .tooDeep(limit: 0))
        #expect(throws: Never.self) { try JSONValue(parsing: "1", maxDepth: 0) }
    }

    @Test func depthLimitIsExact() throws {
        func nested(_ depth: Int) -> String { String(repeating: "[", count: depth) + String(repeating: "]", count: depth) }
        #expect(try JSONValue(parsing: nested(516)).serialized() == nested(516))
        #expect(failure(nested(517))?.reason == .tooDeep(limit: JSONParser.defaultMaxDepth))
        #expect(try JSONValue(parsing: nested(3), maxDepth: 3) == [[[]]])
        #expect(failure(Array(nested(4).utf8), maxDepth: 3)?.reason == .tooDeep(limit: 3))
    }

    @Test func errorsGiveLineColumnAndOffset() throws {
        let text = "{\n  \"a\": 1,\n  \"b\" 2\n}"
        let error = try #require(failure(text))
        #expect(error.line == 3 && error.column == 7 && error.offset == 18)
        #expect(error.description == "line 3, column 7: expected ':' after object key")

        let object = try #require(failure("{\r\n\"a\": 1\r\n\"b\": 2}"))
        #expect(object.description == "line 3, column 1: expected ',' or '}' in object")

        // Columns count Unicode scalars, offsets count bytes.
        let wide = try #require(failure("[\"é🙂\" x]"))
        #expect(wide.line == 1 && wide.column == 7 && wide.offset == 10)

        let lone = try #require(failure("[\n\"ab\\uD800\"]"))
        #expect(lone.description == "line 2, column 4: invalid string: lone surrogate \\uD800")

        let duplicate = try #require(failure("{\"a\":1,\n \"a\":2}"))
        #expect(duplicate.description == "line 2, column 2: duplicate key \"a\" in object")

        let empty = try #require(failure(""))
        #expect(empty.description == "line 1, column 1: empty input: expected a JSON value")
        #expect(try #require(failure("\r\r1 2")).line == 3)
    }

    @Test func parsesFromAnyCollectionOfBytes() throws {
        let text = #"{"k":[1,"two",null]}"#
        let expected: JSONValue = ["k": [1, "two", .null]]
        #expect(try JSONValue(parsing: text) == expected)
        #expect(try JSONValue(parsing: Array(text.utf8)) == expected)
        #expect(try JSONValue(parsing: Array(("xx" + text).utf8).dropFirst(2)) == expected)
        #expect(try JSONValue(parsing: AnyCollection(Array(text.utf8))) == expected)
        #expect(try JSONParser().parse(text) == expected)
    }

    @Test func parsesALargeDocument() throws {
        var text = #"{"sections":[{"id":"s","elements":["#
        for i in 0..<20_000 {
            if i > 0 { text += "," }
            text += #"{"id":"e\#(i)","content":{"n":\#(i),"t":"x\u00e9\#(i)"}}"#
        }
        text += "]}]}"
        let value = try JSONValue(parsing: text)
        let elements = try #require(value["sections"]?.arrayValue?.first?["elements"]?.arrayValue)
        #expect(elements.count == 20_000)
        #expect(elements[19_999] == ["id": "e19999", "content": ["n": 19_999, "t": "xé19999"]])
    }
}
