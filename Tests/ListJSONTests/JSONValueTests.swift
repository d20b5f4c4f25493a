import ListJSON
import ListDiffTestSupport
import Testing

/// Exactness of numbers and strings, accessors, objects, equality.
@Suite(.heavyWork) struct JSONValueTests {
    @Test func integersSurviveExactly() throws {
        let max = try JSONValue(parsing: "18446744073709551615")
        #expect(max.uint64Value == UInt64.max)
        #expect(max.int64Value == nil)
        #expect(max.serialized() == "18446744073709551615")
        #expect(JSONValue(UInt64.max) == max)

        let min = try JSONValue(parsing: "-9223372036854775808")
        #expect(min.int64Value == Int64.min)
        #expect(min.uint64Value == nil)
        #expect(JSONValue(Int64.min).serialized() == "-9223372036854775808")
        #expect(JSONValue(Int64.max).int64Value == Int64.max)

        #expect(try JSONValue(parsing: "-9223372036854775809").int64Value == nil)
        #expect(try JSONValue(parsing: "18446744073709551616").uint64Value == nil)
        #expect(try JSONValue(parsing: "-0").int64Value == 0)
        #expect(try JSONValue(parsing: "-0").uint64Value == 0)
        #expect(try JSONValue(parsing: "-0").serialized() == "-0")
        // JSON does not tell 2 from 2.0: an integer value is one however it is written; nothing rounds.
        for (literal, value) in [
            ("1.0", 1), ("1e2", 100), ("2.50e1", 25), ("200e-2", 2), ("-0.0", 0), ("0e999999999999", 0), ("-3.000", -3),
            ("9223372036854775807.0", Int64.max), ("-9.223372036854775808e18", Int64.min), ("1E+3", 1000),
        ] as [(String, Int64)] {
            #expect(try JSONValue(parsing: literal).int64Value == value, "\(literal)")
        }
        for literal in ["1.5", "1e-1", "1e19", "9223372036854775808.0", "1.0000000000000000001", "123e-400", "1e99999999999"] {
            #expect(try JSONValue(parsing: literal).int64Value == nil, "\(literal)")
        }
        #expect(try JSONValue(parsing: "1.0").serialized() == "1.0")
        #expect(JSONValue(-42).intValue == -42)
    }

