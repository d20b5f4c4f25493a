import ListStore

/// The journal of a list in a source read page by page on demand: a page when the last is used up,
/// and at the head a wait for the next commit (`ListSource.waitForCommit`), the page read once a
/// wait sees one. What
/// `ListSource.commits(of:after:pageSize:wait:)` reads by default, and `HTTPSource` reads the
/// backlog with before its event stream.
///
/// ```swift
/// let pager = _JournalPager(source, list: "inbox", after: 41, pageSize: 100, wait: .seconds(30))
/// let entry = try await pager.next(waitingAtHead: true)     // version 42, once it exists
/// ```
final class _JournalPager<Source: ListSource>: @unchecked Sendable {
    // Safe: `next(waitingAtHead:)` is called by one consumer at a time (a stream made with
    // `AsyncThrowingStream(unfolding:)` awaits each call before it makes the next).

    let source: Source
    let list: String
    let pageSize: Int
    let wait: Duration
    /// The version of the last entry read (or the one the pager started after).
    private(set) var version: Int
    /// Entries read and not handed out yet, the next one last.
    private var buffer: [JournalEntry] = []
    /// Whether the last page read reached the head.
    private var atHead = false

    init(_ source: Source, list: String, after version: Int, pageSize: Int, wait: Duration) {
        self.source = source
        self.list = list
        self.version = version
        self.pageSize = max(1, pageSize)
        self.wait = wait
    }

    /// The next entry: read from the source when none is left; at the head, `nil` unless
    /// `waitingAtHead`, in which case it waits for the next commit. `nil` also when the task is
    /// cancelled.
    /// - Throws: the source's errors.
    func next(waitingAtHead: Bool) async throws -> JournalEntry? {
        while !Task.isCancelled {
            if let entry = buffer.popLast() { return entry }
            if atHead {
                guard waitingAtHead else { return nil }
                let committed: Bool
                do {
                    committed = try await source.waitForCommit(to: list, after: version, timeout: wait)
                } catch is CancellationError {
                    return nil
                }
                // No commit: wait again rather than read a page that would be empty (behind a
                // cache, a wait without a commit is kept for every follower; a read is not). A wait
                // of zero reads the page, so that each turn asks the source something new.
                if !committed, wait > .zero { continue }
            }
            let page: JournalPage
            do {
                page = try await source.journal(of: list, after: version, limit: pageSize)
            } catch is CancellationError {
                return nil
            }
            buffer = page.entries.reversed()
            version = page.entries.last?.version ?? version
            atHead = !page.hasMore
        }
        return nil
    }
}
