/// A replica list's paged sync under way (a first sync or a resync, ListStoreCore's article "Lists
/// of Any Size"): what it copies, from which store, and how far it got. Its pages land in the
/// replica's store, each in its own transaction; the replica becomes `version` in one transaction
/// when the last one has landed, which ends the sync (system programming interface `Replication`).
@_spi(Replication) public struct StagedSync: Sendable, Hashable {
    /// The store copied from.
    public var store: StoreIdentity
    /// The list copied (the source's name of it).
    public var sourceList: String
    /// The list's identity at the source, when it tells it.
    public var listID: String?
    /// The version every page is at.
    public var version: Int
    /// Its digest.
    public var digest: ListDigest
    /// The list's sections at `version`, in all.
    public var sectionCount: Int
    /// The list's elements at `version`, in all.
    public var elementCount: Int
    /// The source's cursor of the next page; `nil` once the last page has landed.
    public var next: ListPage.Cursor?
    /// The records landed so far (sections and elements).
    public var records: Int
    /// The elements landed so far.
    public var elements: Int
    /// About the bytes landed so far (`ListPage.Record`'s measure).
    public var bytes: Int
    /// The bytes of the journal entry that the records landed so far make (the one stage of
    /// `_SectionsWriter.copyEntry()`, without the end of the last section and of the entry), so
    /// that the last transaction writes the entry in one read of the rows.
    package var entryBytes = 0
    /// Why the replica syncs in pages (a `ResyncReason`'s raw value, or `firstSync`).
    public var reason: String
    /// When the sync started (ISO 8601).
    public var startedAt: String

    /// A sync that starts with `page`, its first page (none of it landed yet).
    public init(starting page: ListPage, reason: String, startedAt: String) {
        store = page.store
        sourceList = page.list
        listID = page.listID
        version = page.version
        digest = page.digest
        sectionCount = page.sectionCount
        elementCount = page.elementCount
        next = nil
        records = 0
        elements = 0
        bytes = 0
        self.reason = reason
        self.startedAt = startedAt
    }

    /// Whether every record has landed.
    public var isComplete: Bool { records == sectionCount + elementCount }
}
