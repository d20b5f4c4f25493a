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
    /// The commits come from `commits(of:after:pageSize:wait:)`: from `HTTPSource`, one event stream
    /// that the server writes each commit to; from a store of this process, pages of its journal.
    ///
    /// Iterating throws `SyncError.resyncRequired` when the cursor cannot be followed here (checked
    /// when iterating starts, and again when the source no longer has the cursor's version): another
    /// store (`.differentStore`), a reset or restored one (`.epochChanged`), history pruned past it
    /// (`.pruned`), or a version newer than the head (`.aheadOfSource`); `.digestMismatch` when a
    /// commit does not follow the one before; errors of the source as they come (iterating again
    /// after one starts over from the last commit delivered).
    ///
    /// - Parameters:
    ///   - cursor: where to start: the commits after its version, of its store and list.
    ///   - pageSize: entries read per request, when the source is read page by page.
    ///   - wait: how long one wait for a new commit lasts before the source is asked again, when the
    ///     source is read page by page.
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

    /// Checks the cursor against the source, then reads the source's commits after it
    /// (`ListSource.commits(of:after:pageSize:wait:)`: one event stream from a server).
    public struct Iterator: AsyncIteratorProtocol {
        let source: Source
        var cursor: Cursor
        let pageSize: Int
        let wait: Duration
        var commits: AsyncThrowingStream<JournalEntry, any Error>.AsyncIterator?

        init(source: Source, cursor: Cursor, pageSize: Int, wait: Duration) {
            self.source = source
            self.cursor = cursor
            self.pageSize = pageSize
            self.wait = wait
        }

        public mutating func next() async throws -> ListChange? {
            if Task.isCancelled { return nil }
            if commits == nil {
                try await checkCursor()
                commits = source.commits(of: cursor.list, after: cursor.version, pageSize: pageSize, wait: wait).makeAsyncIterator()
            }
            let entry: JournalEntry?
            do {
                entry = try await commits?.next()
            } catch StoreError.Code.versionNotFound {
                commits = nil
                try await checkCursor()  // pruned meanwhile: a resync
                throw StoreError(.versionNotFound, "version \(cursor.version) of '\(cursor.list)' is not in the source's history")
            } catch {
                commits = nil
                throw error
            }
            guard let entry else {
                commits = nil
                return nil  // cancelled
            }
            guard entry.parentVersion == cursor.version else {
                commits = nil
                throw SyncError.resyncRequired(
                    .digestMismatch, message: "version \(entry.version) follows \(entry.parentVersion), not \(cursor.version)")
            }
            cursor.version = entry.version
            return ListChange(cursor: cursor, entry: entry)
        }

        /// Throws `SyncError.resyncRequired` when the cursor cannot be followed in the source.
        private func checkCursor() async throws {
            let identity = try await source.identity()
            if let (reason, message) = try await source.resyncReason(for: cursor, identity: identity) {
                throw SyncError.resyncRequired(reason, message: message)
            }
        }
    }
}
