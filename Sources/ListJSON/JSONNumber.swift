/// A JSON number, kept as its exact literal text.
///
/// The text follows the RFC 8259 grammar: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
/// Nothing is rounded or converted, so 64-bit integers such as `18446744073709551615` and long decimals
/// such as `0.1000000000000000055511151231257827` survive a round trip exactly. Two numbers are equal
/// when their texts are equal: `1`, `1.0` and `1e0` are three different numbers, just as they are three
/// different serialisations.
///
/// ```swift
/// let big = JSONNumber(UInt64.max)          // "18446744073709551615"
/// let exact = JSONNumber(literal: "0.10")!  // kept as written
/// exact.doubleValue                         // 0.1
/// ```
public struct JSONNumber: Hashable, Sendable, CustomStringConvertible {
    /// The literal text of the number, as it appears in JSON.
    public let literal: String

    /// Creates a number from its literal text, or returns `nil` when the text is not a JSON number
    /// (`"+1"`, `".5"`, `"1."`, `"01"`, `"NaN"`, `" 1"` are all rejected).
    /// - Complexity: O(n) in the length of the text.
    public init?(literal: String) {
        let valid = _UTF8Bytes.with(literal) { bytes in JSONNumber.scanLiteral(bytes, from: 0) == bytes.count }
        guard valid else { return nil }
        self.literal = literal
    }

    /// Creates a number from text already known to be a valid literal.
    init(uncheckedLiteral literal: String) {
        self.literal = literal
    }

    /// Creates an integer number.
    public init(_ value: Int) { literal = String(value) }

    /// Creates an integer number.
    public init(_ value: Int64) { literal = String(value) }

    /// Creates an integer number.
    public init(_ value: UInt64) { literal = String(value) }

    /// Creates a number from a finite `Double`, written as the shortest text that reads back as the
    /// same `Double` (`0.1` → `"0.1"`, `1e20` → `"1e+20"`, `100` → `"100.0"`); returns `nil` for
    /// infinities and NaN, which JSON cannot express.
    public init?(_ value: Double) {
        guard value.isFinite else { return nil }
        literal = value.description
    }

    /// Whether the literal is written as an integer: no fraction and no exponent (`-0` counts).
    public var isInteger: Bool {
        !literal.utf8.contains { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }
    }

    /// The value as an `Int64`, when the number is an integer in range, however it is written:
    /// `2`, `2.0`, `2e0` and `200e-2` give 2, `-0` gives 0, and `2.5`, `1e-1` or `1e19` give `nil`:
    /// no conversion ever rounds. (JSON, and JSON Schema's `integer`, do not tell `2` from `2.0`.)
    public var int64Value: Int64? {
        _UTF8Bytes.with(literal) { bytes -> Int64? in
            guard let (negative, magnitude) = JSONNumber.integerMagnitude(bytes) else { return nil }
            if negative {
                if magnitude == UInt64(Int64.max) + 1 { return Int64.min }
                return magnitude <= UInt64(Int64.max) ? -Int64(magnitude) : nil
            }
            return magnitude <= UInt64(Int64.max) ? Int64(magnitude) : nil
        }
    }

    /// The value as a `UInt64`, when the number is a non-negative integer in range, however it is
    /// written (see `int64Value`; `-0` gives 0).
    public var uint64Value: UInt64? {
        _UTF8Bytes.with(literal) { bytes -> UInt64? in
            guard let (negative, magnitude) = JSONNumber.integerMagnitude(bytes) else { return nil }
            return negative && magnitude != 0 ? nil : magnitude
        }
    }

    /// The value as an `Int`, when the number is an integer in range, however it is written (see
    /// `int64Value`).
    public var intValue: Int? {
        int64Value.flatMap { Int(exactly: $0) }
    }

    /// The nearest `Double` (correctly rounded); literals beyond the `Double` range give ±infinity
    /// (`1E400` → `.infinity`), tiny ones ±0.
    public var doubleValue: Double {
        Double(literal) ?? .nan
    }

