import Foundation
import ListDiff
import ListDiffTestSupport
import ListStore
import ListStoreTestSupport
import ListStoreWire
import ListSync
import Observation
import Testing

/// `ReplicaSetModel`: a set's lists for an app, each list's model publishing the staged changesets
/// the set's background sync applies, lists appearing and leaving, edits pushed.
@Suite @MainActor struct ReplicaSetModelTests {
    /// Returns once `condition` holds: checked at once, then again at each change of the model
    /// properties it reads (Observation), so that it waits for the change, not for time.
    static func until(_ condition: @escaping @MainActor () -> Bool) async {
        while !condition() {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                withObservationTracking { _ = condition() } onChange: { continuation.resume() }
            }
        }
    }

    /// Returns once `condition` holds: checked at once, then again at each commit to `store`.
    static func until(_ store: Store, _ condition: () async throws -> Bool) async throws {
        while true {
            let generation = store.commitGeneration()
            if try await condition() { return }
            await store.waitForCommit(after: generation, timeout: .seconds(60))
        }
    }

    @available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
    @Test(.timeLimit(.minutes(2))) func theModelFollowsTheSetAndEachListPublishesItsChangesets() async throws {
        let directory = try TemporaryDirectory()
        let source = try Store(path: directory.file("source.liststore"))
        for list in ["team/a", "team/b"] { try await source.commit(linearList(3), to: list) }
        let set = try ReplicaSet(store: try Store(path: directory.file("phone.liststore")), lists: "team/*")
        try await set.pull(from: LocalSource(source))
        let model = ReplicaSetModel(set: set, source: LocalSource(source))
        #expect(model.lists.isEmpty && !model.status.isLoaded)   // read in the background
        await model.refresh()
        #expect(model.lists == ["team/a", "team/b"] && model.status.isLoaded)
        let listA = model.model(for: "team/a")
        #expect(model.model(for: "team/a") === listA)
        await listA.refresh()   // it reads its head in the background; this waits for it
        #expect(listA.status.isLoaded && listA.sections == linearList(3))
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
        await Self.until { model.lists == ["team/a", "team/c"] }

        // An edit through a list's model is pushed by the set.
        try await listA.edit(author: "ana") { draft in try draft.append(ListItem(id: "mine", json: .string("x")), toSection: "s") }
        try await Self.until(source) {
            try await source.snapshot(of: "team/a").sections[0].elements.contains { $0.id == "mine" }
        }
        #expect(model.status.isFollowing && model.status.lastError == nil)
    }

    /// A feed source whose list pages wait, from the second on, until the test opens the gate.
    struct GatedFeed: FeedSource, _ForwardingSource {
        let local: LocalSource
        var base: any ListSource { local }
        let gate: AsyncStream<Void>
        let opener: AsyncStream<Void>.Continuation
        let held: AsyncStream<Void>
        let holding: AsyncStream<Void>.Continuation
        let served = _Locked(0)
        init(_ local: LocalSource) {
            self.local = local
            (gate, opener) = AsyncStream.makeStream(of: Void.self)
            (held, holding) = AsyncStream.makeStream(of: Void.self)
        }
        func page(of list: String, at version: Int?, after cursor: ListPage.Cursor?, maxBytes: Int) async throws -> ListPage {
            if served.withLock({ n in defer { n += 1 }; return n }) == 1 {
                holding.yield()
                for await _ in gate { break }
            }
            return try await local.page(of: list, at: version, after: cursor, maxBytes: maxBytes)
        }
        func lists(matching pattern: ListPattern) async throws -> [ListSummary] { try await local.lists(matching: pattern) }
        func changes(of pattern: ListPattern, after cursor: FeedCursor?, limit: Int, wait: Duration) async throws -> FeedChanges {
            try await local.changes(of: pattern, after: cursor, limit: limit, wait: wait)
        }
        func followChanges(of pattern: ListPattern, after cursor: FeedCursor?) -> AsyncThrowingStream<FeedChange, any Error> {
            local.followChanges(of: pattern, after: cursor)
        }
    }

    /// A list of the set copied in pages (its source's history pruned) shows its progress in the
    /// set's status while it lands, and none once it has.
    @available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
    @Test(.timeLimit(.minutes(2))) func aSyncShowsTheProgressOfAListCopiedInPages() async throws {
        let directory = try TemporaryDirectory()
        let source = try Store(path: directory.file("source.liststore"))
        // Some 6 MB: a first page of 256 KiB, then two of 4 MiB at most.
        try await source.commit(PagedSyncTests.bigList(sections: 40, elements: 400, tag: String(repeating: " and more", count: 30)), to: "team/a")
        _ = try await source.prune("team/a", .keepLast(0))
        let set = try ReplicaSet(store: try Store(path: directory.file("phone.liststore")), lists: "team/**")
        let gated = GatedFeed(LocalSource(source))
        let model = ReplicaSetModel(set: set, source: gated)
        let syncing = Task { await model.sync() }
        for await _ in gated.held { break }
        await Self.until { model.status.progress != nil }
        let shown = try #require(model.status.progress)
        #expect(shown.list == "team/a" && shown.totalElements == 16_000 && shown.fractionCompleted < 1)
        gated.opener.yield()
        #expect(await syncing.value?.pull.created == ["team/a"])
        #expect(model.status.progress == nil && model.lists == ["team/a"])
    }
}
