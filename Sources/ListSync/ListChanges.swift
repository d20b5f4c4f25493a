import ListStore

/// One commit delivered to a consumer: the journal entry, and the cursor after it.
public struct ListChange: Sendable, Hashable {
    /// The cursor once this commit is applied.
    public var cursor: Cursor
    /// The commit: version, parent, digest, time, author, message, stages.
    public var entry: JournalEntry
}

extension ListSource {
    /// The commits of `cursor.list` after `cursor`: the backlog first, then each new commit as it
    /// lands, exactly once and in order, until the task is cancelled.
    ///
    /// ```swift
    /// var cursor = savedCursor ?? (try await source.cursor(of: "inbox"))
    /// for try await change in source.changes(after: cursor) {
    ///     var state = mySnapshot
    ///     let (changeset, next) = try change.entry.changeset(applyingTo: state)
    ///     for stage in changeset { /* one batch update each */ }
    ///     save(next, change.cursor)        // in the same transaction as the data
    /// }
    /// ```
    ///
    /// Iterating throws `SyncError.resyncRequired` when the cursor cannot be followed here: another
    /// store (`.differentStore`), a reset or restored one (`.epochChanged`), history pruned past it
    /// (`.pruned`), or a version newer than the head (`.aheadOfSource`); errors of the source as they
    /// come.
    ///
    /// - Parameters:
    ///   - pageSize: entries read per request.
    ///   - wait: how long one wait for a new commit lasts before the source is asked again.
    public func changes(after cursor: Cursor, pageSize: Int = 100, wait: Duration = .seconds(30)) -> ListChanges<Self> {
        ListChanges(source: self, cursor: cursor, pageSize: max(1, pageSize), wait: wait)
    }
}

/// The commits after a cursor, as an `AsyncSequence` (see `ListSource.changes(after:)`).
public struct ListChanges<Source: ListSource>: AsyncSequence, Sendable {
    public typealias Element = ListChange

    let source: Source
    let cursor: Cursor
    let pageSize: Int
    let wait: Duration

    public func makeAsyncIterator() -> Iterator {
        Iterator(source: source, cursor: cursor, pageSize: pageSize, wait: wait)
    }

    /// Reads pages of the journal, and waits for commits when it has delivered them all.
    public struct Iterator: AsyncIteratorProtocol {
        let source: Source
        var cursor: Cursor
        let pageSize: Int
        let wait: Duration
        var buffer: [JournalEntry] = []

        public mutating func next() async throws -> ListChange? {
            while buffer.isEmpty {
                if Task.isCancelled { return nil }
                let identity = try await source.identity()
                if let (reason, message) = try await source.resyncReason(for: cursor, identity: identity) {
                    throw SyncError.resyncRequired(reason, message: message)
                }
                let page = try await source.journal(of: cursor.list, after: cursor.version, limit: pageSize)
                buffer = page.entries.reversed()
                if buffer.isEmpty {
                    _ = try await source.waitForCommit(to: cursor.list, after: cursor.version, timeout: wait)
                }
            }
            let entry = buffer.removeLast()
            guard entry.parentVersion == cursor.version else {
                throw SyncError.resyncRequired(
                    .digestMismatch, message: "version \(entry.version) follows \(entry.parentVersion), not \(cursor.version)")
            }
            cursor.version = entry.version
            return ListChange(cursor: cursor, entry: entry)
        }
    }
}