    /// The literal text.
    public var description: String { literal }

    /// Sign and magnitude of the number when its value is an integer that fits 64 bits, whatever its
    /// fraction and exponent (`12.50e1` is 125); `nil` otherwise. Exact: the digits are shifted by
    /// the exponent, and any non-zero digit left after the point makes it no integer.
    private static func integerMagnitude(_ bytes: UnsafeBufferPointer<UInt8>) -> (Bool, UInt64)? {
        var i = 0
        let negative = bytes.first == UInt8(ascii: "-")
        if negative { i = 1 }
        func isDigit(_ i: Int) -> Bool { i < bytes.count && bytes[i] &- UInt8(ascii: "0") < 10 }
        // The significand's digits (integer part, then fraction), and how many are the fraction's.
        let integerStart = i
        while isDigit(i) { i += 1 }
        let integerEnd = i
        guard integerEnd > integerStart else { return nil }
        var fractionStart = i, fractionEnd = i
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            i += 1
            fractionStart = i
            while isDigit(i) { i += 1 }
            fractionEnd = i
        }
        var exponent = 0
        if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            i += 1
            var exponentNegative = false
            if i < bytes.count, bytes[i] == UInt8(ascii: "-") || bytes[i] == UInt8(ascii: "+") {
                exponentNegative = bytes[i] == UInt8(ascii: "-")
                i += 1
            }
            guard isDigit(i) else { return nil }
            while isDigit(i) {
                // Beyond this, only a zero significand is an integer in range (handled below).
                exponent = min(exponent * 10 + Int(bytes[i] &- UInt8(ascii: "0")), 1 << 20)
                i += 1
            }
            if exponentNegative { exponent = -exponent }
        }
        guard i == bytes.count else { return nil }
        let digits = [(integerStart, integerEnd), (fractionStart, fractionEnd)].flatMap { ($0.0..<$0.1).map { bytes[$0] } }
        guard digits.contains(where: { $0 != UInt8(ascii: "0") }) else { return (negative, 0) }
        // The value is digits × 10^shift.
        let shift = exponent - (fractionEnd - fractionStart)
        var kept = digits[...]
        if shift < 0 {
            guard -shift <= digits.count, digits.suffix(-shift).allSatisfy({ $0 == UInt8(ascii: "0") }) else { return nil }
            kept = digits.dropLast(-shift)
        }
        var magnitude: UInt64 = 0
        for digit in kept.map({ UInt64($0 &- UInt8(ascii: "0")) }) + repeatElement(0, count: max(0, min(shift, 20))) {
            let (times10, o1) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times10.addingReportingOverflow(digit)
            guard !o1 && !o2 else { return nil }
            magnitude = sum
        }
        return (negative, magnitude)
    }

    /// Scans a number literal starting at `start`; returns the offset just past it, or `nil` when the
    /// bytes there do not form a number. Used to validate literals; the parser has its own scanner
    /// with precise errors.
    static func scanLiteral(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        var i = start
        let n = bytes.count
        func isDigit(_ i: Int) -> Bool { i < n && bytes[i] &- UInt8(ascii: "0") < 10 }
        if i < n && bytes[i] == UInt8(ascii: "-") { i += 1 }
        guard isDigit(i) else { return nil }
        if bytes[i] == UInt8(ascii: "0") {
            i += 1
        } else {
            while isDigit(i) { i += 1 }
        }
        if i < n && bytes[i] == UInt8(ascii: ".") {
            i += 1
            guard isDigit(i) else { return nil }
            while isDigit(i) { i += 1 }
        }
        if i < n && (bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E")) {
            i += 1
            if i < n && (bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-")) { i += 1 }
            guard isDigit(i) else { return nil }
            while isDigit(i) { i += 1 }
        }
        return i
    }
}
