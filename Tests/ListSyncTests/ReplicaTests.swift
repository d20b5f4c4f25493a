import Foundation
import ListDiff
import ListDiffTestSupport
import ListStore
import ListStoreTestSupport
import ListSync
import Testing

@Suite(.heavyWork) struct ReplicaTests {
    /// Histories are committed while replicas pull at random moments (one by one, or catching up in
    /// one step) and the source prunes: after every pull each replica equals the source at the version
    /// it reports, with the same digest; the resyncs that pruning forces happen, and recover by diff.
    @Test func replicasFollowRandomHistoriesThroughPruning() async throws {
        let directory = try TemporaryDirectory()
        let source = try Store(path: directory.file("source.liststore"))
        var random = RandomSnapshots(seed: 0x5EED_4, duplicates: true)
        var rng = SplitMix64(seed: 0xA11CE)
        let replicas = (0..<3).map { Replica(store: try! Store(path: directory.file("replica\($0).liststore")), list: "l") }
        var current = random.snapshot(maxSections: 5, maxElements: 8)
        var resyncs: [ResyncReason: Int] = [:]
        var pulls = 0
        for step in 0..<400 {
            try await source.commit(listSections(current), to: "l")
            current = random.edit(current, intensity: Double(step % 10) / 10)
            if step % 60 == 59 { current = random.snapshot(maxSections: 6, maxElements: 10) }
            if rng.next() % 9 == 0 {
                let rule: PruneRule = rng.next() % 2 == 0 ? .keepLast(Int(rng.next() % 6)) : .before(
                    try await source.summary(of: "l").version - Int(rng.next() % 4))
                _ = try? await source.prune("l", rule)
            }
            for (r, replica) in replicas.enumerated() where rng.next() % UInt64(4 + 3 * r) == 0 {
                let before = replica.store.exists ? try await replica.store.snapshot(of: "l").sections : []
                let result = try await replica.pull(
                    from: LocalSource(source), options: .init(catchUp: r == 2 && rng.next() % 2 == 0))
                pulls += 1
                let expected = try await source.snapshot(of: "l", at: result.version)
                let mine = try await replica.store.snapshot(of: "l")
                #expect(mine.sections == expected.sections)
                #expect(mine.digest == expected.digest && mine.digest.hex == result.digest)
                #expect(try await replica.position()?.version == result.version)
                if result.resynced, let reason = result.reason {
                    resyncs[reason, default: 0] += 1
                    // Recovered by diff: the replica's last version holds one minimal changeset from
                    // what it had to the source's head.
                    let entries = try await replica.store.journal(of: "l", after: max(0, mine.version - 1)).entries
                    if let last = entries.last, last.version == mine.version, before != expected.sections {
                        let (changeset, _) = try last.changeset(applyingTo: before)
                        #expect(changeset == ListChangeset(source: before, target: expected.sections))
                    }
                }
            }
        }
        #expect(pulls > 100)
        #expect(resyncs[.pruned, default: 0] > 0)
        for replica in replicas {
            try await replica.pull(from: LocalSource(source))
            #expect(try await replica.store.snapshot(of: "l").sections == source.snapshot(of: "l").sections)
            #expect(try await replica.store.verify().isValid)
        }
        #expect(try await source.verify().isValid)
    }

    @Test func aReplicaCopiesEveryCommitAndCanBeASource() async throws {
        let directory = try TemporaryDirectory()
        let source = try Store(path: directory.file("source.liststore"))
        for k in 1...5 { try await source.commit(linearList(10 + k, content: k), to: "l", author: "ana", message: "v\(k)") }
        let first = Replica(store: try Store(path: directory.file("a.liststore")), list: "l")
        let result = try await first.pull(from: LocalSource(source))
        #expect(result.version == 5 && result.applied == 5 && !result.resynced && result.reason == nil)
        // Each source commit is a replica commit, with its author and message.
        let entries = try await first.store.journal(of: "l").entries
        #expect(entries.map(\.version) == [1, 2, 3, 4, 5])
        #expect(entries.map(\.message) == (1...5).map { "v\($0)" })
        #expect(entries.map(\.digest) == (try await source.journal(of: "l").entries.map(\.digest)))
        // The stages are applied as the source recorded them, and recorded the same way.
        #expect(entries.map(\.stagesJSON) == (try await source.journal(of: "l").entries.map(\.stagesJSON)))

        // Nothing new: nothing applied.
        #expect(try await first.pull(from: LocalSource(source)).applied == 0)

        // A replica of the replica.
        let second = Replica(store: try Store(path: directory.file("b.liststore")), list: "l")
        try await source.commit(linearList(3), to: "l")
        try await first.pull(from: LocalSource(source))
        let chained = try await second.pull(from: LocalSource(first.store))
        #expect(chained.version == 6 && chained.applied == 6)
        #expect(try await second.store.snapshot(of: "l").sections == linearList(3))
        #expect(try await second.position()?.store == first.store.identity())
    }

