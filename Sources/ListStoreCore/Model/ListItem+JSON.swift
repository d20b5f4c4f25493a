import ListDiff
import ListJSON

extension ListItem: JSONWritableItem {
    /// Copies the stored content (canonical JSON already) as the writer's next value.
    package func writeContent(to writer: inout JSONWriter) {
        writer.fragment(content)
    }
}

extension StagedChangeset where Model == ListItem, Element == ListItem {
    /// The stages as the JSON array of stage objects that the journal stores (ListStore's article “The store file”),
    /// contents copied as stored.
    ///
    /// ```swift
    /// let changeset = ListChangeset(source: old, target: new)
    /// let text = String(decoding: changeset.stagesJSON, as: UTF8.self)   // [{"elementInserted":[…]}]
    /// ```
    /// - Complexity: O(operations + size of the contents carried).
    public var stagesJSON: [UInt8] {
        var writer = JSONWriter()
        writer.stages(stages)
        return writer.bytes
    }
}
