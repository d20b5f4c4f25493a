import ListDiff

/// A JSON document that parsed but does not have the expected shape, with the place of the problem.
///
/// ```swift
/// do { _ = try SnapshotDocument(decoding: value) }
/// catch { print(error) }   // sections[2].elements[5].id: expected a string, found number
/// ```
public struct DocumentError: Error, Hashable, Sendable, CustomStringConvertible {
    /// One step of the path from the document's root to the problem.
    public enum PathComponent: Hashable, Sendable {
        /// A key of an object.
        case key(String)
        /// An index into an array.
        case index(Int)
    }

    /// What is wrong at the place.
    public enum Reason: Hashable, Sendable, CustomStringConvertible {
        /// The value has the wrong kind; `expected` describes what was wanted ("a string"),
        /// `found` is the kind present ("number", see `JSONValue.kindName`).
        case typeMismatch(expected: String, found: String)
        /// A required key is absent.
        case missing
        /// The value has the right kind but is not acceptable; the text says why.
        case invalidValue(String)
        /// A decoded stage does not fit the state it is applied to.
        case stageNotApplicable(StageApplicationError)

        /// The reason in words.
        public var description: String {
            switch self {
            case .typeMismatch(let expected, let found): "expected \(expected), found \(found)"
            case .missing: "required but missing"
            case .invalidValue(let why): why
            case .stageNotApplicable(let error): "stage does not apply: \(error.reason): \(error.detail)"
            }
        }
    }

    /// The path from the document's root to the problem; empty for the root itself.
    public var path: [PathComponent]
    /// What is wrong.
    public var reason: Reason

    /// Creates an error.
    public init(_ reason: Reason, path: [PathComponent] = []) {
        self.reason = reason
        self.path = path
    }

    /// The path written the way JavaScript would access it, e.g. `sections[2].elements[5].id`;
    /// `top level` for the root.
    public var pathDescription: String {
        guard !path.isEmpty else { return "top level" }
        var text = ""
        for component in path {
            switch component {
            case .key(let key): text += text.isEmpty ? key : "." + key
            case .index(let index): text += "[\(index)]"
            }
        }
        return text
    }

    /// `path: reason`.
    public var description: String {
        "\(pathDescription): \(reason)"
    }

    /// This error seen from one level up: `component` goes in front of the path.
    func prefixed(_ component: PathComponent) -> DocumentError {
        DocumentError(reason, path: [component] + path)
    }
}
