/// A JSON value that keeps everything exactly: numbers as their literal text, strings as their exact
/// Unicode scalars, objects as sorted unique keys.
///
/// Equality is exact and independent of the key order of the input: two values are equal exactly when
/// their canonical serialisations (`serialized()`) are equal. Strings compare by their UTF-8 bytes, not
/// by Unicode canonical equivalence, and numbers by their literal text (`1` ≠ `1.0`).
///
/// ```swift
/// let value = try JSONValue(parsing: #"{"b":[1,2.50,null],"a":"x"}"#)
/// value["b"]?.arrayValue?[1]          // .number(2.50)
/// value.serialized()                  // {"a":"x","b":[1,2.50,null]}
/// let built: JSONValue = ["id": "m1", "content": ["n": 2]]
/// ```
public enum JSONValue: Hashable, Sendable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number, kept as its literal text.
    case number(JSONNumber)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object with unique keys in code point order.
    case object(JSONObject)

    /// Whether both values are the same JSON value (strings compared byte for byte, numbers by their
    /// literal text, objects by their sorted members).
    /// - Complexity: O(size of the values).
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case let (.bool(a), .bool(b)): a == b
        case let (.number(a), .number(b)): a == b
        case let (.string(a), .string(b)): _UTF8Bytes.equal(a, b)
        case let (.array(a), .array(b)): a == b
        case let (.object(a), .object(b)): a == b
        default: false
        }
    }

    /// Hashes the value consistently with `==`.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null:
            hasher.combine(0 as UInt8)
        case .bool(let value):
            hasher.combine(1 as UInt8)
            hasher.combine(value)
        case .number(let value):
            hasher.combine(2 as UInt8)
            hasher.combine(value)
        case .string(let value):
            hasher.combine(3 as UInt8)
            _UTF8Bytes.hash(value, into: &hasher)
        case .array(let value):
            hasher.combine(4 as UInt8)
            hasher.combine(value)
        case .object(let value):
            hasher.combine(5 as UInt8)
            hasher.combine(value)
        }
    }
}

// MARK: - Convenience initialisers

extension JSONValue {
    /// An integer number.
    public init(_ value: Int) { self = .number(JSONNumber(value)) }

    /// An integer number.
    public init(_ value: Int64) { self = .number(JSONNumber(value)) }

    /// An integer number.
    public init(_ value: UInt64) { self = .number(JSONNumber(value)) }

    /// A number from a finite `Double` (see `JSONNumber.init(_:)`), or `nil` for infinities and NaN.
    ///
    /// A floating-point *literal* is not a `Double` yet: `JSONValue(0.5)` uses `init(floatLiteral:)`
    /// and is not optional; `JSONValue(x)` for a `Double` variable `x` is.
    public init?(_ value: Double) {
        guard let number = JSONNumber(value) else { return nil }
        self = .number(number)
    }

    /// A string.
    public init(_ value: String) { self = .string(value) }

    /// `true` or `false`.
    public init(_ value: Bool) { self = .bool(value) }
}

// Deliberately not `ExpressibleByNilLiteral`: with it, `nil` in an optional context silently turns into
// `.null` (for instance `found ? value : nil`, or `object["k"] == nil`). Write `.null` instead.
extension JSONValue: ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByStringLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    /// `true` or `false`.
    public init(booleanLiteral value: Bool) { self = .bool(value) }

    /// An integer number.
    public init(integerLiteral value: Int) { self = .number(JSONNumber(value)) }

    /// A number from a floating-point literal, written as the shortest text that reads back as the
    /// same `Double`.
    /// - Precondition: the literal is finite.
    public init(floatLiteral value: Double) {
        guard let number = JSONNumber(value) else { preconditionFailure("JSONValue: non-finite number") }
        self = .number(number)
    }

    /// A string.
    public init(stringLiteral value: String) { self = .string(value) }

    /// An array.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }

    /// An object.
    /// - Precondition: no key occurs twice.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(JSONObject(uniqueKeysWithValues: elements))
    }
}

/// A string with interpolations: `["text": "new \(count)"]`.
extension JSONValue: ExpressibleByStringInterpolation {}

// MARK: - Accessors

extension JSONValue {
    /// Whether the value is `null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The Boolean, when the value is `true` or `false`.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The number, when the value is a number.
    public var numberValue: JSONNumber? {
        if case .number(let value) = self { return value }
        return nil
    }

    /// The string, when the value is a string.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The elements, when the value is an array.
    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The object, when the value is an object.
    public var objectValue: JSONObject? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// The number as an `Int64`, when the value is an integer literal in range (see
    /// `JSONNumber.int64Value`).
    public var int64Value: Int64? { numberValue?.int64Value }

    /// The number as a `UInt64`, when the value is a non-negative integer literal in range.
    public var uint64Value: UInt64? { numberValue?.uint64Value }

    /// The number as an `Int`, when the value is an integer literal in range.
    public var intValue: Int? { numberValue?.intValue }

    /// The number as the nearest `Double`, when the value is a number.
    public var doubleValue: Double? { numberValue?.doubleValue }

    /// The value of `key`, when the value is an object that has the key.
    /// - Complexity: O(log n).
    public subscript(key: String) -> JSONValue? {
        objectValue?[key]
    }

    /// The name of the kind of value, as used in error messages: `null`, `boolean`, `number`,
    /// `string`, `array` or `object`.
    public var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}

extension JSONValue: CustomStringConvertible {
    /// The canonical JSON text of the value.
    public var description: String { serialized() }
}
