import ListJSON
import ListDiffTestSupport
import Testing

/// Canonical output, byte for byte.
@Suite(.heavyWork) struct JSONSerializationTests {
    @Test func keysAreOrderedByCodePoint() {
        let value: JSONValue = [
            "b": 1, "a": 2, "é": 3, "e\u{301}": 4, "\u{10000}": 5, "\u{FF61}": 6, "😀": 7, "A": 8, "": 9, "a\u{0}b": 10,
        ]
        let expected = "{\"\":9,\"A\":8,\"a\":2,\"a\\u0000b\":10,\"b\":1,\"e\u{301}\":4,\"é\":3,\"\u{FF61}\":6,\"\u{10000}\":5,\"😀\":7}"
        #expect(value.serialized() == expected)
        #expect(value.serializedBytes() == Array(expected.utf8))
    }

    @Test func stringsAreEscapedMinimally() {
        let value: JSONValue = .string("\"\\/\u{8}\u{C}\n\r\t\u{0}\u{1}\u{1F}\u{7F}é\u{2028}😀 <>&'")
        let expected = #""\"\\/\b\f\n\r\t\u0000\u0001\u001f"# + "\u{7F}é\u{2028}😀 <>&'\""
        #expect(value.serialized() == expected)
        // Every control character below U+0020.
        var all = ""
        for c in 0..<0x20 { all.unicodeScalars.append(Unicode.Scalar(UInt8(c))) }
        let escapes = JSONValue.string(all).serialized()
        #expect(escapes == #""\u0000\u0001\u0002\u0003\u0004\u0005\u0006\u0007\b\t\n\u000b\f\r\u000e\u000f\u0010\u0011\u0012\u0013\u0014\u0015\u0016\u0017\u0018\u0019\u001a\u001b\u001c\u001d\u001e\u001f""#)
    }

    @Test func noInsignificantWhitespace() throws {
        let input = """
            {
              "list" : [ 1 , -0 , 2.50 , 1E400 , true , false , null , "x" ] ,
              "nested" : { "z" : { } , "y" : [ ] }
            }
            """
        let value = try JSONValue(parsing: input)
        #expect(value.serialized() == #"{"list":[1,-0,2.50,1E400,true,false,null,"x"],"nested":{"y":[],"z":{}}}"#)
    }

    @Test func nulInKeysAndStrings() throws {
        let value = try JSONValue(parsing: #"{"a\u0000":"\u0000","a":"b\u0000c"}"#)
        #expect(value.serialized() == #"{"a":"b\u0000c","a\u0000":"\u0000"}"#)
        #expect(value["a\u{0}"] == .string("\u{0}"))
    }

    @Test func appendsIntoABuffer() {
        var buffer = Array("prefix:".utf8)
        JSONValue.array([1, "two"]).serialize(into: &buffer)
        #expect(String(decoding: buffer, as: UTF8.self) == #"prefix:[1,"two"]"#)
    }

    @Test func serialisationRoundTrips() throws {
        let samples = [
            #"{"a":[{"b":"\u00e9\ud83d\ude00\n"},-1.5e-7,18446744073709551615],"c":null}"#,
            #"[[[[[]]]],{},"",0]"#, #""\u0000\u001f\"\\""#, #"{"\u2028":"\u2029"}"#,
        ]
        for text in samples {
            let value = try JSONValue(parsing: text)
            let again = try JSONValue(parsing: value.serializedBytes())
            #expect(again == value)
            #expect(again.serializedBytes() == value.serializedBytes())
            #expect(value.description == value.serialized())
        }
    }
}
