/// A page of a list's head at one version: what a first sync or a resync copies, page after page,
/// so that no answer and no read holds the whole list (ListStoreCore's article "Lists of Any Size").
///
/// A list's state is its records in order: each section's record followed by its elements'. A page
/// holds a run of them (a section's elements may go on in the next page), at most about the bytes a
/// reader asked for but always at least one record; `next` is where the following page starts, `nil`
/// on the last. Every page names its version and digest and the list's totals, so that a reader
/// knows its progress exactly and tells a page of another version or store from the one it expects.
///
/// ```swift
/// var cursor: ListPage.Cursor? = nil
/// var version: Int? = nil
/// repeat {
///     let page = try await store.page(of: "inbox", at: version, after: cursor, maxBytes: 4 << 20)
///     (version, cursor) = (page.version, page.next)
/// } while cursor != nil
/// ```
public struct ListPage: Sendable, Hashable {
    /// The list read.
    public var list: String
    /// The version all pages of one read are at.
    public var version: Int
    /// That version's digest: what the records of all pages, in order, hash to.
    public var digest: ListDigest
    /// The list's identity (`ListSummary.id`).
    public var listID: String?
    /// The store read.
    public var store: StoreIdentity
    /// The list's sections at `version`, in all.
    public var sectionCount: Int
    /// The list's elements at `version`, in all.
    public var elementCount: Int
    /// Where this page starts (`nil`: the first page).
    public var after: Cursor?
    /// The records, in list order.
    public var records: [Record]
    /// Where the next page starts; `nil` on the last page.
    public var next: Cursor?

    /// A page.
    public init(
        list: String, version: Int, digest: ListDigest, listID: String?, store: StoreIdentity, sectionCount: Int, elementCount: Int,
        after: Cursor?, records: [Record], next: Cursor?
    ) {
        self.list = list
        self.version = version
        self.digest = digest
        self.listID = listID
        self.store = store
        self.sectionCount = sectionCount
        self.elementCount = elementCount
        self.after = after
        self.records = records
        self.next = next
    }

    /// One record: a section's model, or an element of the section whose record came last.
    public struct Record: Sendable, Hashable {
        /// Whether it is a section's record (otherwise an element's).
        public var isSection: Bool
        /// The section's model or the element.
        public var item: ListItem

        /// A record.
        public init(isSection: Bool, item: ListItem) {
            self.isSection = isSection
            self.item = item
        }

        /// About the bytes the record takes on the wire: its id, its content and some framing.
        package var size: Int { item.id.utf8.count + item.content.count + 32 }
    }

    /// Where a page starts: an opaque text the store that gave it reads (valid for the page's
    /// version of the list only).
    public struct Cursor: Sendable, Hashable, CustomStringConvertible {
        /// The text.
        public var description: String

        /// A cursor from its text, as a page gave it.
        public init(_ text: String) {
            description = text
        }

        /// After the record at `section` (a section's position among the stored rows) and `element`
        /// (an element's position in it; `nil`: the section's own record).
        package init(section: Int64, element: Int64?) {
            description = element.map { "\(section).\($0)" } ?? "\(section)"
        }

        /// The positions of `init(section:element:)`, or `nil` for a text that is not a cursor.
        package var positions: (section: Int64, element: Int64?)? {
            let parts = description.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count <= 2, let section = Int64(parts[0]) else { return nil }
            if parts.count == 1 { return (section, nil) }
            guard let element = Int64(parts[1]) else { return nil }
            return (section, element)
        }
    }

    /// The records' approximate bytes (see `Record`).
    package var size: Int { records.reduce(0) { $0 + $1.size } }
}
