import Foundation
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
        let follower = Task { () -> [Int] in
            var versions: [Int] = []
            var state: [ListSection] = []
            for try await change in source.changes(after: origin, pageSize: 2) {
                state = try change.entry.changeset(applyingTo: state).result
                #expect(state == linearList(change.cursor.version))
                versions.append(change.cursor.version)
                if versions.count == 12 { break }
            }
            return versions
        }
        for k in 4...12 {
            try await Task.sleep(for: .milliseconds(5))
            try await store.commit(linearList(k), to: "l")
        }
        #expect(try await follower.value == Array(1...12))
    }

    /// A commit of this process wakes a waiting follower (not the poll, which comes after 5 minutes;
    /// the bound is loose so that a loaded machine cannot fail it).
    @Test func inProcessCommitsWakeFollowersAtOnce() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(1), to: "l")
        let source = LocalSource(store, pollInterval: .seconds(300))
        let cursor = try await source.cursor(of: "l")
        let clock = ContinuousClock()
        let follower = Task { () -> ContinuousClock.Instant? in
            for try await _ in source.changes(after: cursor) { return clock.now }
            return nil
        }
        try await Task.sleep(for: .milliseconds(100))
        try await store.commit(linearList(2), to: "l")
        let committed = clock.now
        let delivered = try #require(try await follower.value)
        #expect(delivered - committed < .seconds(60))
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
