import ListStore

/// The benchmark inputs as the store takes them: an `Item` (id, Int content) becomes a `ListItem`
/// whose content is the canonical JSON text of the Int.
enum StoreInput {
    static func listItem(_ item: Item) -> ListItem {
        ListItem(id: item.id, content: Array(String(item.content).utf8))
    }

    static func listSections(_ sections: [Section]) -> [ListSection] {
        sections.map { section in
            ListSection(model: listItem(section.model), elements: section.elements.map(listItem))
        }
    }

    /// One section ("s", 0) holding the diff-iv source: ("e<i>", i) for i in 0..<count.
    static func bulk(count: Int) -> [ListSection] {
        var elements = [ListItem]()
        elements.reserveCapacity(count)
        for i in 0..<count { elements.append(listItem(Item("e\(i)", i))) }
        return [ListSection(model: listItem(Item("s", 0)), elements: elements)]
    }
}