    /// A source whose journal entry `version` carries other stages than the ones it committed.
    struct TamperedSource: _ForwardingSource {
        let base: any ListSource
        let version: Int
        let stagesJSON: String

        func journal(of list: String, after version: Int, limit: Int) async throws -> JournalPage {
            var page = try await base.journal(of: list, after: version, limit: limit)
            for k in page.entries.indices where page.entries[k].version == self.version {
                page.entries[k].stagesJSON = Array(stagesJSON.utf8)
            }
            return page
        }
    }

    /// Stages that do not apply to the replica, or apply but do not reproduce the source's digest:
    /// nothing of that commit is written, and the replica recovers by diff (or, asked not to,
    /// stops with a typed error at the version before).
    @Test func journalStagesThatDoNotReproduceTheSourceAreNotWritten() async throws {
        let directory = try TemporaryDirectory()
        let source = try Store(path: directory.file("source.liststore"))
        for k in 1...4 { try await source.commit(linearList(5 + k, content: k), to: "l") }
        let cases = [
            #"[{"elementDeleted":[{"section":0,"element":99}]}]"#,  // does not apply
            #"[{"elementDeleted":[{"section":0,"element":0}]}]"#,  // applies, another digest
            #"{"not":"stages"}"#,  // not stages
        ]
        for (n, json) in cases.enumerated() {
            let replica = Replica(store: try Store(path: directory.file("r\(n).liststore")), list: "l")
            let bad = TamperedSource(base: LocalSource(source), version: 3, stagesJSON: json)
            await #expect {
                try await replica.pull(from: bad, options: .init(resyncByDiff: false))
            } throws: { error in
                (error as? SyncError)?.resyncReason == .digestMismatch
            }
            #expect(try await replica.position()?.version == 2)
            #expect(try await replica.store.snapshot(of: "l").sections == source.snapshot(of: "l", at: 2).sections)
            #expect(try await replica.store.journal(of: "l").entries.count == 2)

            let result = try await replica.pull(from: bad)
            #expect(result.resynced && result.reason == .digestMismatch && result.version == 4)
            #expect(try await replica.store.snapshot(of: "l").sections == source.snapshot(of: "l").sections)
            #expect(try await replica.store.verify().isValid)
        }
    }

    @Test func catchUpAppliesOneMinimalChangeset() async throws {
        let directory = try TemporaryDirectory()
        let source = try Store(path: directory.file("source.liststore"))
        try await source.commit(linearList(50), to: "l")
        let replica = Replica(store: try Store(path: directory.file("r.liststore")), list: "l")
        try await replica.pull(from: LocalSource(source))
        var list = linearList(50)
        for k in 0..<20 {
            list[0].elements.swapAt(k, 49 - k)
            list[0].elements[k].content = Array("\(k + 100)".utf8)
            try await source.commit(list, to: "l")
        }
        let result = try await replica.pull(from: LocalSource(source), options: .init(catchUp: true))
        #expect(result.version == 21 && result.applied == 1 && !result.resynced)
        let entries = try await replica.store.journal(of: "l").entries
        #expect(entries.count == 2)
        #expect(try entries[1].changeset(applyingTo: linearList(50)).changeset == ListChangeset(source: linearList(50), target: list))
    }

    @Test func resyncReasonsAreNamedAndRecoveredByDiff() async throws {
        let directory = try TemporaryDirectory()
        let source = try Store(path: directory.file("source.liststore"))
        try await source.commit(linearList(5), to: "l")
        let replica = Replica(store: try Store(path: directory.file("r.liststore")), list: "l")
        try await replica.pull(from: LocalSource(source))

        // A local change on the replica is pending, not a divergence: the pull keeps it.
        try await replica.store.commit(linearList(6), to: "l")
        var result = try await replica.pull(from: LocalSource(source), options: .init(resyncByDiff: false))
        #expect(!result.resynced && result.pending == 1)
        #expect(try await replica.store.snapshot(of: "l").sections == linearList(6))
        try await replica.push(to: LocalSource(source))
        result = try await replica.pull(from: LocalSource(source))
        #expect(result.pending == 0 && result.confirmedChanges == 1)
        #expect(try await source.snapshot(of: "l").sections == linearList(6))
        try await source.commit(linearList(5), to: "l")
        try await replica.pull(from: LocalSource(source))

        // Pruned past the replica.
        for k in 0..<4 { try await source.commit(linearList(5 + k, content: k + 1), to: "l") }
        try await source.prune("l", .keepLast(1))
        result = try await replica.pull(from: LocalSource(source))
        #expect(result.resynced && result.reason == .pruned && result.version == 7)

        // The source was restored (new epoch), or replaced by another store.
        try await source.advanceEpoch()
        result = try await replica.pull(from: LocalSource(source))
        #expect(result.resynced && result.reason == .epochChanged)
        // Another store is followed only when the pull is told to (replacing).
        let other = try Store(path: directory.file("other.liststore"))
        try await other.commit(linearList(2, prefix: "x"), to: "l")
        await #expect(throws: SyncError.self) { try await replica.pull(from: LocalSource(other)) }
        result = try await replica.pull(from: LocalSource(other), options: ReplicaPullOptions(replacing: true))
        #expect(result.resynced && result.reason == .differentStore)
        #expect(try await replica.store.snapshot(of: "l").sections == linearList(2, prefix: "x"))

        // A list that already held data becomes a replica only when the pull is told to (replacing).
        let plain = try Store(path: directory.file("plain.liststore"))
        try await plain.commit(linearList(3), to: "l")
        await #expect(throws: SyncError.self) { try await Replica(store: plain, list: "l").pull(from: LocalSource(source)) }
        #expect(try await plain.replicaSource(of: "l") == nil)
        result = try await Replica(store: plain, list: "l").pull(from: LocalSource(source), options: ReplicaPullOptions(replacing: true))
        #expect(result.resynced && result.reason == .noCursor)
        #expect(try await plain.snapshot(of: "l").sections == source.snapshot(of: "l").sections)
    }

    @Test func consumersHoldPruningBackUnlessForced() async throws {
        let directory = try TemporaryDirectory()
        let source = try Store(path: directory.file("source.liststore"))
        for k in 1...10 { try await source.commit(linearList(k), to: "l") }
        let replica = Replica(store: try Store(path: directory.file("r.liststore")), list: "l")
        try await replica.pull(from: LocalSource(source), options: .init(consumer: "laptop"))
        for k in 11...20 { try await source.commit(linearList(k), to: "l") }
        #expect(try await source.consumers(of: "l").map(\.version) == [10])

        var pruned = try await source.prune("l", .keepLast(2))
        #expect(pruned.base == 10 && pruned.heldBy == ["laptop"] && pruned.removedEntries == 10)
        // Every retained version can still be shown and diffed.
        for version in 10...20 { #expect(try await source.snapshot(of: "l", at: version).sections == linearList(version)) }
        #expect(try await source.changeset(of: "l", from: 10, to: 15).changeset == ListChangeset(source: linearList(10), target: linearList(15)))
        #expect(throws: StoreError.self) { try source.snapshot(of: "l", at: 9) }
        #expect(try await source.verify().isValid)

        // The replica was not pruned past: it replays.
        let result = try await replica.pull(from: LocalSource(source), options: .init(consumer: "laptop"))
        #expect(!result.resynced && result.applied == 10)

        for k in 21...25 { try await source.commit(linearList(k), to: "l") }
        pruned = try await source.prune("l", .before(24), force: true)
        #expect(pruned.base == 24 && pruned.heldBy.isEmpty)
        #expect(try await source.summary(of: "l").baseVersion == 24)
        #expect(throws: StoreError.self) { try source.prune("l", .keepLast(-1)) }
        #expect(throws: StoreError.self) { try source.registerConsumer("", of: "l") }
        #expect(try await source.unregisterConsumer("laptop", of: "l"))
        #expect(try await source.consumers(of: "l").isEmpty)
    }
}
