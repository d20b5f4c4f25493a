import ListDiff
import ListJSON

/// An item that a merge can read and rebuild: a JSON document item whose identity is its id, compared
/// byte for byte, and whose content can be read as a `JSONValue`.
///
/// Sections and elements of a merged snapshot are both `MergeableItem`s. The merge reads contents only
/// where it needs them (an intent's new content, a three-way merge, a conflict report) and builds new
/// items with `init(documentID:content:)` only where a merge produced new content, so an item type
/// that keeps canonical JSON bytes conforms by parsing them in `contentValue`.
///
/// ```swift
/// extension JSONItem: MergeableItem {}   // provided: `contentValue` is `content`
/// let item = JSONItem(id: "m1", content: ["text": "hi"])
/// item.contentValue                       // {"text":"hi"}
/// ```
public protocol MergeableItem: JSONDocumentItem where DifferenceIdentifier == ExactString {
    /// What the item shows, as a JSON value.
    /// - Complexity: should be O(size of the content).
    var contentValue: JSONValue { get }
}

extension JSONItem: MergeableItem {
    /// The `content`.
    /// - Complexity: O(1).
    public var contentValue: JSONValue { content }
}
