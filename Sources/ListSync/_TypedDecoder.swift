import ListDiff
import ListStore

/// Stored items decoded as an app's types, each content once: a decoded value is kept by id and
/// content bytes, and reused while the item's content stays the same (`sections(_:)` keeps only
/// what the newest sections hold).
struct _TypedDecoder<Model: StorableItem, Element: StorableItem> {
    private var models: [String: (content: [UInt8], value: Model)] = [:]
    private var elements: [String: (content: [UInt8], value: Element)] = [:]

    /// The typed sections of `sections`; afterwards only their items are kept.
    /// - Throws: `StoreError.invalidSnapshot` naming the first item that does not decode.
    /// - Complexity: O(n) comparisons of contents, plus decoding the items not kept.
    mutating func sections(_ sections: [ListSection]) throws -> [ArraySection<Model, Element>] {
        var keptModels: [String: (content: [UInt8], value: Model)] = [:]
        var keptElements: [String: (content: [UInt8], value: Element)] = [:]
        let typed = try sections.map { section in
            let model = try self.model(section.model)
            keptModels[section.model.id] = (section.model.content, model)
            return ArraySection(
                model: model,
                elements: try section.elements.map { item in
                    let element = try self.element(item)
                    keptElements[item.id] = (item.content, element)
                    return element
                })
        }
        (models, elements) = (keptModels, keptElements)
        return typed
    }

    /// `changeset` in the app's types: its inserted and updated items decoded (from what is kept
    /// when their content is).
    /// - Throws: `StoreError.invalidSnapshot` naming the first item that does not decode.
    func changeset(_ changeset: ListChangeset) throws -> StagedChangeset<Model, Element> {
        try changeset.map(model: model, element: element)
    }

    private func model(_ item: ListItem) throws -> Model {
        if let kept = models[item.id], kept.content == item.content { return kept.value }
        return try _CanonicalJSON.decode(Model.self, from: item.content, what: "section '\(item.id)'")
    }

    private func element(_ item: ListItem) throws -> Element {
        if let kept = elements[item.id], kept.content == item.content { return kept.value }
        return try _CanonicalJSON.decode(Element.self, from: item.content, what: "element '\(item.id)'")
    }
}
