import ListStore
import ListStoreTestSupport
import ListDiffTestSupport
import Testing

@testable import ListStoreServer

/// The watcher's table of waits, driven directly: a wait for a list whose head already moved past
/// it, or moves past it later, ends with `true` as soon as the store signals the commit, never at
/// the next poll of the heads (an hour here: a lost wake-up shows as the test's time limit).
@Suite struct HeadWatcherTests {
    /// Rounds of commits and waits: each wait is added right after a commit, so the watcher's loop
    /// takes the commit's signal before, during or after the wait is added, and often while nobody
    /// waits (the wait before it has just ended). Every wait for the version before the head ends
    /// at once, for list and feed waits alike.
    @Test(.timeLimit(.minutes(3))) func aWaitForCommitsThatLandedWhileNobodyWaitedEndsAtOnce() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        let lists = ["a", "b"]
        var heads = [String: Int]()
        for list in lists { heads[list] = try await store.commit(linearList(3), to: list).version }
        let engine = CountingEngine(store, signalsOwnCommits: true)
        let watcher = HeadWatcher(store: engine, pollInterval: .seconds(3600))
        let running = Task { await watcher.run() }
        var random = SplitMix64(seed: 0x4EAD)
        for round in 0..<1_500 {
            let list = lists[Int(random.next() % 2)]
            let position = try await engine.feedMoves(after: nil, limit: 1).last
            for _ in 0...(random.next() % 2) {
                let version = heads[list]! + 1
                heads[list] = try await engine.commit(
                    linearList(2 + version % 2), to: list, expectedVersion: nil, author: nil, message: nil
                ).version
            }
            for _ in 0..<(random.next() % 3) { await Task.yield() }
            let woken =
                if round % 3 == 2 {
                    await watcher.waitForFeed(includes: { $0 == list }, after: position, timeout: .seconds(3600))
                } else {
                    await watcher.wait(for: list, after: heads[list]! - 1, timeout: .seconds(3600))
                }
            #expect(woken, "round \(round)")
        }
        running.cancel()
        await running.value
    }

    /// A commit whose signal the loop takes while nobody waits is not read then: the loop rests.
    /// A wait for it added after that ends at once (the wait wakes the loop, which reads), each
    /// time.
    @Test(.timeLimit(.minutes(1))) func aWaitAfterAQuietSpellWakesTheResting() async throws {
        try await Self.watchingListAtVersion1 { engine, watcher in
            for version in 2...4 {
                // The loop takes the commit's signal (or, the first time, has not read yet), finds
                // nobody waiting, and rests.
                _ = try await engine.commit(linearList(2 + version), to: "l", expectedVersion: nil, author: nil, message: nil)
                try await LimitTests.waitUntil { watcher.isResting }
                #expect(await watcher.wait(for: "l", after: version - 1, timeout: .seconds(3600)))
            }
        }
    }

    /// A read of the feed that fails after a commit's signal (a database back from a restart whose
    /// pooled connections are not all back yet) is read again soon, not at the next signal or the
    /// next poll: the commit it missed wakes its waits. Before, it waited for the next commit or
    /// the poll interval (an hour here; 20 ms by default, a minute in PostgresFaultTests).
    @Test(.timeLimit(.minutes(1))) func aReadOfTheFeedThatFailsIsReadAgainSoon() async throws {
        try await Self.watchingListAtVersion1 { engine, watcher in
            // The first read of the feed ends every wait (it knows no moves before it); a wait on
            // another list keeps the loop reading from then on (one that rests a second forgets the
            // moves it read, and its next read is a first read again).
            #expect(await watcher.wait(for: "l", after: 0, timeout: .seconds(3600)))
            let keeper = Task { while !Task.isCancelled { _ = await watcher.wait(for: "other", after: 0, timeout: .seconds(3600)) } }
            for version in 1...3 {
                // The wait is in the table, then the commit's signal comes, and the reads after it
                // fail: once, then three times.
                let waiting = Task { await watcher.wait(for: "l", after: version, timeout: .seconds(3600)) }
                try await LimitTests.waitUntil { watcher.waitingCount == 2 }
                let failures = version == 3 ? 3 : 1
                let failedBefore = engine.failedFeedMoves.withLock { $0 }
                engine.feedMovesFailures.withLock { $0 = failures }
                _ = try await engine.commit(linearList(3 + version), to: "l", expectedVersion: version, author: nil, message: nil)
                #expect(await waiting.value, "version \(version)")
                #expect(engine.failedFeedMoves.withLock { $0 } == failedBefore + failures)
            }
            keeper.cancel()
            await keeper.value
        }
    }

    /// Runs `body` with a watcher of a store whose list "l" is at version 1 (the store's engine
    /// signals its own commits, and the watcher polls once an hour), then stops the watcher.
    static func watchingListAtVersion1(_ body: (CountingEngine, HeadWatcher) async throws -> Void) async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(3), to: "l")
        let engine = CountingEngine(store, signalsOwnCommits: true)
        let watcher = HeadWatcher(store: engine, pollInterval: .seconds(3600))
        let running = Task { await watcher.run() }
        do {
            try await body(engine, watcher)
        } catch {
            running.cancel()
            await running.value
            throw error
        }
        running.cancel()
        await running.value
        #expect(watcher.isClosed)
    }
}
