import ListDiff
import ListJSON

/// A section or element of a stored list: an id and content, the content being canonical JSON text.
///
/// The id says who the item is and is compared byte for byte (ids that differ only in Unicode
/// normalisation are different items). The content says what the item shows: canonical JSON as
/// `JSONValue.serializedBytes()` writes it (sorted keys, no insignificant whitespace, numbers as
/// written). The store compares contents byte for byte to find updates and rejects content that is
/// not canonical JSON, so that every copy of a list hashes to the same digest.
///
/// ```swift
/// let item = ListItem(id: "m1", json: ["text": "hi"])
/// item.content          // the bytes of {"text":"hi"}
/// try item.json         // ["text": "hi"]
/// ```
public struct ListItem: Differentiable, Hashable, Sendable, CustomStringConvertible {
    /// Who the item is: any string, including empty, non-ASCII or holding U+0000.
    public var id: String
    /// What the item shows: the UTF-8 bytes of canonical JSON text (`null` when there is nothing).
    public var content: [UInt8]

    /// Creates an item from canonical JSON bytes; the store checks them when it writes the item.
    public init(id: String, content: [UInt8]) {
        self.id = id
        self.content = content
    }

    /// Creates an item whose content is the canonical serialization of `json`.
    public init(id: String, json: JSONValue = .null) {
        self.id = id
        self.content = json.serializedBytes()
    }

    /// The content parsed as JSON.
    /// - Throws: `JSONParseError` when the content is not JSON.
    /// - Complexity: O(size of the content).
    public var json: JSONValue {
        get throws(JSONParseError) { try JSONParser().parse(content) }
    }

    /// The id, compared byte for byte.
    @inlinable
    public var differenceIdentifier: ExactString { ExactString(id) }

    /// Whether the contents are the same bytes.
    /// - Complexity: O(size of the content).
    @inlinable
    public func isContentEqual(to source: ListItem) -> Bool {
        content == source.content
    }

    /// Whether ids (byte for byte) and contents are equal.
    public static func == (lhs: ListItem, rhs: ListItem) -> Bool {
        ExactString(lhs.id) == ExactString(rhs.id) && lhs.content == rhs.content
    }

    /// Hashes the id's bytes and the content.
    public func hash(into hasher: inout Hasher) {
        ExactString(id).hash(into: &hasher)
        hasher.combine(content)
    }

    /// `id: content`.
    public var description: String {
        "\(id.debugDescription): \(String(decoding: content, as: UTF8.self))"
    }
}

extension ListItem: JSONDocumentItem {
    /// Same as `init(id:json:)`.
    public init(documentID: String, content: JSONValue) {
        self.init(id: documentID, json: content)
    }

    /// The `id`.
    public var documentID: String { id }
}

/// A section of a stored list, with its elements.
public typealias ListSection = ArraySection<ListItem, ListItem>

/// A stage of a staged changeset between versions of a stored list.
public typealias ListStage = Stage<ListItem, ListItem>

/// A staged changeset between versions of a stored list.
public typealias ListChangeset = StagedChangeset<ListItem, ListItem>
