import Dispatch
import Foundation
import ListDiffTestSupport
import ListStore
@_spi(StoreDriver) @_spi(FeedCursors) import ListStoreCore
import ListStorePostgres
import ListStorePostgresTestSupport
import ListStoreTestSupport
import PostgresNIO
import Testing

/// The store feed (`StoreDriver.feed(after:limit:including:)`) on every engine: every commit once, in
/// commit order, whatever the pages and filters; pruning expires older positions.
@Suite(.serialized, .heavyWork) struct StoreFeedTests {
    /// What the feed's events did to their lists' heads (`feedMoves`, what a journal server's
    /// watcher reads after each commit): every commit and deletion once, in order, with the version
    /// it made (none for a deletion; a deleted list's commits passed over), paged; without a
    /// position, the last position alone.
    @Test(arguments: EngineKind.available)
    func movesAreTheFeedsEventsWithoutTheirEntries(_ engine: EngineKind) async throws {
        try await engine.withStore { stores in
            let store = stores[0]
            let driver = try #require(store as? any StoreDriver)
            _ = try await driver.commit(linearList(1), to: "z", expectedVersion: nil, author: nil, message: nil)
            let start = try await store.feedMoves(after: nil, limit: 10)
            #expect(start.moves.isEmpty)
            var wanted = [FeedMove]()
            for (step, list) in ["a", "b", "a", "c", "a"].enumerated() {
                let result = try await driver.commit(linearList(step + 1), to: list, expectedVersion: nil, author: nil, message: nil)
                wanted.append(FeedMove(position: 0, list: list, version: result.version))
            }
            _ = try await driver.deleteList("b", discardingPending: false)
            // The deleted list's commits are passed over, as the feed passes over them.
            wanted.removeAll { $0.list == "b" }
            wanted.append(FeedMove(position: 0, list: "b", version: nil))
            var moves = [FeedMove]()
            var position = start.last
            while true {
                let read = try await store.feedMoves(after: position, limit: 2)
                moves += read.moves
                guard let last = read.moves.last else { break }
                position = last.position
                #expect(read.last >= position)
            }
            #expect(moves.map(\.list) == wanted.map(\.list), "\(engine)")
            #expect(moves.map(\.version) == wanted.map(\.version), "\(engine)")
            #expect(moves.map(\.position) == moves.map(\.position).sorted() && moves.last?.position == position)
            let feed = try await driver.feed(after: start.last, limit: 100)
            #expect(feed.events.map(\.position) == moves.map(\.position), "\(engine): the feed's own positions")
        }
    }

