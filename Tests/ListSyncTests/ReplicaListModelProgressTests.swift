import Foundation
import ListStore
import ListStoreTestSupport
import ListSync
import Observation
import Testing

/// A model's first sync in pages publishes its progress (`status.progress`) while it runs.
@Suite @MainActor struct ReplicaListModelProgressTests {
    /// A source whose pages wait, from the third on, until the test opens the gate.
    final class GatedPages: _ForwardingSource, @unchecked Sendable {
        let base: any ListSource
        let served = Box(0)
        let gate: AsyncStream<Void>
        let opener: AsyncStream<Void>.Continuation
        init(_ base: any ListSource) {
            self.base = base
            (gate, opener) = AsyncStream.makeStream(of: Void.self)
        }
        func page(of list: String, at version: Int?, after cursor: ListPage.Cursor?, maxBytes: Int) async throws -> ListPage {
            if served.withLock({ n in defer { n += 1 }; return n }) == 2 {
                for await _ in gate { break }
            }
            return try await base.page(of: list, at: version, after: cursor, maxBytes: maxBytes)
        }
    }

    @available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
    @Test func aFirstSyncInPagesShowsItsProgressUntilItEnds() async throws {
        let source = InMemoryStore()
        let sections = PagedSyncTests.bigList(sections: 60, elements: 2000)  // about 12 MB: pages of 4 MiB
        try await source.commit(sections, to: "l", expectedVersion: nil, author: nil, message: nil)
        _ = try await source.prune("l", .keepLast(0), force: false)
        let gated = GatedPages(LocalSource(source))
        let directory = try TemporaryDirectory()
        let model = ReplicaListModel(replica: Replica(store: try Store(path: directory.file("replica.liststore")), list: "l"), source: gated)
        let syncing = Task { await model.sync() }
        // Two pages landed, the third waits: the model shows how far the sync got.
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(60)  // a bound for a failing test, not a timing assertion
        while !(model.status.progress?.records ?? 0 > 0 && gated.served.withLock({ $0 }) > 2), clock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        let shown = try #require(model.status.progress)
        #expect(shown.totalElements == 120_000 && shown.elements > 0 && shown.fractionCompleted < 1)
        gated.opener.yield()
        #expect(await syncing.value?.pull.resynced == true)
        #expect(model.status.progress == nil)
        #expect(model.sections == sections)
    }
}
