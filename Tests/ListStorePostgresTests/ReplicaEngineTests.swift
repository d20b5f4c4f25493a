import Foundation
import ListDiff
import ListDiffTestSupport
import ListJSON
import ListMerge
@_spi(Replication) import ListStore
import ListStorePostgresTestSupport
import ListStoreTestSupport
import ListSync
import Testing

/// Replica lists on every engine: a list of a SQLite or a PostgreSQL store follows a
/// SQLite source commit by commit, catches up, resyncs, and writes offline; replicas that write
/// converge with the source whichever engine holds them.
@Suite(.serialized, .heavyWork) struct ReplicaEngineTests {
    /// Pulls apply the source's commits one by one with their stages, author and message, record the
    /// position in the same transaction, and reproduce every digest; a catch-up applies one
    /// changeset; a source that advanced its epoch is resynced by diff; the replica verifies.
    /// A source's journal entry carries the digest its version must have; a replica records it with
    /// the new head while it makes its own, and compares the two before it commits. An entry whose
    /// stages do not make that digest (a source that changed under its replicas, or a forged
    /// answer) is refused, by the caller's check or else by the store, and writes nothing.
    @Test(arguments: EngineKind.available)
    func anEntryWhoseStagesDoNotMakeItsDigestWritesNothing(_ engine: EngineKind) async throws {
        try await engine.withStore { stores in try await Self.refuseForgedDigest(into: stores[0]) }
    }

    private struct Diverged: Error {}

