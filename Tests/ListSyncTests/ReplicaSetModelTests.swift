import Foundation
import ListDiff
import ListDiffTestSupport
import ListStore
import ListStoreTestSupport
import ListSync
import Observation
import Testing

/// `ReplicaSetModel`: a set's lists for an app, each list's model publishing the staged changesets
/// the set's background sync applies, lists appearing and leaving, edits pushed.
@Suite @MainActor struct ReplicaSetModelTests {
    /// Waits on the main actor until `condition` holds (checked every 10 ms, as
    /// `ListStoreTestSupport.waitUntil` does; bounded only to report a hang).
    static func until(_ what: String, _ condition: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while try await !condition() {
            guard ContinuousClock.now < deadline else { throw WaitTimedOut(what: what) }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    struct WaitTimedOut: Error { var what: String }

    @available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
    @Test func theModelFollowsTheSetAndEachListPublishesItsChangesets() async throws {
        let directory = try TemporaryDirectory()
        let source = try Store(path: directory.file("source.liststore"))
        for list in ["team/a", "team/b"] { try await source.commit(linearList(3), to: list) }
        let set = try ReplicaSet(store: try Store(path: directory.file("phone.liststore")), lists: "team/*")
        try await set.pull(from: LocalSource(source))
        let model = try ReplicaSetModel(set: set, source: LocalSource(source))
        #expect(model.lists == ["team/a", "team/b"])
        let listA = try model.model(for: "team/a")
        #expect(try model.model(for: "team/a") === listA)
        var transitions = listA.transitions().makeAsyncIterator()
        model.start(retrying: RetryPolicy(initialDelay: .milliseconds(10), maximumDelay: .milliseconds(100)), localPollInterval: .milliseconds(50))
        defer { model.stop() }

        // A commit at the source: list a's model publishes its changeset.
        let before = listA.sections
        try await source.commit(linearList(5), to: "team/a")
        let transition = try #require(await transitions.next())
        #expect(transition.changeset == ListChangeset(source: before, target: linearList(5)))
        #expect(listA.sections == linearList(5))

        // Lists come and go.
        try await source.commit(linearList(2), to: "team/c")
        _ = try await source.deleteList("team/b")
        try await Self.until("the model's lists follow the source") { model.lists == ["team/a", "team/c"] }

        // An edit through a list's model is pushed by the set.
        try listA.edit(author: "ana") { draft in try draft.append(ListItem(id: "mine", json: .string("x")), toSection: "s") }
        try await Self.until("the edit reaches the source") {
            try await source.snapshot(of: "team/a").sections[0].elements.contains { $0.id == "mine" }
        }
        #expect(model.status.isFollowing && model.status.lastError == nil)
    }
}
