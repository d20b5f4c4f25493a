import ListDiff

/// An item that snapshot and stage documents can carry: an id string and JSON content.
///
/// `JSONItem` keeps the content as a `JSONValue`; other item types (such as a store's items, which
/// keep canonical JSON bytes) conform so that `StageDocument` decodes stages straight into them.
public protocol JSONDocumentItem: Differentiable {
    /// Creates the item a document describes.
    init(documentID: String, content: JSONValue)
    /// The item's id, as a document writes it.
    var documentID: String { get }
}

extension JSONItem: JSONDocumentItem {
    /// Same as `init(id:content:)`.
    public init(documentID: String, content: JSONValue) {
        self.init(id: documentID, content: content)
    }

    /// The `id`.
    public var documentID: String { id }
}