    private static func refuseForgedDigest(into replicaStore: some ReplicaStore) async throws {
        do {
            let directory = try TemporaryDirectory()
            let source = try Store(path: directory.file("source.liststore"))
            try await source.commit(linearList(6), to: "l")
            let replica = Replica(store: replicaStore, list: "l")
            _ = try await replica.pull(from: LocalSource(source))
            let before = try #require(try await replica.position())
            var changed = linearList(6)
            changed[0].elements.swapAt(1, 4)
            changed[0].elements[2] = ListItem(id: changed[0].elements[2].id, json: JSONValue("new"))
            try await source.commit(changed, to: "l")
            let entry = try #require(try await source.journal(of: "l", after: before.version, limit: 1, maxBytes: .max).entries.first)
            let forged = {
                var forged = entry
                forged.digest = ListDigest.of(linearList(7))
                return forged
            }()
            let position = ReplicaSource(store: before.store, list: "l", version: entry.version, digest: forged.digest)
            // With the caller's check, the replica reports its divergence.
            func expectDiverged(
                _ entry: JournalEntry, at position: ReplicaSource, sourceLocation: SourceLocation = #_sourceLocation
            ) async {
                await #expect(throws: Diverged.self, sourceLocation: sourceLocation) {
                    try await replicaStore.commitReplica(entry, to: "l", source: position) { committed in
                        if committed.digest != entry.digest { throw Diverged() }
                    }
                }
            }

            await expectDiverged(forged, at: position)
            let unchecked = await #expect(throws: StoreError.self) {
                try await replicaStore.commitReplica(forged, to: "l", source: position, check: { _ in })
            }
            #expect(unchecked?.code == .damaged)
            // An entry whose stages change nothing, and one whose digest is not a digest at all (on
            // PostgreSQL, text holding U+0000 cannot even be written): refused the same way.
            let empty = {
                var empty = forged
                empty.stagesJSON = Array("[]".utf8)
                return empty
            }()
            let emptyRefused = await #expect(throws: StoreError.self) {
                try await replicaStore.commitReplica(empty, to: "l", source: position, check: { _ in })
            }
            #expect(emptyRefused?.code == .damaged)
            let garbled = {
                var garbled = entry
                garbled.digest = ListDigest(hex: "\u{0}" + String(entry.digest.hex.dropFirst()))
                return garbled
            }()
            let garbledPosition = ReplicaSource(store: before.store, list: "l", version: entry.version, digest: garbled.digest)
            await expectDiverged(garbled, at: garbledPosition)
            // Unchecked, it is refused too: as damaged, or on PostgreSQL already by the database,
            // which cannot store the position's digest.
            let garbledUnchecked = await #expect(throws: StoreError.self) {
                try await replicaStore.commitReplica(garbled, to: "l", source: garbledPosition, check: { _ in })
            }
            #expect(garbledUnchecked?.code == .damaged || garbledUnchecked?.code == .io)

            let held = try await replicaStore.snapshot(of: "l", at: nil)
            #expect(held.version == before.version && held.digest == before.digest && held.sections == linearList(6))
            #expect(try await replica.position() == before)
            #expect(try await replicaStore.journal(of: "l", after: before.version, limit: 10, maxBytes: .max).entries.isEmpty)

            // The entry as the source wrote it applies, with its digest.
            let applied = try await replicaStore.commitReplica(
                entry, to: "l", source: ReplicaSource(store: before.store, list: "l", version: entry.version, digest: entry.digest)
            ) { committed in #expect(committed.digest == entry.digest) }
            #expect(applied.digest == entry.digest && applied.version == entry.version)
            #expect(try await replicaStore.snapshot(of: "l", at: nil).sections == changed)
        }
    }

    @Test(arguments: EngineKind.available)
    func pullsFollowTheSourceCommitByCommit(_ engine: EngineKind) async throws {
        try await engine.withStore { stores in try await Self.follow(into: stores[0]) }
    }

    private static func follow(into replicaStore: some ReplicaStore) async throws {
        let directory = try TemporaryDirectory()
        let source = try Store(path: directory.file("source.liststore"))
        var random = RandomSnapshots(seed: 0x5EED_0F, duplicates: true)
        var current = random.snapshot(maxSections: 4, maxElements: 8)
        /// Makes `count` new versions of the source.
        func commitToSource(_ count: Int) async throws {
            var made = 0
            var step = 0
            while made < count {
                current = random.edit(current, intensity: 0.1 + Double(step % 5) / 10)
                step += 1
                if try await source.commit(listSections(current), to: "l", author: "ana", message: "step \(step)").changed { made += 1 }
            }
        }
        try await commitToSource(30)
        let replica = Replica(store: replicaStore, list: "l")
        #expect(try await replica.position() == nil)
        #expect(try await replica.status() == nil)

        let first = try await replica.pull(from: LocalSource(source))
        var head = try await source.snapshot(of: "l")
        #expect(first.version == 30 && head.version == 30 && first.applied == 30 && !first.resynced)
        #expect(try await replicaStore.snapshot(of: "l", at: nil).sections == head.sections)
        let identity = try await source.identity()
        let listID = try #require(try await source.summary(of: "l").id)
        #expect(
            try await replica.position()
                == ReplicaSource(store: identity, list: "l", version: head.version, digest: head.digest, listID: listID))
        // The journal keeps the source's entries: the same versions, stages, authors and messages.
        let mine = try await replicaStore.journal(of: "l", after: 0, limit: 1_000, maxBytes: .max).entries
        let theirs = try await source.journal(of: "l", after: 0, limit: 1_000, maxBytes: .max).entries
        #expect(mine.map(\.version) == theirs.map(\.version))
        #expect(mine.map(\.stagesJSON) == theirs.map(\.stagesJSON))
        #expect(mine.map(\.digest) == theirs.map(\.digest))
        #expect(mine.map(\.message) == theirs.map(\.message) && mine.map(\.author) == theirs.map(\.author))

        var before = head.version
        try await commitToSource(12)
        let second = try await replica.pull(from: LocalSource(source))
        head = try await source.snapshot(of: "l")
        #expect(second.applied == 12 && head.version == before + 12 && second.version == head.version)
        #expect(try await replicaStore.snapshot(of: "l", at: nil).digest == head.digest)

        before = head.version
        try await commitToSource(5)
        var options = ReplicaPullOptions()
        options.catchUp = true
        let caughtUp = try await replica.pull(from: LocalSource(source), options: options)
        head = try await source.snapshot(of: "l")
        #expect(caughtUp.applied == 1 && head.version == before + 5 && caughtUp.version == head.version)
        #expect(try await replicaStore.snapshot(of: "l", at: nil).sections == head.sections)

        // A restored source (a new epoch): the journal cannot be trusted, the replica resyncs by diff.
        try await source.advanceEpoch()
        try await commitToSource(3)
        let resynced = try await replica.pull(from: LocalSource(source))
        head = try await source.snapshot(of: "l")
        #expect(resynced.resynced && resynced.reason == .epochChanged && resynced.version == head.version)
        #expect(try await replicaStore.snapshot(of: "l", at: nil).sections == head.sections)
        #expect(try await replica.position()?.store == source.identity())
        #expect(try await replicaStore.verify(list: nil, progress: nil).isValid)
        #expect(try await replicaStore.outbox(of: "l").isEmpty)
    }

    /// Replicas that write converge: a replica in the engine's store and one in a SQLite
    /// store edit offline while the source is edited too, and push, pull and sync in random order;
    /// some pushes reach the source without their answer reaching the replica. At the end both equal
    /// the source, every local change was applied exactly once and in order, and both verify.
    @Test(arguments: EngineKind.available, [0xC0FFEE as UInt64, 0x5EED])
    func offlineWritesConverge(_ engine: EngineKind, seed: UInt64) async throws {
        try await engine.withStore { stores in try await Self.converge(stores[0], seed: seed) }
    }

    private static func converge(_ engineStore: some ReplicaStore, seed: UInt64) async throws {
        let directory = try TemporaryDirectory()
        let source = try Store(path: directory.file("source.liststore"))
        try await source.commit(OfflineEditor.start(sections: 3, elements: 5), to: "l")
        let sqliteReplica = Replica(store: try Store(path: directory.file("other.liststore")), list: "l")
        let engineReplica = Replica(store: engineStore, list: "l")
        var rng = SplitMix64(seed: seed)
        var editors = [OfflineEditor(client: "engine", seed: seed &+ 1), OfflineEditor(client: "sqlite", seed: seed &+ 2)]
        var serverEditor = OfflineEditor(client: "srv", seed: seed ^ 0xFFFF)
        var localChanges = [0, 0]
        var lostAnswers = 0
        try await engineReplica.pull(from: LocalSource(source))
        try await sqliteReplica.pull(from: LocalSource(source))

        /// One step of client `c`: an offline session, a sync, a pull, or a push whose answer is lost.
        func step<S: ReplicaStore>(_ replica: Replica<S>, _ c: Int) async throws {
            switch rng.next() % 4 {
            case 0:
                for _ in 0..<(1 + Int(rng.next() % 3)) {
                    let sections = editors[c].edit(try await replica.store.snapshot(of: "l", at: nil).sections)
                    let result = try await replica.store.commit(sections, to: "l", expectedVersion: nil, author: "c\(c)", message: nil)
                    if result.changed {
                        #expect(result.pendingSeq != nil)
                        localChanges[c] += 1
                    }
                }
            case 1:
                _ = try await replica.sync(with: LocalSource(source))
            case 2:
                _ = try await replica.pull(from: LocalSource(source))
            default:
                // The first unpushed change reaches the source, and its answer is lost.
                guard let entry = try await replica.store.outbox(of: "l").first(where: { $0.pushedVersion == nil }) else { return }
                _ = try await source.merge(entry.push, into: "l")
                lostAnswers += 1
            }
        }
        for _ in 0..<120 {
            switch rng.next() % 5 {
            case 0: try await source.commit(serverEditor.edit(try await source.snapshot(of: "l").sections), to: "l")
            case 1, 2: try await step(engineReplica, 0)
            default: try await step(sqliteReplica, 1)
            }
            if let status = try await engineReplica.status() {
                let outbox = try await engineStore.outbox(of: "l")
                #expect(status.pending == outbox.count { $0.pushedVersion == nil } && status.pushed == outbox.count { $0.pushedVersion != nil })
            }
        }
        for _ in 0..<2 {
            _ = try await engineReplica.sync(with: LocalSource(source))
            _ = try await sqliteReplica.sync(with: LocalSource(source))
        }
        let head = try await source.snapshot(of: "l")
        #expect(try await engineStore.snapshot(of: "l", at: nil).digest == head.digest, "the engine's replica differs")
        #expect(try await sqliteReplica.store.snapshot(of: "l").digest == head.digest, "the SQLite replica differs")
        #expect(try await engineStore.outbox(of: "l").isEmpty)
        #expect(try await engineReplica.status()?.pending == 0)
        for (c, client) in [try await engineStore.clientID(), try await sqliteReplica.store.clientID()].enumerated() {
            let recorded = try await source.pushes(from: client, to: "l", seqs: 1...max(1, localChanges[c]))
            #expect(recorded.map(\.seq) == (0..<localChanges[c]).map { $0 + 1 }, "client \(c)")
        }
        let pushIDs = try await source.journal(of: "l", limit: .max).entries.compactMap(\.pushID)
        #expect(Set(pushIDs).count == pushIDs.count, "a push was applied twice")
        #expect(localChanges[0] > 5 && lostAnswers > 0)
        #expect(try await engineStore.verify(list: nil, progress: nil).isValid)
    }

    /// A replica list with local changes refuses a pull's plain replay (it must rebase), and a
    /// commit to it queues its intents, keeping the confirmed state; the status counts them.
    @Test(arguments: EngineKind.available)
    func localChangesAreQueuedAndConfirmedByAPull(_ engine: EngineKind) async throws {
        try await engine.withStore { stores in try await Self.queue(into: stores[0]) }
    }

    private static func queue(into replicaStore: some ReplicaStore) async throws {
        let directory = try TemporaryDirectory()
        let source = try Store(path: directory.file("source.liststore"))
        try await source.commit(OfflineEditor.start(sections: 2, elements: 3), to: "l")
        let replica = Replica(store: replicaStore, list: "l")
        try await replica.pull(from: LocalSource(source))
        let confirmed = try await replicaStore.snapshot(of: "l", at: nil)

        let first = try await replicaStore.edit("l", expectedVersion: nil, author: "bo", message: "one") { draft in
            try draft.append(ListItem(id: "new-1", json: ["a": 1]), toSection: ExactString("base-s0"))
        }
        let second = try await replicaStore.edit("l", expectedVersion: nil, author: nil, message: nil) { draft in
            try draft.append(ListItem(id: "new-2", json: ["a": 2]), toSection: ExactString("base-s1"))
        }
        #expect(first.pendingSeq == 1 && second.pendingSeq == 2)
        let outbox = try await replicaStore.outbox(of: "l")
        #expect(outbox.map(\.seq) == [1, 2] && outbox.map(\.localVersion) == [first.version, second.version])
        #expect(outbox[0].author == "bo" && outbox[0].message == "one" && outbox.allSatisfy { $0.pushedVersion == nil })
        var status = try #require(try await replica.status())
        #expect(status.pending == 2 && status.pushed == 0 && status.source.version == confirmed.version)
        #expect(status.clientID == (try await replicaStore.clientID()))
        // verify checks that the head is the outbox rebased onto the confirmed state.
        #expect(try await replicaStore.verify(list: "l", progress: nil).isValid)

        // A plain replay onto a list with local changes is refused: the pull must rebase them.
        let sourceHead = try await source.snapshot(of: "l")
        let position = ReplicaSource(store: try await source.identity(), list: "l", version: sourceHead.version, digest: sourceHead.digest)
        let refused = await #expect(throws: StoreError.self) {
            try await replicaStore.commitReplica(sourceHead.sections, to: "l", source: position, author: nil, message: nil, check: { _ in })
        }
        #expect(refused?.code == .versionConflict)
        let entry = try #require(try await source.journal(of: "l", after: 0, limit: 1, maxBytes: .max).entries.first)
        let refusedEntry = await #expect(throws: StoreError.self) {
            try await replicaStore.commitReplica(entry, to: "l", source: position, check: { _ in })
        }
        #expect(refusedEntry?.code == .versionConflict)

        let pushed = try await replica.push(to: LocalSource(source))
        #expect(pushed.pushed == 2 && pushed.conflicts.isEmpty)
        status = try #require(try await replica.status())
        #expect(status.pending == 0 && status.pushed == 2)
        let pulled = try await replica.pull(from: LocalSource(source))
        #expect(pulled.confirmedChanges == 2 && pulled.pending == 0)
        #expect(try await replicaStore.outbox(of: "l").isEmpty)
        #expect(try await replicaStore.snapshot(of: "l", at: nil).digest == (try await source.snapshot(of: "l")).digest)
    }

    /// Two pulls of a replica with local changes at once: the one that commits second started from a
    /// source position the first has moved, and is refused (`.versionConflict`, so the replica pulls
    /// again) even when the first left the head as it was, which the expected version alone misses.
    /// Its older position and confirmed state would have replaced the newer ones.
    @Test(arguments: EngineKind.available)
    func aPullFromAPositionThatMovedIsRefused(_ engine: EngineKind) async throws {
        try await engine.withStore { stores in try await Self.pullFromMovedPosition(into: stores[0]) }
    }

    private static func pullFromMovedPosition(into replicaStore: some ReplicaStore) async throws {
        do {
            let directory = try TemporaryDirectory()
            let source = try Store(path: directory.file("source.liststore"))
            try await source.commit(OfflineEditor.start(sections: 1, elements: 2), to: "l")
            let replica = Replica(store: replicaStore, list: "l")
            try await replica.pull(from: LocalSource(source))
            try await replicaStore.edit("l", expectedVersion: nil, author: nil, message: nil) { draft in
                try draft.append(ListItem(id: "local", json: ["a": 1]), toSection: ExactString("base-s0"))
            }
            let state = try #require(try await replicaStore.pendingState(of: "l"))
            let head = try await replicaStore.snapshot(of: "l", at: nil)
            let remaining = state.outbox.map { (seq: $0.seq, pushedVersion: $0.pushedVersion) }
            func commitPull(from previous: ReplicaSource) async throws {
                _ = try await replicaStore.commitPull(
                    head.sections, to: "l", expectedVersion: head.version, position: state.position, previous: previous,
                    confirmed: state.confirmed, confirmedSeqs: [], remaining: remaining, conflicts: [], message: "pull"
                ) { _ in }
            }
            var moved = state.position
            moved.version -= 1
            let refused = await #expect(throws: StoreError.self) { try await commitPull(from: moved) }
            #expect(refused?.code == .versionConflict, "\(String(describing: refused))")
            #expect(try await replicaStore.replicaSource(of: "l") == state.position)
            // From the position it holds, the same pull commits (the head unchanged).
            try await commitPull(from: state.position)
            #expect(try await replicaStore.snapshot(of: "l", at: nil).version == head.version)
            #expect(try await replicaStore.verify(list: "l", progress: nil).isValid)
        }
    }

    /// What a caller's closure throws inside a store's transaction reaches the caller as it was
    /// thrown (a replica's digest check, an edit's body), and nothing is written.
    @Test(arguments: EngineKind.available)
    func errorsOfTheCallersClosuresPassThrough(_ engine: EngineKind) async throws {
        struct Refusal: Error, Equatable {}
        try await engine.withStore { stores in
            let store = stores[0]
            try await store.commit(OfflineEditor.start(sections: 1, elements: 2), to: "l", expectedVersion: nil, author: nil, message: nil)
            await #expect(throws: Refusal()) {
                try await store.edit("l", expectedVersion: nil, author: nil, message: nil) { _ in throw Refusal() }
            }
            let position = ReplicaSource(store: StoreIdentity(uuid: "other", epoch: 1), list: "l", version: 1, digest: ListDigest.of([]))
            await #expect(throws: Refusal()) {
                try await store.commitReplica([], to: "r", source: position, author: nil, message: nil) { _ in throw Refusal() }
            }
            #expect(try await store.lists().map(\.name) == ["l"])
            #expect(try await store.summary(of: "l").version == 1)
            #expect(try await store.replicaSource(of: "r") == nil)
        }
    }

    /// A list cannot replicate its own store, however the store is reached (here a second handle).
    @Test(arguments: EngineKind.available)
    func aReplicaOfItsOwnStoreIsRefused(_ engine: EngineKind) async throws {
        try await engine.withStore(handles: 2) { stores in try await Self.refuseOwn(stores[0], stores[1]) }
    }

    private static func refuseOwn(_ store: some ReplicaStore, _ other: any ReplicaStore) async throws {
        try await store.commit(OfflineEditor.start(sections: 1, elements: 2), to: "l", expectedVersion: nil, author: nil, message: nil)
        var options = ReplicaPullOptions()
        options.sourceList = "l"
        let refused = await #expect(throws: StoreError.self) {
            try await Replica(store: store, list: "copy").pull(from: LocalSource(other), options: options)
        }
        #expect(refused?.code == .invalidArgument)
        #expect(try await store.lists().map(\.name) == ["l"])
    }
}
