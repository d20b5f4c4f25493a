import ListDiff
import ListJSON

extension JournalEntry {
    /// The entry's staged changeset in an app's `StorableItem` types, applied to `state` (the list
    /// at `parentVersion`, in those types): how a consumer of `changes(after:)` keeps a typed copy.
    ///
    /// ```swift
    /// for try await change in source.changes(after: cursor) {
    ///     (changeset, messages) = try change.entry.changeset(applyingTo: messages)   // [ArraySection<Folder, Message>]
    /// }
    /// ```
    /// Only the items the entry inserts or updates are decoded. Unlike the untyped
    /// `changeset(applyingTo:)`, the result is not checked against the entry's digest (that would
    /// encode the whole list): apply entries in order, from a state of `parentVersion`.
    /// - Throws: `StoreError.invalidSnapshot` when an item does not decode as the types,
    ///   `StoreError.damaged` when the stages do not decode or do not apply to `state`.
    /// - Complexity: O(operations + sections + elements of touched sections), plus decoding the
    ///   inserted and updated items.
    public func changeset<Model: StorableItem, Element: StorableItem>(applyingTo state: [ArraySection<Model, Element>]) throws
        -> (changeset: StagedChangeset<Model, Element>, result: [ArraySection<Model, Element>])
    {
        let stored: StagedChangeset<JSONItem, JSONItem>
        do {
            stored = try StageDocument._decodeStagesWithoutIDs(try JSONParser().parse(stagesJSON), as: JSONItem.self)
        } catch {
            throw StoreError(.damaged, "journal entry \(version) of list '\(list)' does not decode: \(error)")
        }
        let typed = try stored.map(
            model: { try _CanonicalJSON.decode(Model.self, from: $0.content.serializedBytes(), what: "a section of version \(version)") },
            element: { try _CanonicalJSON.decode(Element.self, from: $0.content.serializedBytes(), what: "an element of version \(version)") })
        do {
            return (typed, try typed.apply(to: state))
        } catch {
            throw StoreError(.damaged, "journal entry \(version) of list '\(list)' does not apply to the state given: \(error)")
        }
    }
}
