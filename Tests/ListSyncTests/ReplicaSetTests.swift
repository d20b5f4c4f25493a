import Foundation
import ListDiff
import ListDiffTestSupport
import ListJSON
import ListMerge
import ListStore
import ListStoreTestSupport
import ListStoreWire
import ListSync
import Testing

/// `ReplicaSet`: every list of a pattern in one replica store over the source's feed, with one
/// cursor; lists that come and go; local changes to deleted lists reported; resumed after a failure
/// at any point with nothing doubled or skipped.
@Suite struct ReplicaSetTests {
    /// The replica's lists of the pattern equal the source's, list by list (digests and sections),
    /// and each replica list stands at its source list's version.
    static func expectEqual(_ replica: Store, _ source: Store, _ pattern: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let matcher = try ListPattern(pattern)
        let expected = try await source.lists().filter { matcher.matches($0.name) }
        let actual = replica.exists ? try await replica.lists().filter { matcher.matches($0.name) } : []
        #expect(actual.map(\.name) == expected.map(\.name), sourceLocation: sourceLocation)
        for summary in expected where actual.contains(where: { $0.name == summary.name }) {
            #expect(try await replica.summary(of: summary.name).digest == summary.digest, "\(summary.name)", sourceLocation: sourceLocation)
            #expect(try await replica.replicaSource(of: summary.name)?.version == summary.version, "\(summary.name)", sourceLocation: sourceLocation)
        }
    }

    /// A set's lists copied in pages (their sources' histories pruned) report their progress to
    /// `onProgress`, each list by name, until it is whole.
    @Test func aSetReportsTheProgressOfEachListItCopiesInPages() async throws {
        let directory = try TemporaryDirectory()
        let source = try Store(path: directory.file("source.liststore"))
        // Some 6 MB each: a first page of 256 KiB, then two of 4 MiB at most.
        let lists = ["users/ana/inbox": 40, "users/ana/work": 30]
        for (list, sections) in lists {
            try await source.commit(PagedSyncTests.bigList(sections: sections, elements: 400, tag: String(repeating: " and more", count: 30)), to: list)
            _ = try await source.prune(list, .keepLast(0))
        }
        var set = try ReplicaSet(store: try Store(path: directory.file("phone.liststore")), lists: "users/ana/**")
        let reports = _Locked<[SyncProgress]>([])
        set.onProgress = { progress in reports.withLock { $0.append(progress) } }
        let pulled = try await set.pull(from: LocalSource(source))
        try await Self.expectEqual(set.store, source, "users/ana/**")
        #expect(pulled.pulled.allSatisfy { $0.pages?.pages == 3 })
        let heard = reports.withLock { $0 }
        for (list, sections) in lists {
            let mine = heard.filter { $0.list == list }
            #expect(mine.count == 3 && mine.last?.fractionCompleted == 1 && mine.last?.totalElements == sections * 400, "\(list)")
            #expect(zip(mine.dropFirst(), mine).allSatisfy { $0.records > $1.records })
        }
    }

    @Test func aSetKeepsEveryListOfItsPatternAsTheyComeAndGo() async throws {
        let directory = try TemporaryDirectory()
        let source = try Store(path: directory.file("source.liststore"))
        for list in ["users/ana/inbox", "users/ana/work", "users/bob/inbox"] { try await source.commit(linearList(3), to: list) }
        let set = try ReplicaSet(store: try Store(path: directory.file("phone.liststore")), lists: "users/ana/**")
        let first = try await set.pull(from: LocalSource(source))
        #expect(first.created == ["users/ana/inbox", "users/ana/work"] && first.applied == 2 && first.reason == .noCursor)
        try await Self.expectEqual(set.store, source, "users/ana/**")
        #expect(try await set.store.lists().map(\.name) == ["users/ana/inbox", "users/ana/work"])

        try await source.commit(linearList(4), to: "users/ana/inbox")
        try await source.commit(linearList(5), to: "users/bob/inbox")
        try await source.commit(linearList(2), to: "users/ana/projects/new")
        _ = try await source.deleteList("users/ana/work")
        let second = try await set.pull(from: LocalSource(source))
        #expect(second.applied == 2 && second.created == ["users/ana/projects/new"] && second.deleted == ["users/ana/work"])
        #expect(!second.resynced)
        try await Self.expectEqual(set.store, source, "users/ana/**")

        // The name used again: a new list, from version 1, with nothing of the old one.
        try await source.commit(linearList(7), to: "users/ana/work")
        try await set.pull(from: LocalSource(source))
        try await Self.expectEqual(set.store, source, "users/ana/**")
        #expect(try await set.store.journal(of: "users/ana/work").entries.count == 1)
        #expect(try await set.pull(from: LocalSource(source)).changes.isEmpty)
        let position = try #require(try await set.position())
        #expect(position.store == (try await source.identity()) && position.pattern == "users/ana/**")
    }

