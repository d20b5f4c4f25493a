import ListMerge

/// What a commit did.
public struct CommitResult: Sendable {
    /// The list.
    public var list: String
    /// The list's head version after the commit (unchanged when nothing changed; 0 for a list that
    /// has no version yet).
    public var version: Int
    /// The version before the commit.
    public var parentVersion: Int
    /// Whether a new version was written (`false` when the snapshot equals the head).
    public var changed: Bool
    /// The digest of the head after the commit.
    public var digest: ListDigest
    /// The number of stages in the recorded changeset.
    public var stageCount: Int
    /// The number of operations in the recorded changeset.
    public var changeCount: Int
    /// The recorded changeset (empty when nothing changed).
    public var changeset: ListChangeset
    /// The number of table rows inserted, updated or deleted (head rows, journal entry, list row).
    public var rowsWritten: Int
    /// For a local change of a replica list: its sequence number in the outbox, where it
    /// is pending until a push; `nil` for other commits.
    public var pendingSeq: Int? = nil
    /// For a merged push: the conflicts of its merge.
    package var mergeConflicts: [Conflict]? = nil
}

extension CommitResult {
    /// A result as an engine reports it (package-visible for ListStorePostgres).
    package init(
        list: String, version: Int, parentVersion: Int, changed: Bool, digest: ListDigest, stageCount: Int, changeCount: Int,
        changeset: ListChangeset, rowsWritten: Int, mergeConflicts: [Conflict]? = nil
    ) {
        self.list = list
        self.version = version
        self.parentVersion = parentVersion
        self.changed = changed
        self.digest = digest
        self.stageCount = stageCount
        self.changeCount = changeCount
        self.changeset = changeset
        self.rowsWritten = rowsWritten
        self.mergeConflicts = mergeConflicts
    }
}
