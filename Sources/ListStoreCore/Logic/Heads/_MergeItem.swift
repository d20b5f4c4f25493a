import ListDiff
import ListJSON
import ListMerge

/// An item of a head as a merge's rebase sees it: its content when the merge read it from its row
/// (an item the intents touch) or made it, otherwise what the head keeps of it (its hash and
/// fingerprint), so that a merge reads only the contents it needs. A rebase that asks for a content
/// the merge did not read gets `null` and is noted (`misses`): the merge is then made again with
/// every content.
///
/// Not API.
package struct _MergeItem: MergeableItem, Sendable {
    /// Who the item is (compared byte for byte).
    package var id: String
    /// The content, when read or made.
    package var content: [UInt8]?
    /// For an item whose content was not read: where the head keeps it (its section, and its
    /// element in it, -1 for the section's own item), and the merge it belongs to.
    private var place: (section: Int32, element: Int32) = (-1, -1)
    private var merge: _MergeContext?

    /// An item whose content is known.
    package init(id: String, content: [UInt8]) {
        self.id = id
        self.content = content
    }

    /// The head's item at `place` (`element` -1: the section's own), whose content is not read.
    package init(id: String, keptAt place: (section: Int, element: Int), of merge: _MergeContext) {
        self.id = id
        self.place = (Int32(place.section), Int32(place.element))
        self.merge = merge
    }

    package init(documentID: String, content: JSONValue) {
        self.init(id: documentID, content: content.serializedBytes())
    }

    package var documentID: String { id }

    package var differenceIdentifier: ExactString { ExactString(id) }

    /// What the head keeps of an item whose content was not read.
    package var kept: HeadItem? {
        guard let merge else { return nil }
        let section = merge.head[Int(place.section)]
        return place.element < 0 ? section.model : section.elements[Int(place.element)]
    }

    package func isContentEqual(to source: _MergeItem) -> Bool {
        if let content, let other = source.content { return content == other }
        return (kept?.hash ?? ContentHash(of: content ?? [])) == (source.kept?.hash ?? ContentHash(of: source.content ?? []))
    }

    package var contentValue: JSONValue {
        if let content { return (try? JSONParser().parse(content)) ?? .null }
        merge?.misses.withLock { $0 = true }
        return .null
    }
}

/// The head a merge reads, and whether its rebase asked for a content it did not read.
package final class _MergeContext: Sendable {
    let head: [HeadSection]
    let misses = _Locked(false)

    package init(head: [HeadSection]) { self.head = head }

    /// Whether the rebase asked for a content the merge did not read.
    package var missed: Bool { misses.withLock { $0 } }
}

/// A section of a head as a merge's rebase sees it.
package typealias _MergeSection = ArraySection<_MergeItem, _MergeItem>

extension Array where Element == _MergeSection {
    /// `sections` with every content known.
    package init(_ sections: [ListSection]) {
        self = sections.map { section in
            _MergeSection(
                model: _MergeItem(id: section.model.id, content: section.model.content),
                elements: section.elements.map { _MergeItem(id: $0.id, content: $0.content) })
        }
    }

    /// The sections, when every content is known (`nil` otherwise).
    package var listSections: [ListSection]? {
        var sections: [ListSection] = []
        sections.reserveCapacity(count)
        for section in self {
            guard let model = section.model.content else { return nil }
            var elements: [ListItem] = []
            elements.reserveCapacity(section.elements.count)
            for element in section.elements {
                guard let content = element.content else { return nil }
                elements.append(ListItem(id: element.id, content: content))
            }
            sections.append(ListSection(model: ListItem(id: section.model.id, content: model), elements: elements))
        }
        return sections
    }

    /// The items of a merge's result: those with a content bring it (hashed), the others keep the
    /// head's hash and fingerprint.
    /// - Complexity: O(n), plus the size of the contents brought.
    package var commitTarget: (sections: [HeadSection], contents: CommitContents) {
        var contents = CommitContents()
        func item(_ item: _MergeItem) -> HeadItem {
            if let content = item.content { return contents.add(id: item.id, content: content) }
            return item.kept!
        }
        let sections = map { HeadSection(model: item($0.model), elements: $0.elements.map(item)) }
        return (sections, contents)
    }
}