    /// Local changes to a list the source deletes are not lost silently: each is reported as a
    /// `listDeleted` conflict with its content (in the pull's result and the set's position), and
    /// the list is removed.
    @Test func pendingChangesToADeletedListAreReportedThenTheListGoes() async throws {
        let directory = try TemporaryDirectory()
        let source = try Store(path: directory.file("source.liststore"))
        try await source.commit(linearList(3), to: "team/plan")
        try await source.commit(linearList(2), to: "team/notes")
        let set = try ReplicaSet(store: try Store(path: directory.file("phone.liststore")), lists: "team/*")
        try await set.pull(from: LocalSource(source))
        var mine = linearList(3)
        mine[0].elements.append(ListItem(id: "mine", json: .string("written offline")))
        try await set.store.commit(mine, to: "team/plan")
        #expect(try await set.store.outbox(of: "team/plan").count == 1)

        _ = try await source.deleteList("team/plan")
        let result = try await set.pull(from: LocalSource(source))
        #expect(result.deleted == ["team/plan"])
        let conflicts = try #require(result.conflicts["team/plan"])
        #expect(conflicts.map(\.kind) == [.listDeleted] && conflicts.map(\.item.id) == ["mine"])
        #expect(conflicts[0].mine?.serialized().contains("written offline") == true)
        #expect(try await set.position()?.lastConflicts["team/plan"] == conflicts)
        #expect(try await set.store.lists().map(\.name) == ["team/notes"])
    }

    /// A list with local changes is rebased onto the source's commits (pulled alone), and its
    /// changes reach the source with the set's push.
    @Test func aSetPushesEveryListsChangesAndRebasesThem() async throws {
        let directory = try TemporaryDirectory()
        let source = try Store(path: directory.file("source.liststore"))
        for list in ["a", "b", "c"] { try await source.commit(linearList(3), to: list) }
        let set = try ReplicaSet(store: try Store(path: directory.file("phone.liststore")), lists: "*")
        try await set.pull(from: LocalSource(source))
        var mine = linearList(3)
        mine[0].elements.insert(ListItem(id: "x", json: .string("x")), at: 0)
        try await set.store.commit(mine, to: "a")
        try await set.store.commit(mine, to: "c")
        try await source.commit(linearList(5), to: "a")
        let synced = try await set.sync(with: LocalSource(source))
        #expect(synced.push.map(\.list) == ["a", "c"] && synced.push.allSatisfy { $0.pushed == 1 })
        #expect(try await set.store.outbox(of: "a").isEmpty)
        #expect(try await set.store.outbox(of: "c").isEmpty)
        try await Self.expectEqual(set.store, source, "*")
        #expect(try await source.snapshot(of: "a").sections[0].elements.map(\.id).first == "x")
    }

    /// A cursor behind what the source retains: the set starts over, pulls each list by itself,
    /// and removes the lists deleted meanwhile.
    @Test func aSetBehindAPrunedFeedStartsOverAndConverges() async throws {
        let directory = try TemporaryDirectory()
        let source = try Store(path: directory.file("source.liststore"))
        for list in ["a", "b", "c"] { try await source.commit(linearList(3), to: list) }
        let set = try ReplicaSet(store: try Store(path: directory.file("phone.liststore")), lists: "**")
        try await set.pull(from: LocalSource(source))
        for k in 0..<4 { try await source.commit(linearList(4 + k), to: "a") }
        _ = try await source.deleteList("b")
        _ = try await source.prune("a", .keepLast(1), force: true)
        let result = try await set.pull(from: LocalSource(source))
        #expect(result.resynced && result.reason == .pruned)
        #expect(result.deleted == ["b"])
        try await Self.expectEqual(set.store, source, "**")
    }

