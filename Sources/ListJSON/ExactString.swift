/// A string that compares, orders and hashes by its exact UTF-8 bytes.
///
/// Swift's `String` treats canonically equivalent strings as equal: `"\u{E9}" == "e\u{301}"`. An
/// identifier read from JSON must be kept and matched exactly, so `JSONItem` uses `ExactString` as its
/// difference identifier: two items are the same item only when their ids are byte-for-byte equal.
/// Ordering is by UTF-8 bytes, which equals Unicode code point order.
///
/// ```swift
/// ExactString("\u{E9}") == ExactString("e\u{301}")   // false
/// ExactString("a") < ExactString("é")                 // true
/// ```
public struct ExactString: Hashable, Comparable, Sendable, CustomStringConvertible,
    CustomDebugStringConvertible, ExpressibleByStringLiteral
{
    /// The string.
    public var string: String

    /// Wraps a string.
    @inlinable
    public init(_ string: String) {
        self.string = string
    }

    /// Wraps a string literal.
    @inlinable
    public init(stringLiteral value: String) {
        self.string = value
    }

    /// Whether both strings hold the same UTF-8 bytes.
    /// - Complexity: O(n).
    public static func == (lhs: ExactString, rhs: ExactString) -> Bool {
        _UTF8Bytes.equal(lhs.string, rhs.string)
    }

    /// Whether `lhs` sorts before `rhs` in UTF-8 byte (= Unicode code point) order.
    /// - Complexity: O(n).
    public static func < (lhs: ExactString, rhs: ExactString) -> Bool {
        _UTF8Bytes.compare(lhs.string, rhs.string) < 0
    }

    /// Hashes the UTF-8 bytes of the string.
    public func hash(into hasher: inout Hasher) {
        _UTF8Bytes.hash(string, into: &hasher)
    }

    /// The string itself.
    public var description: String { string }

    /// The string as a Swift literal.
    public var debugDescription: String { string.debugDescription }
}
