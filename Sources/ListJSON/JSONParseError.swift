/// Why JSON text was rejected, and where: the line and column (both 1-based) and the byte offset
/// (0-based) of the offending byte.
///
/// ```swift
/// do { _ = try JSONValue(parsing: "{\"a\":1 \"b\":2}") }
/// catch { print(error) }   // line 1, column 8: expected ',' or '}' in object
/// ```
public struct JSONParseError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong with the text.
    public enum Reason: Hashable, Sendable, CustomStringConvertible {
        /// The input holds no JSON value at all (only whitespace, or nothing).
        case emptyInput
        /// The input ends where `expected` was due.
        case unexpectedEndOfInput(expected: String)
        /// A byte that does not fit the grammar; `expected` says what would have.
        case unexpected(expected: String)
        /// A malformed number; the text explains why (leading zero, missing digits, …).
        case invalidNumber(String)
        /// A malformed string: a bad escape, a lone surrogate, an unescaped control character.
        case invalidString(String)
        /// Bytes that are not well-formed UTF-8 (invalid, overlong, surrogate or beyond U+10FFFF).
        case invalidUTF8
        /// An object names the same key twice (keys are compared by their exact characters).
        case duplicateKey(String)
        /// Non-whitespace follows the complete JSON value.
        case trailingCharacters
        /// Arrays and objects are nested deeper than the parser's limit.
        case tooDeep(limit: Int)

        /// The reason in words.
        public var description: String {
            switch self {
            case .emptyInput: "empty input: expected a JSON value"
            case .unexpectedEndOfInput(let expected): "unexpected end of input: expected \(expected)"
            case .unexpected(let expected): "expected \(expected)"
            case .invalidNumber(let why): "invalid number: \(why)"
            case .invalidString(let why): "invalid string: \(why)"
            case .invalidUTF8: "invalid UTF-8"
            case .duplicateKey(let key): "duplicate key \(key.debugDescription) in object"
            case .trailingCharacters: "unexpected characters after the JSON value"
            case .tooDeep(let limit): "arrays and objects nested deeper than \(limit) levels"
            }
        }
    }

    /// What is wrong.
    public var reason: Reason
    /// The 1-based line of the offending byte; lines end at LF, CR or CRLF.
    public var line: Int
    /// The 1-based column of the offending byte, counted in Unicode scalars from the start of its line.
    public var column: Int
    /// The 0-based byte offset of the offending byte in the input.
    public var offset: Int

    /// Creates an error.
    public init(_ reason: Reason, line: Int, column: Int, offset: Int) {
        self.reason = reason
        self.line = line
        self.column = column
        self.offset = offset
    }

    /// `line L, column C: reason`.
    public var description: String {
        "line \(line), column \(column): \(reason)"
    }
}
