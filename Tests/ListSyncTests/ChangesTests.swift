import Foundation
import ListDiff
import ListStore
import ListStoreTestSupport
import ListSync
import Testing

@Suite struct ChangesTests {
    /// The backlog, then live commits, each exactly once and in order.
    @Test func changesDeliverTheBacklogThenLiveCommitsInOrder() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        for k in 1...3 { try await store.commit(linearList(k), to: "l") }
        let source = LocalSource(store)
        let origin = try await source.origin(of: "l")
        let (seen, seeing) = AsyncStream.makeStream(of: Int.self)
        let follower = Task { () -> [Int] in
            defer { seeing.finish() }
            var versions: [Int] = []
            var state: [ListSection] = []
            for try await change in source.changes(after: origin, pageSize: 2) {
                state = try change.entry.changeset(applyingTo: state).result
                #expect(state == linearList(change.cursor.version))
                versions.append(change.cursor.version)
                seeing.yield(change.cursor.version)
                if versions.count == 12 { break }
            }
            return versions
        }
        // Each commit once the follower has the one before: live, not part of the backlog.
        var delivered = seen.makeAsyncIterator()
        for k in 4...12 {
            while let version = await delivered.next(), version < k - 1 {}
            try await store.commit(linearList(k), to: "l")
        }
        #expect(try await follower.value == Array(1...12))
    }

    /// A commit of this process wakes a waiting follower: the source's poll and the follower's
    /// wait are an hour, so only the commit's signal can bring it (the time limit stops a test that
    /// would wait for them).
    @Test(.timeLimit(.minutes(1))) func inProcessCommitsWakeFollowersAtOnce() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(1), to: "l")
        let (waits, waiting) = AsyncStream.makeStream(of: Void.self)
        let source = WaitReportingSource(LocalSource(store, pollInterval: .seconds(3600))) { waiting.yield() }
        let cursor = try await source.cursor(of: "l")
        let follower = Task { () -> Int? in
            for try await change in source.changes(after: cursor, wait: .seconds(3600)) { return change.cursor.version }
            return nil
        }
        // The follower has read the journal and waits for a commit.
        for await _ in waits { break }
        try await store.commit(linearList(2), to: "l")
        #expect(try await follower.value == 2)
    }

    @Test func staleCursorsAreRefusedWithTheReason() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        for k in 1...5 { try await store.commit(linearList(k), to: "l") }
        let source = LocalSource(store)
        let identity = try await store.identity()

        func reason(_ cursor: Cursor) async -> ResyncReason? {
            do {
                for try await _ in source.changes(after: cursor) { return nil }
            } catch let error as SyncError {
                return error.resyncReason
            } catch {}
            return nil
        }
        #expect(await reason(Cursor(store: StoreIdentity(uuid: "other", epoch: 1), list: "l", version: 1)) == .differentStore)
        #expect(await reason(Cursor(store: identity, list: "l", version: 9)) == .aheadOfSource)
        try await store.prune("l", .keepLast(2))
        #expect(await reason(Cursor(store: identity, list: "l", version: 1)) == .pruned)
        let next = try await store.advanceEpoch()
        #expect(next.epoch == identity.epoch + 1 && next.uuid == identity.uuid)
        #expect(await reason(Cursor(store: identity, list: "l", version: 4)) == .epochChanged)
    }
}

/// `source`, telling `waiting` each time a follower starts to wait for a commit.
struct WaitReportingSource<Source: ListSource>: ListSource {
    let source: Source
    let waiting: @Sendable () -> Void

    init(_ source: Source, waiting: @escaping @Sendable () -> Void) {
        self.source = source
        self.waiting = waiting
    }

    func identity() async throws -> StoreIdentity { try await source.identity() }
    func summary(of list: String) async throws -> ListSummary { try await source.summary(of: list) }
    func journal(of list: String, after version: Int, limit: Int) async throws -> JournalPage {
        try await source.journal(of: list, after: version, limit: limit)
    }
    func snapshot(of list: String, at version: Int?) async throws -> ListSnapshot { try await source.snapshot(of: list, at: version) }
    func catchUp(of list: String, from version: Int, applyingTo state: [ListSection]) async throws
        -> (changeset: ListChangeset, head: ListSnapshot)
    {
        try await source.catchUp(of: list, from: version, applyingTo: state)
    }
    func waitForCommit(to list: String, after version: Int, timeout: Duration) async throws -> Bool {
        waiting()
        return try await source.waitForCommit(to: list, after: version, timeout: timeout)
    }
    func acknowledge(consumer name: String, of list: String, version: Int) async throws {
        try await source.acknowledge(consumer: name, of: list, version: version)
    }
    func push(_ push: Push, to list: String) async throws -> PushAnswer { try await source.push(push, to: list) }
    func pushes(from client: String, to list: String, seqs: ClosedRange<Int>) async throws -> [PushAnswer] {
        try await source.pushes(from: client, to: list, seqs: seqs)
    }
}
