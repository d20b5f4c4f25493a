import ListJSON

/// One intent a rebase could not honour as written, or one change of theirs that mine's intents
/// undid (see <doc:OfflineWritesAndConflicts>). A rebase never drops anything silently: every such
/// case is one `Conflict`.
///
/// | kind | when | `mine` / `theirs` |
/// |---|---|---|
/// | `deleted` | mine updates or moves a section or element that theirs deleted; the intent is dropped | mine's content when the intent carries one |
/// | `sectionDeleted` | mine inserts or moves an element into a section that theirs deleted; dropped | mine's content for an insert |
/// | `removedWithSection` | mine deletes a section that holds an element mine did not know there (theirs put it there); it goes with the section | theirs' content |
/// | `contentConflict` | both changed the content of the same item differently; mine wins (for JSON objects, on each key both changed, named in `key`) | both values (a side that removed the key has none) |
/// | `listDeleted` | mine's change was to a list theirs deleted; dropped with the list (reported by clients) | the change |
/// | `unknownSection` | mine names a section the list never had (a source that keeps the sections deleted from its lists reports it instead of `deleted` or `sectionDeleted`); dropped | mine's content when the intent carries one |
///
/// `section` names the element's section (mine's for intents, the deleted one for
/// `removedWithSection`) and is absent for conflicts about a section itself.
///
/// ```swift
/// let conflict = Conflict(.contentConflict, "m1", section: "today", key: "text", mine: "a", theirs: "b")
/// conflict.jsonValue.serialized()
/// // {"id":"m1","key":"text","kind":"contentConflict","mine":"a","section":"today","theirs":"b"}
/// ```
public struct Conflict: Hashable, Sendable, CustomStringConvertible {
    /// Why the conflict is reported.
    public enum Kind: String, Hashable, Sendable, CaseIterable {
        /// Mine's update or move of an item that theirs deleted was dropped.
        case deleted
        /// Mine's insert or move of an element into a section that theirs deleted was dropped.
        case sectionDeleted
        /// An element that theirs put into a section was removed by mine's delete of the section.
        case removedWithSection
        /// Both sides changed the same content; mine's value was kept.
        case contentConflict
        /// Mine's change was to a list that theirs deleted: it was dropped with the list (`mine` is
        /// the change, an intent's JSON form).
        case listDeleted
        /// Mine's intent named a section the list never had: an insert or move of an element into
        /// it, or a move or update of it (then `item` is the section). It was dropped. A rebase
        /// alone cannot tell this from a section theirs deleted; a store that keeps the sections
        /// deleted from a list (every store does for lists created with SQLite schema 9 or PostgreSQL
        /// schema 7 or later, replica lists excepted) reports it in place of `sectionDeleted` or
        /// `deleted`. Its JSON form is the rebase's kind with `"unknownSection": true` (see
        /// `jsonValue`), which earlier releases read as before.
        case unknownSection
    }

    /// Why the conflict is reported.
    public var kind: Kind
    /// The section or element concerned.
    public var item: ItemRef
    /// For an element, its section; `nil` for a section.
    public var section: ItemRef?
    /// For a key-by-key content merge, the object key both sides changed.
    public var key: String?
    /// Mine's value (content, or the key's value), when there is one.
    public var mine: JSONValue?
    /// Theirs' value (content, or the key's value), when there is one.
    public var theirs: JSONValue?

    /// Creates a conflict.
    public init(
        _ kind: Kind, _ item: ItemRef, section: ItemRef? = nil, key: String? = nil, mine: JSONValue? = nil,
        theirs: JSONValue? = nil
    ) {
        self.kind = kind
        self.item = item
        self.section = section
        self.key = key
        self.mine = mine
        self.theirs = theirs
    }

    /// The canonical JSON text of `jsonValue`.
    public var description: String { jsonValue.serialized() }
}
