import Foundation
import ListDiff
import ListJSON
import ListMerge
import ListStore
import ListStoreTestSupport
import ListSync
import Testing

/// Sections from `("section", ["element", …])` pairs; every item's content is `{"v":"<id>"}`.
func sections(_ layout: [(String, [String])]) -> [ListSection] {
    layout.map { section, elements in
        ListSection(
            model: ListItem(id: section, json: ["v": .string(section)]),
            elements: elements.map { ListItem(id: $0, json: ["v": .string($0)]) })
    }
}

/// The list as `("section", ["element", …])` pairs.
func layout(_ sections: [ListSection]) -> [[String]] {
    sections.map { [$0.model.id] + $0.elements.map(\.id) }
}

/// A source that merges each push and then loses the answer once every `every` pushes (the push was
/// applied; the replica hears a transient transport error), as a network that drops answers does.
struct LosingAnswers: _ForwardingSource {
    let base: any ListSource
    let every: Int
    let pushes = _Locked(0)

    func push(_ push: Push, to list: String) async throws -> PushAnswer {
        let answer = try await base.push(push, to: list)
        let count = pushes.withLock { count in
            count += 1
            return count
        }
        if count % every == 0 { throw SyncError.transport("the answer was lost", transient: true) }
        return answer
    }
}

@Suite struct OfflineWriteTests {
    /// A source with `layout` and a replica that pulled it.
    func setUp(_ directory: TemporaryDirectory, _ start: [(String, [String])]) async throws -> (Store, Replica<Store>) {
        let source = try Store(path: directory.file("source.liststore"))
        try await source.commit(sections(start), to: "l")
        let replica = Replica(store: try Store(path: directory.file("replica.liststore")), list: "l")
        try await replica.pull(from: LocalSource(source))
        return (source, replica)
    }

    @Test func aLocalChangeIsCommittedAtOnceAndQueued() async throws {
        let directory = try TemporaryDirectory()
        let (source, replica) = try await setUp(directory, [("s", ["a", "b"])])
        let result = try await replica.store.commit(sections([("s", ["b", "a", "c"])]), to: "l", author: "ana")
        #expect(result.changed && result.pendingSeq == 1)
        #expect(layout(try await replica.store.snapshot(of: "l").sections) == [["s", "b", "a", "c"]])
        let outbox = try await replica.store.outbox(of: "l")
        #expect(outbox.map(\.seq) == [1] && outbox[0].author == "ana" && outbox[0].pushedVersion == nil)
        #expect(outbox[0].localVersion == result.version)
        let status = try #require(try await replica.status())
        #expect(status.pending == 1 && status.pushed == 0 && status.source.version == 1)
        // A commit on a list that is no replica queues nothing.
        #expect(try await source.commit(sections([("s", ["a"])]), to: "l").pendingSeq == nil)
        #expect(try await replica.store.verify().isValid)
    }

    @Test func pushThenPullConvergesAndEmptiesTheOutbox() async throws {
        let directory = try TemporaryDirectory()
        let (source, replica) = try await setUp(directory, [("s", ["a", "b", "c"])])
        try await replica.store.commit(sections([("s", ["c", "a", "b", "d"])]), to: "l")
        let synced = try await replica.sync(with: LocalSource(source))
        #expect(synced.push.pushed == 1 && synced.push.duplicates == 0 && synced.push.conflicts.isEmpty)
        #expect(synced.pull.pending == 0 && synced.pull.confirmedChanges == 1)
        #expect(layout(try await source.snapshot(of: "l").sections) == [["s", "c", "a", "b", "d"]])
        #expect(try await replica.store.snapshot(of: "l").digest == source.snapshot(of: "l").digest)
        #expect(try await replica.store.outbox(of: "l").isEmpty)
        let entry = try #require(try await source.journal(of: "l").entries.last)
        let client = try await replica.store.clientID()
        #expect(entry.pushID == PushID(client: client, seq: 1))
        #expect(try await replica.status()?.pending == 0)
    }

