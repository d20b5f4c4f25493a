import ListJSON

/// One change mine made to a list, said by identity rather than by index, so that it can be replayed
/// onto a list that others changed meanwhile (see <doc:OfflineWritesAndConflicts>).
///
/// Intents come from two snapshots through the diff's pairing (`Intent.changes(from:to:)`) and are
/// applied with `Rebase`. Items are named by `ItemRef` (id and, for repeated ids, ordinal). Anchors
/// `after` / `before` are the item's neighbours in mine's order (within its section for elements);
/// `nil` is an end of the container: `after: nil` is its start, `before: nil` its end.
///
/// ```swift
/// let intent = Intent.moveElement("m3", section: "today", after: "m1", before: nil)
/// intent.jsonValue.serialized()
/// // {"after":"m1","before":null,"id":"m3","op":"moveElement","section":"today"}
/// ```
public enum Intent: Hashable, Sendable {
    /// Delete a section and the elements in it when the intent is applied. `elements` are the section's
    /// elements in the base: any other element found in it is reported as removed with the section.
    case deleteSection(ItemRef, elements: [ItemRef])
    /// Insert a section with its elements, placed by its anchors (sections adjacent in mine).
    case insertSection(ItemRef, content: JSONValue, elements: [Element], after: ItemRef?, before: ItemRef?)
    /// Move a section next to its anchors.
    case moveSection(ItemRef, after: ItemRef?, before: ItemRef?)
    /// Change a section's content from `base` to `content`.
    case updateSection(ItemRef, base: JSONValue, content: JSONValue)
    /// Delete an element wherever it is.
    case deleteElement(ItemRef)
    /// Insert an element into `section`, placed by its anchors (elements adjacent in mine's section).
    case insertElement(ItemRef, content: JSONValue, section: ItemRef, after: ItemRef?, before: ItemRef?)
    /// Move an element into `section` (the same or another), next to its anchors.
    case moveElement(ItemRef, section: ItemRef, after: ItemRef?, before: ItemRef?)
    /// Change an element's content from `base` to `content`; `section` is where it is in mine (for the
    /// conflict report).
    case updateElement(ItemRef, section: ItemRef, base: JSONValue, content: JSONValue)

    /// An element of an inserted section: its reference and content.
    public struct Element: Hashable, Sendable {
        /// The element.
        public var ref: ItemRef
        /// Its content.
        public var content: JSONValue

        /// Creates an element of an inserted section.
        public init(_ ref: ItemRef, content: JSONValue = .null) {
            self.ref = ref
            self.content = content
        }
    }

    /// The item the intent is about (a section for the section operations, an element otherwise).
    public var ref: ItemRef {
        switch self {
        case .deleteSection(let ref, _), .insertSection(let ref, _, _, _, _), .moveSection(let ref, _, _),
            .updateSection(let ref, _, _), .deleteElement(let ref), .insertElement(let ref, _, _, _, _),
            .moveElement(let ref, _, _, _), .updateElement(let ref, _, _, _):
            ref
        }
    }

    /// Whether the intent is about a section (rather than an element).
    public var isSectionIntent: Bool {
        switch self {
        case .deleteSection, .insertSection, .moveSection, .updateSection: true
        case .deleteElement, .insertElement, .moveElement, .updateElement: false
        }
    }

    /// The operation's name, as the `op` key of its JSON object writes it (`"moveElement"`, …).
    public var op: String {
        switch self {
        case .deleteSection: "deleteSection"
        case .insertSection: "insertSection"
        case .moveSection: "moveSection"
        case .updateSection: "updateSection"
        case .deleteElement: "deleteElement"
        case .insertElement: "insertElement"
        case .moveElement: "moveElement"
        case .updateElement: "updateElement"
        }
    }
}

extension Intent: CustomStringConvertible {
    /// The canonical JSON text of `jsonValue`.
    public var description: String { jsonValue.serialized() }
}