    /// Random commits to several lists through two handles, read meanwhile by followers with random
    /// page sizes, one of all lists and one of a user's: each gets every commit of its lists once, in
    /// the order they were made, at growing positions.
    @Test(arguments: EngineKind.available)
    func followersGetEveryCommitOnceInCommitOrder(_ engine: EngineKind) async throws {
        try await engine.withStore(handles: 2) { stores in
            let handles = try stores.map { try #require($0 as? any StoreDriver) }
            let lists = ["users/ana/inbox", "users/ana/work", "users/bo/inbox", "team", "a b/ü"]
            var rng = SplitMix64(seed: 0xFEED)
            var made: [(list: String, version: Int)] = []
            var followers = [Follower(including: { _ in true }), Follower(including: { $0.hasPrefix("users/ana/") })]
            for step in 0..<240 {
                let list = lists[Int.random(in: 0..<lists.count, using: &rng)]
                let handle = handles[Int.random(in: 0..<handles.count, using: &rng)]
                let result = try await handle.commit(
                    linearList(Int.random(in: 1...6, using: &rng), content: step), to: list, expectedVersion: nil, author: nil,
                    message: nil)
                if result.changed { made.append((list, result.version)) }
                for f in followers.indices where Bool.random(using: &rng) {
                    try await followers[f].read(handles[f % handles.count], limit: Int.random(in: 0...7, using: &rng))
                }
            }
            for f in followers.indices {
                while try await followers[f].read(handles[0], limit: 50) {}
                let wanted = made.filter { followers[f].including($0.list) }
                #expect(followers[f].events.map(\.list) == wanted.map(\.list), "\(engine) follower \(f)")
                #expect(followers[f].events.map { $0.entry?.version ?? -1 } == wanted.map(\.version), "\(engine) follower \(f)")
                let positions = followers[f].events.map(\.position)
                #expect(positions == positions.sorted() && Set(positions).count == positions.count)
            }
            // An entry in the feed is the list's journal entry.
            let sample = try #require(followers[0].events.last)
            let journal = try await handles[0].journal(of: sample.list, after: (sample.entry?.version ?? 1) - 1, limit: 1, maxBytes: .max)
            #expect(journal.entries == [sample.entry].compactMap { $0 })
        }
    }

    /// Pruning a list forgets its events: a position before them has expired, a new follower gets
    /// what is retained, and a follower past them reads on.
    @Test(arguments: EngineKind.available)
    func pruningExpiresOlderPositions(_ engine: EngineKind) async throws {
        try await engine.withStore { stores in
            let store = try #require(stores[0] as? any StoreDriver)
            for version in 1...4 {
                try await store.commit(linearList(3, content: version), to: "old", expectedVersion: nil, author: nil, message: nil)
                try await store.commit(linearList(2, content: version), to: "new", expectedVersion: nil, author: nil, message: nil)
            }
            let caughtUp = try await store.feed(after: 0, limit: 100)
            #expect(caughtUp.events.count == 8 && !caughtUp.hasMore && caughtUp.position == 8)
            _ = try await store.prune("old", .keepLast(1), force: true)
            await #expect(throws: StoreError.self) { try await store.feed(after: 0) }
            let expired = await EngineContractTests.code { _ = try await store.feed(after: 2) }
            #expect(expired == .cursorExpired)
            // From the oldest retained: the events not pruned, still in order.
            let retained = try await store.feed()
            #expect(retained.events.map(\.list) == ["new", "old", "new"] && retained.events.map { $0.entry?.version ?? -1 } == [3, 4, 4])
            #expect(retained.events.map(\.position) == [6, 7, 8])
            // Past the end: another store's position.
            #expect(await EngineContractTests.code { _ = try await store.feed(after: 9) } == .cursorExpired)
            try await store.commit(linearList(5), to: "old", expectedVersion: nil, author: nil, message: nil)
            let next = try await store.feed(after: caughtUp.position)
            #expect(next.events.map(\.list) == ["old"] && next.events.map { $0.entry?.version ?? -1 } == [5] && next.position == 9)
            #expect(await EngineContractTests.code { _ = try await store.feed(after: 9, limit: -1) } == .invalidArgument)
        }
    }

    /// Deleting a list takes every row of it, the feed says so, and the name starts afresh: a
    /// follower gets the deletion, then the new list's commits from version 1.
    @Test(arguments: EngineKind.available)
    func deletedListsGoAndTheirNamesStartAfresh(_ engine: EngineKind) async throws {
        try await engine.withStore { stores in
            let store = try #require(stores[0] as? any StoreDriver)
            try await store.commit(linearList(3), to: "l", expectedVersion: nil, author: nil, message: nil)
            try await store.commit(linearList(4), to: "l", expectedVersion: nil, author: nil, message: nil)
            _ = try await store.registerConsumer("app", of: "l", at: 1)
            try await store.commit(linearList(2), to: "m", expectedVersion: nil, author: nil, message: nil)
            var follower = Follower(including: { _ in true })
            while try await follower.read(store, limit: 10) {}
            #expect(try await store.deleteList("l") == 2)
            #expect(try await store.lists().map(\.name) == ["m"])
            for read in [{ _ = try await store.snapshot(of: "l", at: nil) }, { _ = try await store.journal(of: "l", after: 0, limit: 9, maxBytes: .max) }] as [() async throws -> Void] {
                #expect(await EngineContractTests.code(read) == .listNotFound)
            }
            #expect(await EngineContractTests.code { _ = try await store.deleteList("l") } == .listNotFound)
            try await follower.read(store, limit: 10)
            #expect(follower.events.last?.list == "l" && follower.events.last?.isDeletion == true)
            // The name again: a new list from version 1, after the deletion in the feed.
            let again = try await store.commit(linearList(1), to: "l", expectedVersion: 0, author: nil, message: nil)
            #expect(again.version == 1 && again.parentVersion == 0)
            try await follower.read(store, limit: 10)
            #expect(follower.events.suffix(2).map { $0.entry?.version ?? -1 } == [-1, 1])
            #expect(try await store.consumers(of: "l").isEmpty)
            // From the start: the old list's commits are gone, its deletion and the new one stay.
            let all = try await store.feed()
            #expect(all.events.map(\.list) == ["m", "l", "l"] && all.events.map { $0.entry?.version ?? -1 } == [1, -1, 1])
            #expect(try await store.verify(list: nil, progress: nil).isValid)
        }
    }

    /// A deletion stays in the feed whatever happens to the lists made after it. SQLite gives a new
    /// list the row id of the last one deleted: deleting that new list must not take the old one's
    /// deletion with it (a follower would keep the old list forever).
    @Test(arguments: EngineKind.available)
    func aDeletionOutlivesTheListsThatReuseItsRow(_ engine: EngineKind) async throws {
        try await engine.withStore { stores in
            let store = try #require(stores[0] as? any StoreDriver)
            try await store.commit(linearList(3), to: "a", expectedVersion: nil, author: nil, message: nil)
            _ = try await store.deleteList("a")
            for version in 1...3 { try await store.commit(linearList(version), to: "b", expectedVersion: nil, author: nil, message: nil) }
            _ = try await store.deleteList("b")
            try await store.commit(linearList(2), to: "c", expectedVersion: nil, author: nil, message: nil)
            _ = try await store.deleteList("c")
            let all = try await store.feed()
            #expect(all.events.map(\.list) == ["a", "b", "c"], "\(all.events.map(\.list))")
            #expect(all.events.allSatisfy { $0.isDeletion })
        }
    }

    /// No gaps on PostgreSQL: a commit that has taken its position but not committed yet holds back
    /// a commit of another list through another handle (another server), so a follower never reads
    /// the later commit before the earlier one lands. With positions from a sequence, the second
    /// commit would land first, the follower would read on past the first, and never get it.
    @Test(.enabled(if: PostgresTestEnvironment.url != nil, Comment(rawValue: PostgresTestEnvironment.reason)))
    func aCommitThatLandsLateIsNotSkipped() async throws {
        try await PostgresTestDatabase.withFresh { database in
            let first = try await database.open()
            let second = try await database.open()
            let release = DispatchSemaphore(value: 0)
            do {
                try await Self.lateCommit(first, second, release, database)
            } catch {
                release.signal()
                await first.close()
                await second.close()
                throw error
            }
            await first.close()
            await second.close()
        }
    }

    private static func lateCommit(
        _ first: PostgresStore, _ second: PostgresStore, _ release: DispatchSemaphore, _ database: PostgresTestDatabase
    ) async throws {
        try await first.commit(linearList(2), to: "a", expectedVersion: nil, author: nil, message: nil)
        try await first.commit(linearList(2), to: "b", expectedVersion: nil, author: nil, message: nil)
        var follower = Follower(including: { _ in true })
        while try await follower.read(second, limit: 10) {}
        #expect(follower.events.count == 2)

        // The first handle's commit to "a" stops after its last write, before it commits.
        let (entered, enteredContinuation) = AsyncStream<Void>.makeStream()
        let late = Task {
            try await first.run(.write) { transaction in
                let result = try transaction.steps.commit(
                    to: "a", expectedVersion: 1, author: nil, message: "late", target: .snapshot(linearList(3)))
                enteredContinuation.yield()
                release.wait()  // on a thread of NIO's pool, never the cooperative pool
                return result.version
            }
        }
        for await _ in entered { break }
        // Meanwhile the second handle commits to "b", giving up on any lock it would wait for: it
        // lands at once (positions that do not wait for the first commit), or ends at the lock.
        let early: StoreError.Code?
        do {
            _ = try await second.run(.write) { transaction in
                try #require(transaction.steps as? any SQLTransaction).run("SET LOCAL lock_timeout = '1ms'", [])
                return try transaction.steps.commit(
                    to: "b", expectedVersion: 1, author: nil, message: "early", target: .snapshot(linearList(3))
                ).version
            }
            early = nil
        } catch let error as StoreError {
            early = error.code
        }
        // The follower reads now: it must not pass a commit that lands later.
        _ = try await follower.read(second, limit: 10)
        release.signal()
        #expect(try await late.value == 2)
        // The commit that had to wait (past its lock timeout: `unavailable`, nothing changed) is
        // made again once the first has landed.
        #expect(early == .unavailable, "the commit of \"b\" did not wait for the first")
        #expect(try await second.commit(linearList(3), to: "b", expectedVersion: 1, author: nil, message: "early").version == 2)
        while try await follower.read(second, limit: 10) {}
        #expect(follower.events.map(\.list) == ["a", "b", "a", "b"], "\(follower.events.map { ($0.list, $0.position) })")
        #expect(follower.events.map { $0.entry?.message } == [nil, nil, "late", "early"])
    }

    /// A follower of the feed: what it read, and where it is.
    struct Follower {
        let including: @Sendable (String) -> Bool
        var position = 0
        var events: [FeedEvent] = []

        init(including: @escaping @Sendable (String) -> Bool) { self.including = including }

        /// Reads one page; whether more follow.
        @discardableResult
        mutating func read(_ store: any StoreDriver, limit: Int) async throws -> Bool {
            let page = try await store.feed(after: position, limit: limit, including: including)
            #expect(page.position >= position)
            events += page.events
            position = page.position
            return page.hasMore
        }
    }
}
