import ListJSON
import ListMerge

extension ListItem: MergeableItem {
    /// The content parsed as JSON (`null` for content that is not JSON, which the store never holds).
    /// - Complexity: O(size of the content).
    public var contentValue: JSONValue { (try? json) ?? .null }
}