    /// Random histories of many lists (commits, new lists, deletions, names used again, pruning)
    /// while the set's pulls fail at random points, as a killed process stops: each pull after a
    /// failure resumes, and at the end the replica equals the source on every list of the pattern,
    /// every source commit applied once (each list's replica journal has one entry per source
    /// commit it applied, never two for one).
    @Test(.timeLimit(.minutes(5)), arguments: (1...8).map { 0x5E7_0 + UInt64($0) })
    func pullsStoppedAtRandomPointsResumeWithNothingDoubledOrSkipped(_ seed: UInt64) async throws {
        let directory = try TemporaryDirectory()
        let source = try Store(path: directory.file("source.liststore"))
        let replica = try Store(path: directory.file("phone.liststore"))
        let set = try ReplicaSet(store: replica, lists: "users/ana/**")
        var random = SplitMix64(seed: seed)
        let names = ["users/ana/a", "users/ana/b", "users/ana/c/d", "users/bob/a", "team/x"]
        var failures = 0
        for step in 0..<150 {
            let list = names[Int(random.next() % UInt64(names.count))]
            switch random.next() % 10 {
            case 0: _ = try? await source.deleteList(list)
            case 1: _ = try? await source.prune(list, .keepLast(Int(random.next() % 3)), force: true)
            default: try await source.commit(linearList(1 + Int(random.next() % 8), content: step), to: list)
            }
            if random.next() % 4 == 0 {
                let stopAfter = Int(random.next() % 4)
                do {
                    try await set.pull(from: StoppingSource(LocalSource(source), after: stopAfter))
                } catch is StoppingSource<LocalSource>.Stopped {
                    failures += 1
                }
            }
        }
        try await set.pull(from: LocalSource(source))
        try await Self.expectEqual(replica, source, "users/ana/**")
        #expect(failures > 5)
        #expect(try await replica.verify().isValid)
        // Once more: nothing to do.
        #expect(try await set.pull(from: LocalSource(source)).applied == 0)
    }

    /// A list of the replica store's own that the set's pattern names is not the source's: the
    /// source deleting its list of that name leaves it as it is.
    @Test func theSourcesDeletionLeavesAListThatIsNotItsReplica() async throws {
        let directory = try TemporaryDirectory()
        let source = try Store(path: directory.file("source.liststore"))
        try await source.commit(linearList(3), to: "team/a")
        let replica = try Store(path: directory.file("phone.liststore"))
        try await replica.commit(linearList(5), to: "team/mine")
        let set = try ReplicaSet(store: replica, lists: "team/*")
        try await set.pull(from: LocalSource(source))
        try await source.commit(linearList(2), to: "team/mine")
        _ = try await source.deleteList("team/mine")
        let result = try await set.pull(from: LocalSource(source))
        #expect(result.deleted.isEmpty)
        #expect(try await replica.snapshot(of: "team/mine").sections == linearList(5))
    }

    @Test func badPatternsAreRefused() throws {
        let store = InMemoryStore()
        #expect(throws: (any Error).self) { try ReplicaSet(store: store, lists: "") }
        #expect(throws: SyncError.self) { try ReplicaSet(store: store, lists: "users/{sub}/**") }
    }
}

/// A source whose feed stops, as a killed process does, after `after` changes have been read
/// (the changes of the page it stops in are cut there, and the next read fails).
struct StoppingSource<Base: FeedSource>: FeedSource {
    struct Stopped: Error {}
    let base: Base
    let budget: _Budget

    final class _Budget: @unchecked Sendable {
        private let lock = NSLock()
        private var left: Int
        init(_ left: Int) { self.left = left }
        func take(_ wanted: Int) -> Int {
            lock.lock()
            defer { lock.unlock() }
            let given = min(wanted, left)
            left -= given
            return given
        }
    }

    init(_ base: Base, after changes: Int) {
        self.base = base
        budget = _Budget(changes)
    }