    /// Any way of writing an integer reads as that integer; any non-integer as none.
    @Test func integersReadTheSameHoweverTheyAreWritten() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<5_000 {
            let n = Int64.random(in: -1_000_000_000_000...1_000_000_000_000, using: &generator)
            let digits = String(n.magnitude)
            let sign = n < 0 ? "-" : ""
            let zeros = String(repeating: "0", count: Int.random(in: 1...4, using: &generator))
            let point = Int.random(in: 1...digits.count, using: &generator)  // d.ddd × 10^(count − point)
            let scientific = sign + digits.prefix(point) + "." + digits.dropFirst(point) + "0e" + String(digits.count - point)
            for literal in [sign + digits, sign + digits + "." + zeros, sign + digits + zeros + "e-" + String(zeros.count), scientific] {
                #expect(try JSONValue(parsing: literal).int64Value == n, "\(literal)")
            }
            if n != 0 {
                #expect(try JSONValue(parsing: sign + digits + ".5").int64Value == nil)
                #expect(try JSONValue(parsing: sign + digits + "e-" + String(digits.count + 1)).int64Value == nil)
            }
        }
    }

    @Test func decimalsSurviveExactly() throws {
        for literal in ["0.1000000000000000055511151231257827", "1E400", "-1e-400", "3.14159265358979323846264338327950288",
                        "100000000000000000000000000000000000000000001", "2.50", "1e+05"] {
            let value = try JSONValue(parsing: literal)
            #expect(value.serialized() == literal)
            #expect(value.numberValue?.literal == literal)
            #expect(try JSONValue(parsing: value.serialized()) == value)
        }
        #expect(try JSONValue(parsing: "1E400").doubleValue == .infinity)
        #expect(try JSONValue(parsing: "0.1000000000000000055511151231257827").doubleValue == 0.1)
        #expect(try JSONValue(parsing: "-0").doubleValue?.sign == .minus)
    }

    @Test func numbersCompareByLiteral() throws {
        #expect(try JSONValue(parsing: "1") != JSONValue(parsing: "1.0"))
        #expect(try JSONValue(parsing: "0") != JSONValue(parsing: "-0"))
        #expect(try JSONValue(parsing: "1e2") != JSONValue(parsing: "1E2"))
        #expect(Set([try JSONValue(parsing: "1"), try JSONValue(parsing: "1.0"), 1]).count == 2)
    }

    @Test func numberLiteralsAreValidated() {
        for valid in ["0", "-0", "12", "1.5", "1e5", "-1.5E-7", "0.0"] { #expect(JSONNumber(literal: valid) != nil, "\(valid)") }
        for invalid in ["", "01", "+1", ".5", "1.", "NaN", "-", " 1", "1 ", "1e", "0x1", "Infinity", "1.5.2"] {
            #expect(JSONNumber(literal: invalid) == nil, "\(invalid)")
        }
    }

    @Test func doublesAreWrittenShortestAndValid() throws {
        let tenth = 0.1, negative = -2.5
        #expect(JSONValue(tenth)?.serialized() == "0.1")
        #expect(JSONValue(negative)?.serialized() == "-2.5")
        #expect(JSONValue(Double.nan) == nil)
        #expect(JSONValue(Double.infinity) == nil)
        for double in [0.1, 1e20, 1e-7, Double.leastNonzeroMagnitude, Double.greatestFiniteMagnitude, -0.0, 100, 123456.789] {
            let value = try #require(JSONValue(double))
            #expect(JSONNumber(literal: value.serialized()) != nil, "\(double)")
            #expect(value.doubleValue == double)
            #expect(try JSONValue(parsing: value.serialized()).doubleValue == double)
        }
        let literal: JSONValue = 0.25
        #expect(literal.serialized() == "0.25")
    }

    @Test func convenienceInitialisersAndAccessors() {
        #expect(JSONValue(true) == .bool(true))
        #expect(JSONValue("x") == .string("x"))
        #expect(JSONValue(7) == 7)
        #expect(JSONValue(Int64(7)) == 7)
        #expect(JSONValue(UInt64(7)) == 7)
        let value: JSONValue = ["a": [1, "two", .null, true], "b": ["c": 2.5]]
        #expect(value["a"]?.arrayValue?.count == 4)
        #expect(value["a"]?.arrayValue?[1].stringValue == "two")
        #expect(value["a"]?.arrayValue?[2].isNull == true)
        #expect(value["a"]?.arrayValue?[3].boolValue == true)
        #expect(value["b"]?["c"]?.doubleValue == 2.5)
        #expect(value["missing"] == nil)
        #expect(JSONValue(1)["a"] == nil)
        #expect(value.objectValue?.keys == ["a", "b"])
        #expect([JSONValue.null, true, 1, "s", [], [:]].map(\.kindName)
            == ["null", "boolean", "number", "string", "array", "object"])
    }

    @Test func stringsCompareByExactScalars() {
        // Canonically equivalent but different: never equal, different hashes are allowed.
        #expect(JSONValue.string("\u{E9}") != .string("e\u{301}"))
        #expect(Set<JSONValue>([.string("\u{E9}"), .string("e\u{301}")]).count == 2)
        #expect(JSONValue.string("a\u{0}b") != .string("ab"))
        #expect(JSONValue.string("a\u{0}b") == .string("a\u{0}b"))
        #expect(ExactString("\u{E9}") != ExactString("e\u{301}"))
        #expect(ExactString("e\u{301}") < ExactString("\u{E9}"))
    }

    @Test func objectsKeepSortedUniqueKeys() {
        var object: JSONObject = ["b": 1, "a": 2, "é": 3, "\u{10000}": 4, "\u{FF61}": 5, "Z": 6]
        #expect(object.keys == ["Z", "a", "b", "é", "\u{FF61}", "\u{10000}"])
        object["c"] = "new"
        object["a"] = nil
        object["b"] = 10
        object["absent"] = nil
        #expect(object.keys == ["Z", "b", "c", "é", "\u{FF61}", "\u{10000}"])
        #expect(object["b"] == 10 && object["c"] == "new" && object["a"] == nil)
        #expect(object.count == 6 && object[0].key == "Z")

        let merged = JSONObject([("k", 1), ("j", 2), ("k", 3)]) { first, second in [first, second] }
        #expect(merged == ["j": 2, "k": [1, 3]])

        // Equality and hashing do not depend on the order keys were given in.
        let x: JSONValue = ["a": 1, "b": [true, .null]]
        let y: JSONValue = ["b": [true, .null], "a": 1]
        #expect(x == y && x.hashValue == y.hashValue)
        #expect(x != ["a": 1, "b": [true]])
        #expect(JSONObject(uniqueKeysWithValues: [("\u{E9}", 1), ("e\u{301}", 2)]).count == 2)
    }
}
