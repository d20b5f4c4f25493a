import Foundation
import ListJSON
import ListMerge

/// One version in a list's journal: what changed from its parent version, when, by whom.
///
/// The changeset is kept as the JSON array of stage objects the store wrote (ListStore's article “The store file”):
/// updates name their item by position only, so decoding the stages needs the snapshot they apply
/// to.
///
/// ```swift
/// var replica = try store.snapshot(of: "inbox", at: 0).sections
/// for entry in try store.journal(of: "inbox").entries {
///     let (changeset, next) = try entry.changeset(applyingTo: replica)
///     for stage in changeset { /* animate stage */ }
///     replica = next
/// }
/// ```
public struct JournalEntry: Sendable, Hashable {
    /// The list.
    public var list: String
    /// The version this entry creates.
    public var version: Int
    /// The version it was committed on top of (`version - 1`).
    public var parentVersion: Int
    /// When it was committed, as stored: ISO 8601, UTC, milliseconds (`2026-11-21T09:30:00.125Z`).
    public var committedAt: String
    /// The digest of the list at `version`.
    public var digest: ListDigest
    /// Who committed it, if they said.
    public var author: String?
    /// Why, if they said.
    public var message: String?
    /// The number of sections at `version`.
    public var sectionCount: Int
    /// The number of elements at `version`.
    public var elementCount: Int
    /// The staged changeset as a JSON array of stage objects (UTF-8).
    public var stagesJSON: [UInt8]
    /// For a version a replica's push made: its client id and sequence number.
    public var pushID: PushID?
    /// For a version a push made: what its merge could not honour as written (empty otherwise).
    public var conflicts: [Conflict]

    /// An entry, as a store or a network source describes it.
    public init(
        list: String, version: Int, parentVersion: Int, committedAt: String, digest: ListDigest, author: String?,
        message: String?, sectionCount: Int, elementCount: Int, stagesJSON: [UInt8], pushID: PushID? = nil,
        conflicts: [Conflict] = []
    ) {
        self.pushID = pushID
        self.conflicts = conflicts
        self.list = list
        self.version = version
        self.parentVersion = parentVersion
        self.committedAt = committedAt
        self.digest = digest
        self.author = author
        self.message = message
        self.sectionCount = sectionCount
        self.elementCount = elementCount
        self.stagesJSON = stagesJSON
    }

    /// `committedAt` as a date.
    public var committedDate: Date? { _Time.date(committedAt) }

    /// Decodes the stages and applies them to `state`, the list at `parentVersion`.
    ///
    /// - Returns: the changeset and the list at `version`.
    /// - Throws: `StoreError.damaged` when the stored JSON does not decode or does not apply to
    ///   `state`.
    /// - Complexity: O(operations + stages × sections + elements of touched sections).
    public func changeset(applyingTo state: [ListSection]) throws -> (changeset: ListChangeset, result: [ListSection]) {
        do {
            let value = try JSONParser().parse(stagesJSON)
            return try StageDocument.decodeStages(value, applyingTo: state)
        } catch {
            throw StoreError(.damaged, "journal entry \(version) of list '\(list)' does not replay: \(error)")
        }
    }
}

/// Journal entries after a version, at most a limit of them.
public struct JournalPage: Sendable, Hashable {
    /// The entries, oldest first.
    public var entries: [JournalEntry]
    /// Whether more entries follow the last one.
    public var hasMore: Bool
    /// The identity of the list read (`ListSummary.id`), when the source tells it: a reader that
    /// goes on page after page tells a list deleted and made again under its name from the one it
    /// started with.
    public var listID: String?
    /// The list's head and oldest retained version as the page was read, when the source tells
    /// them: a follower learns from the page alone whether it is at the head, behind, or past what
    /// the source retains.
    public var head: Head?
    /// The identity of the store read, when the source tells it (read with the page, in one
    /// transaction): a follower tells another store, or a new epoch of its own, from the page alone.
    public var store: StoreIdentity?

    /// The entry that comes next when it is larger than the reader's bound (`maxEntryBytes`): the
    /// page then holds no entry, and the reader resyncs in pages instead (`ResyncReason.tooLarge`).
    public var tooLarge: TooLarge?

    /// An entry too large for a reader: its version and the bytes of its stages.
    public struct TooLarge: Sendable, Hashable {
        /// The entry's version.
        public var version: Int
        /// The bytes of its stages.
        public var bytes: Int

        /// An entry's size.
        public init(version: Int, bytes: Int) {
            self.version = version
            self.bytes = bytes
        }
    }

    /// A list's head version and digest, and its oldest retained version, as a page was read.
    public struct Head: Sendable, Hashable {
        /// The head version.
        public var version: Int
        /// The head's digest.
        public var digest: ListDigest
        /// The oldest version the journal retains (`ListSummary.baseVersion`).
        public var baseVersion: Int

        /// A head.
        public init(version: Int, digest: ListDigest, baseVersion: Int) {
            self.version = version
            self.digest = digest
            self.baseVersion = baseVersion
        }
    }

    /// A page.
    public init(entries: [JournalEntry], hasMore: Bool, listID: String? = nil, head: Head? = nil, store: StoreIdentity? = nil) {
        self.entries = entries
        self.hasMore = hasMore
        self.listID = listID
        self.head = head
        self.store = store
    }
}