    func identity() async throws -> StoreIdentity { try await base.identity() }
    func summary(of list: String) async throws -> ListSummary { try await base.summary(of: list) }
    func journal(of list: String, after version: Int, limit: Int) async throws -> JournalPage {
        try await base.journal(of: list, after: version, limit: limit)
    }
    func snapshot(of list: String, at version: Int?) async throws -> ListSnapshot { try await base.snapshot(of: list, at: version) }
    func catchUp(of list: String, from version: Int, applyingTo state: [ListSection]) async throws -> (changeset: ListChangeset, head: ListSnapshot) {
        try await base.catchUp(of: list, from: version, applyingTo: state)
    }
    func waitForCommit(to list: String, after version: Int, timeout: Duration) async throws -> Bool {
        try await base.waitForCommit(to: list, after: version, timeout: timeout)
    }
    func acknowledge(consumer name: String, of list: String, version: Int) async throws {
        try await base.acknowledge(consumer: name, of: list, version: version)
    }
    func push(_ push: Push, to list: String) async throws -> PushAnswer { try await base.push(push, to: list) }
    func pushes(from client: String, to list: String, seqs: ClosedRange<Int>) async throws -> [PushAnswer] {
        try await base.pushes(from: client, to: list, seqs: seqs)
    }
    func lists(matching pattern: ListPattern) async throws -> [ListSummary] { try await base.lists(matching: pattern) }
    func changes(of pattern: ListPattern, after cursor: FeedCursor?, limit: Int, wait: Duration) async throws -> FeedChanges {
        var page = try await base.changes(of: pattern, after: cursor, limit: limit, wait: wait)
        let given = budget.take(page.changes.count + 1)
        if given == 0 { throw Stopped() }
        if given <= page.changes.count {
            // Cut: the changes before the stop, and a cursor no further than the last of them.
            page.changes = Array(page.changes.prefix(given - 1))
            page.cursor = page.changes.last?.cursor ?? cursor ?? page.cursor
            page.hasMore = true
            if page.changes.isEmpty { throw Stopped() }
        }
        return page
    }
}

/// The documents of `pull|push|sync|status --lists --json`: keys in code point order (the writer
/// checks it), every member there.
@Suite struct ReplicaSetDocumentTests {
    @Test func setDocumentsAreWellFormed() throws {
        let identity = StoreIdentity(uuid: "00000000-0000-4000-8000-000000000001", epoch: 2)
        let conflict = Conflict(.listDeleted, "x", section: "s", mine: .string("m"))
        var pull = ReplicaSetPullResult()
        pull.cursor = FeedCursor(store: identity, position: 9)
        pull.applied = 2
        pull.changes = [
            ReplicaSetChange(list: "a", kind: .created, version: 1), ReplicaSetChange(list: "b", kind: .deleted, conflicts: [conflict]),
        ]
        pull.conflicts = ["b": [conflict]]
        let pulled = try JSONValue(parsing: ReplicaDocument.setPullResult(pull, lists: "**"))
        #expect(pulled["created"] == ["a"] && pulled["deleted"] == ["b"] && pulled["cursor"]?.stringValue == "\(identity.uuid).2.9")
        let change = try JSONValue(parsing: ReplicaDocument.setChange(pull.changes[1]))
        #expect(change["change"] == "deleted" && change["conflicts"]?.arrayValue?.count == 1 && change["schemaVersion"] == 1)
        let versioned = try JSONValue(parsing: ReplicaDocument.setChange(pull.changes[0]))
        #expect(versioned["version"] == 1 && versioned["schemaVersion"] == 1)
        let synced = try JSONValue(parsing: ReplicaDocument.setSyncResult(ReplicaSetSyncResult(push: [], pull: pull), lists: "**"))
        #expect(synced["push"]?["pushes"] == [] && synced["pull"]?["applied"] == 2)
        let position = ReplicaSetPosition(pattern: "**", store: identity, position: 9, lastConflicts: ["b": [conflict]], updatedAt: "t")
        let status = try JSONValue(parsing: ReplicaDocument.setStatus(position, statuses: [], lists: "**"))
        #expect(status["position"]?["position"] == 9 && status["lastConflicts"]?["b"]?.arrayValue?.count == 1)
        #expect(try JSONValue(parsing: ReplicaDocument.setStatus(nil, statuses: [], lists: "**"))["position"] == .null)
    }
}
