import ListDiff

/// A section or element of a JSON snapshot: an identifier and any JSON value as content.
///
/// The difference identifier is the `id`, compared byte for byte (`ExactString`), so ids that differ
/// only in Unicode normalisation are different items and every id survives a diff exactly. Content
/// equality is `content ==` (see `JSONValue.==`).
///
/// ```swift
/// let item = JSONItem(id: "m1", content: ["text": "hi"])
/// item.jsonValue.serialized()   // {"content":{"text":"hi"},"id":"m1"}
/// ```
public struct JSONItem: Differentiable, Hashable, Sendable, CustomStringConvertible {
    /// Who the item is: any string, including empty, non-ASCII or holding U+0000.
    public var id: String
    /// What the item shows; `null` when the document gives none.
    public var content: JSONValue

    /// Creates an item.
    public init(id: String, content: JSONValue = .null) {
        self.id = id
        self.content = content
    }

    /// Decodes `{"id": "…", "content": …}`; `content` may be absent (null); other keys are ignored.
    ///
    /// - Throws: `DocumentError` when the value is not an object, `id` is missing or not a string; the
    ///   path is relative to `value` (e.g. `id`).
    public init(decoding value: JSONValue) throws(DocumentError) {
        try self.init(members: try _Decode.object(value))
    }

    /// Decodes the `id` and `content` keys of an object.
    init(members object: JSONObject) throws(DocumentError) {
        id = try _Decode.required(object, "id", _Decode.string)
        content = object["content"] ?? .null
    }

    /// The item as `{"content": …, "id": "…"}` (content always present, `null` included).
    public var jsonValue: JSONValue {
        .object(JSONObject(sortedUniqueMembers: [.init("content", content), .init("id", .string(id))]))
    }

    /// The id, compared byte for byte.
    public var differenceIdentifier: ExactString { ExactString(id) }

    /// Whether the content is the same JSON value.
    /// - Complexity: O(size of the content).
    public func isContentEqual(to source: JSONItem) -> Bool {
        content == source.content
    }

    /// Whether both the ids (byte for byte) and the contents are equal.
    public static func == (lhs: JSONItem, rhs: JSONItem) -> Bool {
        _UTF8Bytes.equal(lhs.id, rhs.id) && lhs.content == rhs.content
    }

    /// Hashes the id's bytes and the content.
    public func hash(into hasher: inout Hasher) {
        _UTF8Bytes.hash(id, into: &hasher)
        content.hash(into: &hasher)
    }

    /// The canonical JSON text of `jsonValue`.
    public var description: String { jsonValue.serialized() }
}

/// A section of a JSON snapshot.
public typealias JSONSection = ArraySection<JSONItem, JSONItem>

/// A stage of a staged changeset between JSON snapshots.
public typealias JSONStage = Stage<JSONItem, JSONItem>
