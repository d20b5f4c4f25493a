import Foundation
import ListDiff
import ListJSON
import ListMerge
import ListStore
import ListStoreTestSupport
import ListStoreWire
import ListSync
import Testing

/// A list has an identity of its own, made when it is created and never reused: a replica (and a
/// replica set) of a list that was deleted never takes a new list of the same name for it, merges
/// none of its local changes into it, and reports them as `listDeleted` conflicts; its history is
/// the new list's alone. Through the Swift API, against the source in this process and over HTTP.
@Suite struct ListIdentityTests {
    enum Via: String, CaseIterable, Sendable { case local, http }

    /// Runs `body` with a source store and a `ListSource & FeedSource` reading it `via`.
    func withSource(
        _ via: Via, _ body: (_ store: Store, _ source: any FeedSource, _ directory: TemporaryDirectory) async throws -> Void
    ) async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("source.liststore"))
        try await store.commit(linearList(1), to: "warm-up")  // creates the store before a server opens it
        switch via {
        case .local:
            try await body(store, LocalSource(store), directory)
        case .http:
            try await ServerHarness.with(store) { server in try await body(store, try server.source(), directory) }
        }
    }

    /// The list with one element more, "mine".
    func withMine(_ sections: [ListSection]) -> [ListSection] {
        var sections = sections
        sections[0].elements.append(ListItem(id: "mine", json: .string("written offline")))
        return sections
    }

    @Test(arguments: Via.allCases)
    func summariesNameEachListsIdentityAndANewListOfAnOldNameHasAnother(_ via: Via) async throws {
        try await withSource(via) { store, source, _ in
            try await store.commit(linearList(2), to: "shop")
            let first = try #require(try await source.summary(of: "shop").id)
            try await store.commit(linearList(3), to: "shop")
            #expect(try await source.summary(of: "shop").id == first)
            #expect(try await store.lists().first { $0.name == "shop" }?.id == first)
            try await store.deleteList("shop")
            try await store.commit(linearList(2), to: "shop")
            let second = try #require(try await source.summary(of: "shop").id)
            #expect(second != first)
        }
    }

    /// The issue's first case: an offline edit, the list deleted and made anew under its name, then
    /// a sync. The edit is reported, not merged into the new list; the replica's history is the new
    /// list's alone.
    @Test(arguments: Via.allCases)
    func aReplicaReportsItsEditsToADeletedListInsteadOfMergingThemIntoItsSuccessor(_ via: Via) async throws {
        try await withSource(via) { store, source, directory in
            try await store.commit(linearList(2), to: "users/ana/shop")
            try await store.commit(linearList(3), to: "users/ana/shop")
            let replica = Replica(store: try Store(path: directory.file("phone.liststore")), list: "users/ana/shop")
            try await replica.pull(from: source)
            try await replica.store.commit(withMine(linearList(3)), to: "users/ana/shop")

            try await store.deleteList("users/ana/shop")
            try await store.commit(linearList(1, prefix: "new"), to: "users/ana/shop")
            let synced = try await replica.sync(with: source)
            #expect(synced.push.pushed == 0)
            #expect(synced.pull.reason == .listReplaced && synced.pull.resynced)
            #expect(synced.pull.conflicts.map(\.kind) == [.listDeleted] && synced.pull.conflicts.map(\.item.id) == ["mine"])
            #expect(synced.pull.conflicts[0].mine?.serialized().contains("written offline") == true)
            // Nothing of the edit reached the new list, and the replica is the new list's.
            #expect(try await store.snapshot(of: "users/ana/shop").sections[0].elements.map(\.id) == ["new0"])
            #expect(try await replica.store.snapshot(of: "users/ana/shop").digest == store.snapshot(of: "users/ana/shop").digest)
            #expect(try await replica.store.journal(of: "users/ana/shop").entries.map(\.version) == [1])
            let status = try #require(try await replica.status())
            #expect(status.pending == 0 && status.lastConflicts.map(\.item.id) == ["mine"])
            #expect(try await replica.store.outbox(of: "users/ana/shop").isEmpty)
            // From here on it follows the new list as any replica does.
            try await store.commit(linearList(2, prefix: "new"), to: "users/ana/shop")
            let again = try await replica.sync(with: source)
            #expect(again.pull.reason == nil && again.pull.conflicts.isEmpty && again.pull.version == 2)
            #expect(try await replica.store.verify().isValid)
        }
    }

    @Test(arguments: Via.allCases)
    func aReplicaWithoutEditsKeepsNoneOfTheOldListsHistory(_ via: Via) async throws {
        try await withSource(via) { store, source, directory in
            try await store.commit(linearList(2), to: "shop")
            try await store.commit(linearList(3), to: "shop")
            let replica = Replica(store: try Store(path: directory.file("phone.liststore")), list: "shop")
            try await replica.pull(from: source)
            try await store.deleteList("shop")
            for count in 1...3 { try await store.commit(linearList(count, prefix: "n"), to: "shop") }
            let pulled = try await replica.pull(from: source)
            #expect(pulled.reason == .listReplaced && pulled.conflicts.isEmpty && pulled.version == 3)
            let sourceDigests = try await store.journal(of: "shop").entries.map(\.digest)
            #expect(try await replica.store.journal(of: "shop").entries.map(\.digest) == [sourceDigests.last!])
            #expect(try await replica.store.snapshot(of: "shop").digest == store.snapshot(of: "shop").digest)
        }
    }

    /// A list deleted and not made anew: the replica's edits are reported (its status keeps them),
    /// leave its outbox, and the pull says the list is gone; the replica keeps what it held.
    @Test(arguments: Via.allCases)
    func aReplicaReportsItsEditsToAListDeletedAtTheSource(_ via: Via) async throws {
        try await withSource(via) { store, source, directory in
            try await store.commit(linearList(2), to: "shop")
            let replica = Replica(store: try Store(path: directory.file("phone.liststore")), list: "shop")
            try await replica.pull(from: source)
            try await replica.store.commit(withMine(linearList(2)), to: "shop")
            try await store.deleteList("shop")
            do {
                try await replica.sync(with: source)
                Issue.record("a sync of a deleted list succeeded")
            } catch let error as StoreError {
                #expect(error.code == .listNotFound && error.message.contains("listDeleted"), "\(error)")
            }
            let status = try #require(try await replica.status())
            #expect(status.pending == 0 && status.lastConflicts.map(\.kind) == [.listDeleted])
            #expect(status.lastConflicts.map(\.item.id) == ["mine"])
            #expect(try await replica.store.snapshot(of: "shop").sections == withMine(linearList(2)))
            #expect(try await replica.store.deleteList("shop") == 2)
        }
    }

    /// Told to (`replacing`), the replica follows the new list and its edits go there.
    @Test(arguments: Via.allCases)
    func toldToReplaceTheReplicaTakesItsEditsToTheNewList(_ via: Via) async throws {
        try await withSource(via) { store, source, directory in
            try await store.commit(linearList(2), to: "shop")
            let replica = Replica(store: try Store(path: directory.file("phone.liststore")), list: "shop")
            try await replica.pull(from: source)
            try await replica.store.commit(withMine(linearList(2)), to: "shop")
            try await store.deleteList("shop")
            try await store.commit(linearList(1, prefix: "new"), to: "shop")
            var options = Replica<Store>.PullOptions()
            options.replacing = true
            let synced = try await replica.sync(with: source, options: options)
            #expect(synced.pull.conflicts.isEmpty && synced.pull.pending == 0)
            #expect(try await store.snapshot(of: "shop").sections[0].elements.map(\.id).contains("mine"))
            #expect(try await replica.store.snapshot(of: "shop").digest == store.snapshot(of: "shop").digest)
        }
    }

    /// A push made for a list that no longer exists is refused, even when a list of its name does.
    @Test func aSourceRefusesAPushMadeForAnotherList() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("source.liststore"))
        try await store.commit(linearList(2), to: "shop")
        let old = try #require(try await store.summary(of: "shop").id)
        try await store.deleteList("shop")
        try await store.commit(linearList(2), to: "shop")
        let intents = [Intent.deleteElement(ItemRef("e0"))]
        await #expect(throws: StoreError.self) {
            try await store.merge(Push(id: PushID(client: "c", seq: 1), intents: intents, listID: old), into: "shop")
        }
        #expect(try await store.snapshot(of: "shop").sections[0].elements.count == 2)
        let current = try await store.summary(of: "shop").id
        let answer = try await store.merge(Push(id: PushID(client: "c", seq: 1), intents: intents, listID: current), into: "shop")
        #expect(answer.version == 2)
    }

    /// The issue's second case: a replica set pushes its edit to a list that was deleted and made
    /// anew; the edit is refused, reported once as `listDeleted`, and the new list is the set's.
    @Test(arguments: Via.allCases)
    func aReplicaSetReportsEditsToAReplacedListOnceAndMergesThemNowhere(_ via: Via) async throws {
        try await withSource(via) { store, source, directory in
            for list in ["users/ana/sa", "users/ana/sb"] { try await store.commit(linearList(2), to: list) }
            let set = try ReplicaSet(store: try Store(path: directory.file("phone.liststore")), lists: "users/ana/**")
            try await set.pull(from: source)
            try await set.store.commit(withMine(linearList(2)), to: "users/ana/sb")
            try await store.deleteList("users/ana/sb")
            try await store.commit(linearList(1, prefix: "b"), to: "users/ana/sb")

            let synced = try await set.sync(with: source)
            #expect(synced.push.allSatisfy { $0.pushed == 0 })
            #expect(try await store.snapshot(of: "users/ana/sb").sections[0].elements.map(\.id) == ["b0"])
            let conflicts = try #require(synced.pull.conflicts["users/ana/sb"])
            #expect(conflicts.map(\.kind) == [.listDeleted] && conflicts.map(\.item.id) == ["mine"])
            #expect(try await set.store.snapshot(of: "users/ana/sb").digest == store.snapshot(of: "users/ana/sb").digest)
            #expect(try await set.store.outbox(of: "users/ana/sb").isEmpty)
            // Nothing more to report, nothing pending.
            let again = try await set.sync(with: source)
            #expect(again.pull.conflicts.isEmpty && again.push.isEmpty)
        }
    }

    /// A source whose feed answers a page, then runs `then` once (before the set acts on the page).
    struct ChangingAfterAPage: FeedSource, _ForwardingSource {
        let feed: any FeedSource
        var base: any ListSource { feed }
        let then: _Locked<(@Sendable () async throws -> Void)?>

        func lists(matching pattern: ListPattern) async throws -> [ListSummary] { try await feed.lists(matching: pattern) }
        func followChanges(of pattern: ListPattern, after cursor: FeedCursor?) -> AsyncThrowingStream<FeedChange, any Error> {
            feed.followChanges(of: pattern, after: cursor)
        }
        func changes(of pattern: ListPattern, after cursor: FeedCursor?, limit: Int, wait: Duration) async throws -> FeedChanges {
            let page = try await feed.changes(of: pattern, after: cursor, limit: limit, wait: wait)
            if let then = then.withLock({ body in defer { body = nil }; return body }) { try await then() }
            return page
        }
    }

    /// A set that meets the old list's commit first, while the list is deleted and made anew (the
    /// commit is pulled alone, which replaces the replica by one of the new list), then the old
    /// list's deletion: the deletion is of the old list, and leaves the new one's replica alone.
    @Test(arguments: Via.allCases)
    func aDeletionEventLeavesTheReplicaOfTheListMadeAnew(_ via: Via) async throws {
        try await withSource(via) { store, feed, directory in
            try await store.commit(linearList(2), to: "p/l")
            let set = try ReplicaSet(store: try Store(path: directory.file("phone.liststore")), lists: "p/**")
            try await set.pull(from: feed)
            try await set.store.commit(withMine(linearList(2)), to: "p/l")
            try await store.commit(linearList(3), to: "p/l")
            let source = ChangingAfterAPage(
                feed: feed,
                then: _Locked({
                    try await store.deleteList("p/l")
                    try await store.commit(linearList(1, prefix: "y"), to: "p/l")
                }))
            let pulled = try await set.pull(from: source)
            #expect(!pulled.deleted.contains("p/l"), "\(pulled.changes)")
            #expect(pulled.conflicts["p/l"]?.map(\.item.id) == ["mine"])
            #expect(try await set.store.snapshot(of: "p/l").digest == store.snapshot(of: "p/l").digest)
            #expect(try await set.store.replicaSource(of: "p/l")?.listID == (try await store.summary(of: "p/l").id))
        }
    }

    /// `deleteList` refuses a replica list with local changes unless told to discard them.
    @Test func deletingAReplicaListWithPendingChangesIsRefusedUnlessTold() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("source.liststore"))
        try await store.commit(linearList(2), to: "shop")
        let replica = Replica(store: try Store(path: directory.file("phone.liststore")), list: "shop")
        try await replica.pull(from: LocalSource(store))
        try await replica.store.commit(withMine(linearList(2)), to: "shop")
        do {
            try await replica.store.deleteList("shop")
            Issue.record("deleted a list with a pending change")
        } catch let error as StoreError {
            #expect(error.code == .pendingChanges && error.message.contains("1 local change"))
        }
        #expect(try await replica.store.outbox(of: "shop").count == 1)
        #expect(try await replica.store.deleteList("shop", discardingPending: true) == 2)
        #expect(try await replica.store.lists().isEmpty)
    }
}
