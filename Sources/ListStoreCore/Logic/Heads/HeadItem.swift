import ListDiff
import ListJSON

/// A section or element of a list's head as a store holds it in memory: its id and the hash of its
/// content, not the content (the rows hold it). Two items show the same content exactly when their
/// hashes are equal, so the diff, the replay of stages and the digest need nothing else.
///
/// An item a commit made in this process also has the content's fingerprint (`_Fingerprint`): a
/// commit of a snapshot onto a head whose items all have one compares fingerprints, and hashes only
/// the contents that changed. An item that a commit brings (inserted, or with new content) also says
/// where its content is among the commit's contents (`CommitContents`).
///
/// Not API: package-visible for the engines.
package struct HeadItem: Differentiable, Sendable {
    /// Who the item is (compared byte for byte, as `ListItem.id`).
    package var id: String
    /// The SHA-256 of its content (all zero in a commit's target until the commit hashes it, when
    /// fingerprints are compared).
    package var hash: ContentHash
    /// The content's fingerprint in this process; 0 when unknown (an item read from rows).
    package var fingerprint: UInt64
    /// Where the content of an item a commit brings is in its `CommitContents`; -1 for an item that
    /// brings none (every item of a head: `kept`).
    package var content: Int32

    package init(id: String, hash: ContentHash, fingerprint: UInt64 = 0, content: Int32 = -1) {
        self.id = id
        self.hash = hash
        self.fingerprint = fingerprint
        self.content = content
    }

    /// The id, compared byte for byte.
    @inlinable
    package var differenceIdentifier: ExactString { ExactString(id) }

    /// The item as a head keeps it: bringing no content.
    package var kept: HeadItem { HeadItem(id: id, hash: hash, fingerprint: fingerprint) }

    /// Whether the contents are the same: their fingerprints are when both have one, else their hashes.
    @inlinable
    package func isContentEqual(to source: HeadItem) -> Bool {
        fingerprint != 0 && source.fingerprint != 0 ? fingerprint == source.fingerprint : hash == source.hash
    }
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
