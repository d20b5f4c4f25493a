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
        let served = _Locked(0)
        let gate: AsyncStream<Void>
        let opener: AsyncStream<Void>.Continuation
        /// Tells once the third page is asked for and held.
        let held: AsyncStream<Void>
        private let holding: AsyncStream<Void>.Continuation
        init(_ base: any ListSource) {
            self.base = base
            (gate, opener) = AsyncStream.makeStream(of: Void.self)
            (held, holding) = AsyncStream.makeStream(of: Void.self)
        }
        func page(of list: String, at version: Int?, after cursor: ListPage.Cursor?, maxBytes: Int) async throws -> ListPage {
            if served.withLock({ n in defer { n += 1 }; return n }) == 2 {
                holding.yield()
                for await _ in gate { break }
            }
            return try await base.page(of: list, at: version, after: cursor, maxBytes: maxBytes)
        }
    }

    @available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
    @Test(.timeLimit(.minutes(2))) func aFirstSyncInPagesShowsItsProgressUntilItEnds() async throws {
        // SQLite stores: their work runs on threads of their own, not on those that run tasks.
        let directory = try TemporaryDirectory()
        let source = try Store(path: directory.file("source.liststore"))
        // About 12 MB in 30,000 elements of some 400 bytes: a first page of 256 KiB, then pages of
        // 4 MiB.
        let sections = PagedSyncTests.bigList(sections: 60, elements: 500, tag: String(repeating: " and more", count: 36))
        try await source.commit(sections, to: "l", expectedVersion: nil, author: nil, message: nil)
        _ = try await source.prune("l", .keepLast(0), force: false)
        let gated = GatedPages(LocalSource(source))
        let model = ReplicaListModel(replica: Replica(store: try Store(path: directory.file("replica.liststore")), list: "l"), source: gated)
        await model.refresh()
        let recorder = TransitionRecorder(model)
        let syncing = Task { await model.sync() }
        // Two pages landed, the third waits: the model shows how far the sync got.
        for await _ in gated.held { break }
        await Self.until(model) { $0.status.progress?.records ?? 0 > 0 && $0.status.isPartial }
        let shown = try #require(model.status.progress)
        #expect(shown.totalElements == 30_000 && shown.elements > 0 && shown.fractionCompleted < 1)
        // The top of the list is on screen already, read-only, marked as partial.
        #expect(model.status.isPartial && model.version == 0)
        let first = model.sections
        // The first pages landed, up to the records an early view shows (the first page is small).
        #expect((1...ReplicaListModel.firstPagesRecords).contains(first.reduce(0) { $0 + 1 + $1.elements.count }))
        #expect(first.indices.allSatisfy { s in first[s].model == sections[s].model && sections[s].elements.starts(with: first[s].elements) })
        gated.opener.yield()
        #expect(await syncing.value?.pull.resynced == true)
        #expect(model.status.progress == nil && !model.status.isPartial)
        #expect(model.sections == sections)
        // Two transitions: the first pages, then from them to the whole list.
        let transitions = try await recorder.first(2)
        #expect(recorder.transitions.map(\.cause) == [.firstPages, .sync])
        #expect(try transitions.reduce([ListSection]()) { try $1.changeset.apply(to: $0) } == sections)
    }

    /// Returns once `condition` holds of `model`, waking at each change of what it reads
    /// (Observation), not at intervals.
    @available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
    static func until(_ model: ReplicaListModel, _ condition: @escaping @MainActor (ReplicaListModel) -> Bool) async {
        while true {
            let satisfied = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let once = _Locked(false)
                let resume = { @Sendable (holds: Bool) in
                    if once.withLock({ done in defer { done = true }; return !done }) { continuation.resume(returning: holds) }
                }
                let holds = withObservationTracking { condition(model) } onChange: { resume(false) }
                if holds { resume(true) }
            }
            if satisfied { return }
        }
    }
}
