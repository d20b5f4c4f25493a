/// Which journal entries `Store.prune` drops.
public enum PruneRule: Hashable, Sendable {
    /// Keep the last `n` entries: the oldest retained version becomes head − n.
    case keepLast(Int)
    /// Drop the history before `version`: it becomes the oldest retained version.
    case before(Int)
}

/// What `Store.prune` did.
public struct PruneResult: Hashable, Sendable {
    /// The list.
    public var list: String
    /// The oldest retained version before and after pruning.
    public var previousBase: Int
    public var base: Int
    /// The head (unchanged).
    public var head: Int
    /// Journal entries removed.
    public var removedEntries: Int
    /// Registered consumers whose acknowledged version held pruning back (empty when forced).
    public var heldBy: [String]
    /// Rows of the record of pushes removed: each client's pushes merged up to the new base, but its
    /// latest, are folded into one row that still answers a retry of any of them, and keeps their
    /// fingerprints (their conflict reports go with the journal).
    public var removedPushRecords: Int
    /// Blobs the list no longer has: the dropped versions referred to them, and no kept version or
    /// pending change does (their bytes go when no other list has them).
    public var releasedBlobs: Int
    /// Uploads to the list given up: they sent nothing for a week (their parts go unless another
    /// upload of the same blob goes on).
    public var abandonedUploads: Int

    /// A result (engines other than `Store` make theirs).
    ///
    /// ```swift
    /// PruneResult(list: "inbox", previousBase: 0, base: 40, head: 50, removedEntries: 40, heldBy: [])
    /// ```
    public init(list: String, previousBase: Int, base: Int, head: Int, removedEntries: Int, heldBy: [String], removedPushRecords: Int = 0, releasedBlobs: Int = 0, abandonedUploads: Int = 0) {
        self.list = list
        self.previousBase = previousBase
        self.base = base
        self.head = head
        self.removedEntries = removedEntries
        self.heldBy = heldBy
        self.removedPushRecords = removedPushRecords
        self.releasedBlobs = releasedBlobs
        self.abandonedUploads = abandonedUploads
    }
}

extension PruneRule {
    /// The oldest version to retain in the list `info` describes under this rule, and the
    /// consumers (their names) whose acknowledged version holds it back (none when `force`).
    ///
    /// Not API (package-visible: both engines prune by it).
    /// - Throws: `StoreError` `.invalidArgument` (a negative count), `.versionNotFound` (`before` a
    ///   version outside the history).
    package func base(for info: ListRow, consumers: [ConsumerInfo], force: Bool) throws -> (base: Int, heldBy: [String]) {
        var base: Int
        switch self {
        case .keepLast(let count):
            guard count >= 0 else {
                throw StoreError(.invalidArgument, "--keep-last needs a count of 0 or more, not \(count)")
            }
            base = max(info.baseVersion, info.headVersion - count)
        case .before(let version):
            try info.checkRetained(version)
            base = version
        }
        guard !force else { return (base, []) }
        let holding = consumers.filter { $0.version < base }
        if let lowest = holding.map(\.version).min() {
            base = max(info.baseVersion, lowest)
            return (base, holding.map(\.name))
        }
        return (base, [])
    }
}
