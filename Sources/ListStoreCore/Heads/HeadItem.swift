import ListDiff
import ListJSON

/// A section or element of a list's head as a store holds it in memory: its id and the hash of its
/// content, not the content (the rows hold it). Two items show the same content exactly when their
/// hashes are equal, so the diff, the replay of stages and the digest need nothing else.
///
/// An item that a commit brings (inserted, or with new content) also says where its content is among
/// the commit's contents (`CommitContents`); an item of a head read from rows has none.
///
/// Not API: package-visible for the engines.
package struct HeadItem: Differentiable, Sendable {
    /// Who the item is (compared byte for byte, as `ListItem.id`).
    package var id: String
    /// The SHA-256 of its content.
    package var hash: ContentHash
    /// Where a commit's new content of the item is in its `CommitContents`; -1 when the content is
    /// the one in its row.
    package var content: Int32

    package init(id: String, hash: ContentHash, content: Int32 = -1) {
        self.id = id
        self.hash = hash
        self.content = content
    }

    /// The id, compared byte for byte.
    @inlinable
    package var differenceIdentifier: ExactString { ExactString(id) }

    /// Whether the contents are the same (their hashes are).
    @inlinable
    package func isContentEqual(to source: HeadItem) -> Bool { hash == source.hash }

    /// The item as it is kept in a head: without a place among a commit's contents.
    package var kept: HeadItem { HeadItem(id: id, hash: hash) }
}

/// A section of a head: its item and its elements' items.
package typealias HeadSection = ArraySection<HeadItem, HeadItem>

extension Array where Element == HeadSection {
    /// Whether the two heads hold the same ids and content hashes in the same places.
    /// - Complexity: O(n).
    package func isSameList(as other: [HeadSection]) -> Bool {
        guard count == other.count else { return false }
        for (a, b) in zip(self, other) {
            guard ExactString(a.model.id) == ExactString(b.model.id), a.model.hash == b.model.hash,
                a.elements.count == b.elements.count
            else { return false }
            for (x, y) in zip(a.elements, b.elements) where ExactString(x.id) != ExactString(y.id) || x.hash != y.hash {
                return false
            }
        }
        return true
    }
}