    /// Mine and theirs edit concurrently: mine moves c first, deletes b and edits a; theirs inserts x
    /// after a and edits a's content too. The merge keeps both, reports the clash, and both ends agree.
    @Test func concurrentEditsMergeAndTheClashIsReported() async throws {
        let directory = try TemporaryDirectory()
        let (source, replica) = try await setUp(directory, [("s", ["a", "b", "c"])])
        var mine = sections([("s", ["c", "a"])])
        mine[0].elements[1] = ListItem(id: "a", json: ["v": "mine"])
        try await replica.store.commit(mine, to: "l")
        var theirs = sections([("s", ["a", "x", "b", "c"])])
        theirs[0].elements[0] = ListItem(id: "a", json: ["v": "theirs"])
        try await source.commit(theirs, to: "l")

        // A pull before the push shows the source's change with mine on top.
        let pulled = try await replica.pull(from: LocalSource(source))
        #expect(pulled.pending == 1 && pulled.version == 2)
        #expect(layout(try await replica.store.snapshot(of: "l").sections) == [["s", "c", "a", "x"]])

        let synced = try await replica.sync(with: LocalSource(source))
        #expect(synced.push.conflicts == [Conflict(.contentConflict, "a", section: "s", key: "v", mine: "mine", theirs: "theirs")])
        let head = try await source.snapshot(of: "l")
        #expect(layout(head.sections) == [["s", "c", "a", "x"]])
        #expect(head.sections[0].elements[1] == ListItem(id: "a", json: ["v": "mine"]))
        #expect(try await replica.store.snapshot(of: "l").digest == head.digest)
        #expect(try await replica.status()?.lastConflicts == synced.push.conflicts)
        #expect(try await source.journal(of: "l").entries.last?.conflicts == synced.push.conflicts)
    }

    /// The source merges a push and the answer is lost: the push is sent again, answered from the
    /// record, and applied once.
    @Test func aPushWhoseAnswerWasLostIsAppliedOnce() async throws {
        let directory = try TemporaryDirectory()
        let (source, replica) = try await setUp(directory, [("s", ["a"])])
        let losing = LosingAnswers(base: LocalSource(source), every: 1)
        try await replica.store.commit(sections([("s", ["a", "b"])]), to: "l")
        await #expect(throws: SyncError.self) { try await replica.push(to: losing) }
        #expect(try await replica.status()?.pending == 1)
        let again = try await replica.push(to: LocalSource(source))
        #expect(again.pushed == 0 && again.duplicates == 1)
        // Moves are not idempotent; a second application would be visible.
        try await replica.store.commit(sections([("s", ["b", "a"])]), to: "l")
        try await source.commit(sections([("s", ["a", "b", "z"])]), to: "l")
        let lost = LosingAnswers(base: LocalSource(source), every: 1)
        await #expect(throws: SyncError.self) { try await replica.push(to: lost) }
        try await source.commit(sections([("s", ["z", "b", "a"])]), to: "l")
        try await replica.sync(with: LocalSource(source))
        #expect(layout(try await source.snapshot(of: "l").sections) == [["s", "z", "b", "a"]])
        #expect(try await replica.store.snapshot(of: "l").sections == source.snapshot(of: "l").sections)
        let pushes = try await source.journal(of: "l").entries.compactMap(\.pushID)
        #expect(pushes.map(\.seq) == [1, 2])
    }

    @Test func aPushOfAnotherListOrOutOfOrderIsRefusedAndChangesNothing() async throws {
        let directory = try TemporaryDirectory()
        let (source, _) = try await setUp(directory, [("s", ["a"])])
        let push = Push(id: PushID(client: "c", seq: 2), intents: [.deleteElement("a")])
        #expect(throws: StoreError.self) { try source.merge(push, into: "nope") }
        _ = try await source.merge(push, into: "l")
        let stale = Push(id: PushID(client: "c", seq: 1), intents: [.insertElement("b", content: .null, section: "s", after: nil, before: nil)])
        await #expect { try await source.merge(stale, into: "l") } throws: { ($0 as? StoreError)?.code == .pushOutOfOrder }
        #expect(try await source.summary(of: "l").version == 2)
        #expect(try await source.pushes(from: "c", to: "l", seqs: 1...5).map(\.seq) == [2])
        #expect(try await source.pushes(from: "d", to: "l", seqs: 1...5).isEmpty)
    }

