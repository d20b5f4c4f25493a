import ListDiff

/// The contents a commit brings: of every item of a snapshot it commits, or of the items a replayed
/// journal entry inserts or changes. A target `HeadItem` names its content here (`HeadItem.content`);
/// the contents of the others are in their rows.
///
/// Not API: package-visible for the engines.
package struct CommitContents: Sendable {
    private var contents: [[UInt8]]

    package init() { contents = [] }

    /// The content `item` brings; `nil` when it brings none (its row holds it).
    package subscript(item: HeadItem) -> [UInt8]? {
        item.content >= 0 ? contents[Int(item.content)] : nil
    }

    /// Adds `content`, and returns the item of `id` that brings it.
    /// - Complexity: O(content.count), to hash it.
    package mutating func add(id: String, content: [UInt8]) -> HeadItem {
        contents.append(content)
        return HeadItem(id: id, hash: ContentHash(of: content), content: Int32(contents.count - 1))
    }

    /// The items of `sections`, each bringing its content (hashed on two threads for many).
    /// - Complexity: O(total size of contents).
    package static func of(_ sections: [ListSection]) -> (sections: [HeadSection], contents: CommitContents) {
        let starts = DiffPairing.flatStarts(sections)
        let total = starts[sections.count]
        precondition(total + sections.count < Int(Int32.max), "a snapshot holds fewer than 2^31 items")
        var contents = CommitContents()
        contents.contents.reserveCapacity(total + sections.count)
        for section in sections {
            for element in section.elements { contents.contents.append(element.content) }
        }
        for section in sections { contents.contents.append(section.model.content) }
        let flat = contents.contents
        let hashes = _TwoThreads.array(count: flat.count, threshold: 4096) { (range, base: UnsafeMutablePointer<ContentHash>) in
            for k in range { (base + k).initialize(to: ContentHash(of: flat[k])) }
        }
        var heads: [HeadSection] = []
        heads.reserveCapacity(sections.count)
        for (t, section) in sections.enumerated() {
            var elements: [HeadItem] = []
            elements.reserveCapacity(section.elements.count)
            for (e, element) in section.elements.enumerated() {
                let k = starts[t] + e
                elements.append(HeadItem(id: element.id, hash: hashes[k], content: Int32(k)))
            }
            let k = total + t
            heads.append(HeadSection(model: HeadItem(id: section.model.id, hash: hashes[k], content: Int32(k)), elements: elements))
        }
        return (heads, contents)
    }

    /// The stages of `changeset` with items that bring their contents, and those contents.
    /// - Complexity: O(operations + size of the contents they bring), to hash them.
    package static func bringing(_ changeset: ListChangeset) -> (changeset: StagedChangeset<HeadItem, HeadItem>, contents: CommitContents) {
        final class Collected {
            var contents = CommitContents()
            func add(_ item: ListItem) -> HeadItem { contents.add(id: item.id, content: item.content) }
        }
        let collected = Collected()
        let mapped = changeset.map(model: collected.add, element: collected.add)
        return (mapped, collected.contents)
    }

    /// The stages of `changeset` with the items they bring as `ListItem`s.
    /// - Complexity: O(operations); the contents are shared.
    package func items(of changeset: StagedChangeset<HeadItem, HeadItem>) -> ListChangeset {
        changeset.map(model: item(bringing:), element: item(bringing:))
    }

    /// `item` as a `ListItem`, with the content it brings.
    package func item(bringing item: HeadItem) -> ListItem {
        guard let content = self[item] else { preconditionFailure("a stage's item brings its content") }
        return ListItem(id: item.id, content: content)
    }
}
