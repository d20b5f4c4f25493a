import ListDiff

/// The contents a commit brings: of every item of a snapshot it commits, or of the items a replayed
/// journal entry inserts or changes. A target `HeadItem` that a commit inserts or changes names its
/// content here (`HeadItem.content`); the contents of the others are in their rows.
///
/// Not API: package-visible for the engines.
package struct CommitContents: Sendable {
    private enum Storage {
        /// A snapshot: item k is element k (flat) for k below the element count, then section k - count.
        case snapshot([ListSection], starts: [Int])
        /// Contents added one by one.
        case added([[UInt8]])
    }
    private var storage: Storage
    /// Whether the items' hashes are made (otherwise the commit makes those of the contents that
    /// changed, and takes the head's for the others).
    package private(set) var hashed: Bool

    package init() {
        storage = .added([])
        hashed = true
    }

    /// The content `item` brings; `nil` when it brings none (its row holds it).
    package subscript(item: HeadItem) -> [UInt8]? {
        guard item.content >= 0 else { return nil }
        let k = Int(item.content)
        switch storage {
        case .added(let contents): return contents[k]
        case .snapshot(let sections, let starts):
            let total = starts[sections.count]
            guard k < total else { return sections[k - total].model.content }
            let t = DiffPairing.section(containing: k, starts: starts)
            return sections[t].elements[k - starts[t]].content
        }
    }

    /// Adds `content`, and returns the item of `id` that brings it, hashed.
    /// - Complexity: O(content.count), to hash it.
    package mutating func add(id: String, content: [UInt8]) -> HeadItem {
        guard case .added(var contents) = storage else { preconditionFailure("contents are added to added contents") }
        storage = .added([])
        contents.append(content)
        storage = .added(contents)
        return HeadItem(
            id: id, hash: ContentHash(of: content), fingerprint: _Fingerprint.of(content), content: Int32(contents.count - 1))
    }

    /// The items of `sections`, each bringing its content, with its fingerprint and, with
    /// `hashing`, its hash (on two threads for many).
    /// - Complexity: O(total size of contents).
    package static func of(_ sections: [ListSection], hashing: Bool = true) -> (sections: [HeadSection], contents: CommitContents) {
        let starts = DiffPairing.flatStarts(sections)
        let total = starts[sections.count]
        precondition(total + sections.count < Int(Int32.max), "a snapshot holds fewer than 2^31 items")
        var contents = CommitContents()
        contents.storage = .snapshot(sections, starts: starts)
        contents.hashed = hashing
        let unhashed = ContentHash(of: [])
        @Sendable func item(_ item: ListItem, at k: Int) -> HeadItem {
            HeadItem(
                id: item.id, hash: hashing ? ContentHash(of: item.content) : unhashed, fingerprint: _Fingerprint.of(item.content),
                content: Int32(k))
        }
        // Sections split between two threads, each making its sections' items.
        let heads = _TwoThreads.array(count: sections.count, threshold: total >= 4096 ? 2 : .max) {
            (range, base: UnsafeMutablePointer<HeadSection>) in
            for t in range {
                var elements: [HeadItem] = []
                elements.reserveCapacity(sections[t].elements.count)
                sections[t].elements.withUnsafeBufferPointer { source in
                    for e in source.indices { elements.append(item(source[e], at: starts[t] + e)) }
                }
                (base + t).initialize(to: HeadSection(model: item(sections[t].model, at: total + t), elements: elements))
            }
        }
        return (heads, contents)
    }

    /// The stages of `changeset` with items that bring their contents, and those contents added to `to`.
    /// - Complexity: O(operations + size of the contents they bring), to hash them.
    package static func bringing(
        _ changeset: ListChangeset, adding to: CommitContents = CommitContents()
    ) -> (changeset: StagedChangeset<HeadItem, HeadItem>, contents: CommitContents) {
        final class Collected {
            var contents: CommitContents
            init(_ contents: CommitContents) { self.contents = contents }
            func add(_ item: ListItem) -> HeadItem { contents.add(id: item.id, content: item.content) }
        }
        let collected = Collected(to)
        let mapped = changeset.map(model: collected.add, element: collected.add)
        return (mapped, collected.contents)
    }

    /// The stages of `changeset` with the items they bring as `ListItem`s; `nil` when one of them
    /// brings no content (an item a merge did not read).
    /// - Complexity: O(operations); the contents are shared.
    package func broughtItems(of changeset: StagedChangeset<HeadItem, HeadItem>) -> ListChangeset? {
        func brings(_ item: HeadItem) -> Bool { self[item] != nil }
        for stage in changeset.stages {
            guard stage.sectionInserted.allSatisfy({ brings($0.section.model) && $0.section.elements.allSatisfy(brings) }),
                stage.sectionUpdated.allSatisfy({ brings($0.model) }), stage.elementInserted.allSatisfy({ brings($0.element) }),
                stage.elementUpdated.allSatisfy({ brings($0.element) })
            else { return nil }
        }
        return items(of: changeset)
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