    /// The source pruned past the replica's confirmed version: the replica resyncs its confirmed state
    /// by diff and keeps its local changes on top.
    @Test func aResyncKeepsLocalChanges() async throws {
        let directory = try TemporaryDirectory()
        let (source, replica) = try await setUp(directory, [("s", ["a", "b"])])
        try await replica.store.commit(sections([("s", ["a", "b", "mine"])]), to: "l")
        for k in 0..<3 { try await source.commit(sections([("s", ["a", "b", "t\(k)"])]), to: "l") }
        try await source.prune("l", .keepLast(0))
        let pulled = try await replica.pull(from: LocalSource(source))
        #expect(pulled.resynced && pulled.reason == .pruned && pulled.pending == 1)
        // Placed right after its neighbour in mine (rule 1).
        #expect(layout(try await replica.store.snapshot(of: "l").sections) == [["s", "a", "b", "mine", "t2"]])
        try await replica.sync(with: LocalSource(source))
        #expect(layout(try await source.snapshot(of: "l").sections) == [["s", "a", "b", "mine", "t2"]])
        #expect(try await replica.status()?.pending == 0)
        #expect(try await replica.store.outbox(of: "l").isEmpty)

        // Pushed, answer lost, then a resync: the source's record tells the change is in its head.
        try await replica.store.commit(sections([("s", ["a", "b", "mine", "t2", "more"])]), to: "l")
        await #expect(throws: SyncError.self) { try await replica.push(to: LosingAnswers(base: LocalSource(source), every: 1)) }
        try await source.commit(sections([("s", ["a", "b", "mine", "t2", "more", "t3"])]), to: "l")
        try await source.prune("l", .keepLast(0))
        let again = try await replica.pull(from: LocalSource(source))
        #expect(again.resynced && again.pending == 0 && again.confirmedChanges == 1)
        #expect(try await replica.store.snapshot(of: "l").sections == source.snapshot(of: "l").sections)
    }

    /// A replica of a replica writes: its push becomes a local change of the middle replica, which
    /// pushes it on; the journal names the push that made each version.
    @Test func aReplicaOfAReplicaWrites() async throws {
        let directory = try TemporaryDirectory()
        let (source, middle) = try await setUp(directory, [("s", ["a"])])
        let leaf = Replica(store: try Store(path: directory.file("leaf.liststore")), list: "l")
        try await leaf.pull(from: LocalSource(middle.store))
        try await leaf.store.commit(sections([("s", ["a", "leaf"])]), to: "l")
        try await leaf.sync(with: LocalSource(middle.store))
        #expect(try await middle.status()?.pending == 1)
        try await middle.sync(with: LocalSource(source))
        #expect(layout(try await source.snapshot(of: "l").sections) == [["s", "a", "leaf"]])
        try await leaf.sync(with: LocalSource(middle.store))
        for store in [middle.store, leaf.store] {
            #expect(try await store.snapshot(of: "l").sections == source.snapshot(of: "l").sections)
            #expect(try await store.outbox(of: "l").isEmpty)
            #expect(try await store.verify().isValid)
        }
    }

    /// A follower with `pushing` pushes a local change without being asked.
    @Test func aSyncingFollowerPushesLocalChanges() async throws {
        let directory = try TemporaryDirectory()
        let (source, replica) = try await setUp(directory, [("s", ["a"])])
        let follower = Task {
            try await replica.follow(from: LocalSource(source), pushing: true, localPollInterval: .milliseconds(20), wait: .seconds(5)) { _ in }
        }
        defer { follower.cancel() }
        try await replica.store.commit(sections([("s", ["a", "b"])]), to: "l")
        try await waitUntil("the follower pushed the commit") { try await source.summary(of: "l").version >= 2 }
        #expect(layout(try await source.snapshot(of: "l").sections) == [["s", "a", "b"]])
        follower.cancel()
        _ = await follower.result
    }

    /// Two pulls of one replica at once: each source version is applied once, neither fails nor
    /// resyncs, and the replica ends equal to the source.
    @Test func twoPullsOfOneReplicaAtOnceApplyEachVersionOnce() async throws {
        let directory = try TemporaryDirectory()
        let (source, replica) = try await setUp(directory, [("s", ["a"])])
        for round in 0..<20 {
            for k in 0..<5 { try await source.commit(sections([("s", ["a", "r\(round)", "k\(k)"])]), to: "l") }
            async let first = replica.pull(from: LocalSource(source))
            async let second = Replica(store: try Store(path: directory.file("replica.liststore")), list: "l")
                .pull(from: LocalSource(source))
            let results = try await [first, second]
            #expect(results.allSatisfy { !$0.resynced }, "\(results)")
            #expect(try await replica.store.snapshot(of: "l").sections == source.snapshot(of: "l").sections)
        }
        #expect(try await replica.store.verify().isValid)
    }

    /// The store restored from a backup advances its epoch, and gets a new client id with it.
    @Test func anAdvancedEpochGivesANewClientID() throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try store.commit(sections([("s", [])]), to: "l")
        let before = try store.clientID()
        try store.advanceEpoch()
        let after = try store.clientID()
        #expect(before != after && UUID(uuidString: after) != nil && UUID(uuidString: before) != nil)
    }
}
