/// An error of the store: a code to match on, a message for people, and details where they apply.
///
/// ```swift
/// do {
///     try store.commit(sections, to: "inbox", expectedVersion: 7)
/// } catch let error as StoreError where error.code == .versionConflict {
///     // someone else committed version 8 first: reload and retry
/// }
/// ```
public struct StoreError: Error, Sendable, CustomStringConvertible {
    /// What went wrong. A struct rather than an enum, so that new codes do not break callers.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// The file exists but is not a ListStore database; it was not modified.
        public static let notAStore = Code("notAStore")
        /// The store was written by a newer release (or its schema was changed); it was not modified.
        public static let unsupportedSchema = Code("unsupportedSchema")
        /// There is no store at the path (reads never create one).
        public static let storeNotFound = Code("storeNotFound")
        /// The store is damaged: SQLite reports corruption, or the data does not hold together.
        public static let damaged = Code("damaged")
        /// Reading or writing the file failed.
        public static let io = Code("io")
        /// The disk (or the database) that holds the store has no room for the write: SQLite's
        /// "database or disk is full", PostgreSQL's `disk_full`, or a blob's part that would leave
        /// a SQLite store with less room than it keeps for other writes (16 MiB by default). Nothing
        /// was changed by the write; an upload it stopped is given up when the store can still
        /// write. Free some space, then try again.
        public static let storageFull = Code("storageFull")
        /// No list has that name.
        public static let listNotFound = Code("listNotFound")
        /// The version is not in the list's retained history.
        public static let versionNotFound = Code("versionNotFound")
        /// A store feed position is older than the feed the store retains (a list's journal was
        /// pruned past it), or past the feed's end: read the lists concerned anew.
        public static let cursorExpired = Code("cursorExpired")
        /// A store feed cursor is of another history of the store: the store was restored from a
        /// backup without `advanceEpoch()`, and the cursor's position now names another event. Read
        /// the lists concerned anew.
        public static let cursorOfAnotherHistory = Code("cursorOfAnotherHistory")
        /// The list's head is not the expected version: another writer got there first.
        public static let versionConflict = Code("versionConflict")
        /// An item's content is not canonical JSON, or a snapshot is otherwise unusable.
        public static let invalidSnapshot = Code("invalidSnapshot")
        /// A list name is empty or too long.
        public static let invalidListName = Code("invalidListName")
        /// An edit addressed an item that does not exist.
        public static let invalidEdit = Code("invalidEdit")
        /// An argument is out of range: a negative count, an empty or overlong consumer name.
        public static let invalidArgument = Code("invalidArgument")
        /// A push's sequence number is not its client's next on the list: it skips ahead of the
        /// client's latest recorded push, or is below it and was never recorded. Nothing was applied
        /// or recorded.
        public static let pushOutOfOrder = Code("pushOutOfOrder")
        /// A push's client id and sequence number were recorded with other content: another replica
        /// pushed under the same client id (a copied file, a restored backup, a forged push). Nothing
        /// was applied; the replica takes a new client id and pushes again.
        public static let pushMismatch = Code("pushMismatch")
        /// The list is a replica with local changes its source does not hold yet: deleting it would
        /// lose them. Nothing was deleted; push them first, or say that they may go.
        public static let pendingChanges = Code("pendingChanges")
        /// A commit or a push refers to a blob (an attachment, `BlobReference`) the list does not
        /// have, or a read asks for one: upload it to the list first. Nothing was changed.
        public static let missingBlob = Code("missingBlob")
        /// The upload of a blob that this call went on with was given up meanwhile: another upload
        /// of the same blob failed (its bytes were not the blob's, or the disk had no room) and
        /// took the blob's parts with it. Nothing of this call was written. Ask where the upload
        /// stands (`blob(_:of:)`) and send the blob again from there.
        public static let uploadGivenUp = Code("uploadGivenUp")
        /// The store could not be reached, or did not finish the operation within its bound (a
        /// database restarting or failing over, every pooled connection busy, a lock held longer
        /// than the lock timeout). Nothing was changed: the same call may be tried again.
        public static let unavailable = Code("unavailable")
        /// The store was lost while it committed a change (the connection broke, or the operation's
        /// bound passed, after the commit was sent): the change may or may not have landed. Read
        /// the list to know; a push may be sent again as it is (its sequence number makes it land
        /// once), a commit with its `expectedVersion` (it lands, or is a `.versionConflict` if its
        /// first try landed).
        public static let outcomeUnknown = Code("outcomeUnknown")

        public var description: String { name }

        /// The code whose `description` is `name` (as a network source reports it), `nil` for a
        /// name this release does not know.
        public init?(named name: String) {
            let known: [Code] = [
                .notAStore, .unsupportedSchema, .storeNotFound, .damaged, .io, .storageFull, .listNotFound, .versionNotFound,
                .versionConflict, .invalidSnapshot, .invalidListName, .invalidEdit, .invalidArgument, .pushOutOfOrder,
                .pushMismatch, .pendingChanges, .missingBlob, .uploadGivenUp, .cursorExpired, .cursorOfAnotherHistory, .unavailable,
                .outcomeUnknown,
            ]
            guard let code = known.first(where: { $0.name == name }) else { return nil }
            self = code
        }

        /// Matches errors by code: `catch StoreError.Code.versionConflict`.
        public static func ~= (code: Code, error: any Error) -> Bool {
            (error as? StoreError)?.code == code
        }
    }

    /// What went wrong.
    public var code: Code
    /// One line for people.
    public var message: String
    /// For `.versionConflict`: the version the caller expected.
    public var expectedVersion: Int?
    /// For `.versionConflict`: the list's actual head version.
    public var currentVersion: Int?

    /// Creates an error.
    public init(_ code: Code, _ message: String, expectedVersion: Int? = nil, currentVersion: Int? = nil) {
        self.code = code
        self.message = message
        self.expectedVersion = expectedVersion
        self.currentVersion = currentVersion
    }

    /// `message`.
    public var description: String { message }
}

extension StoreError {
    /// The error for a list that does not exist, the same on every engine (and, on a journal server,
    /// for a list the token may not read).
    /// - Complexity: O(1).
    package static func listNotFound(_ list: String, in location: String) -> StoreError {
        StoreError(.listNotFound, "no list named '\(list)' in \(location)")
    }
}
