import Foundation
import ListDiffTestSupport
import ListStore
import ListStoreTestSupport
import ListSync
import Testing

/// Commits of another process reach this one's waiters through file notifications (inotify), not at
/// their next poll.
@Suite struct FileNotificationTests {
    /// Reads `store`'s generation, has a `liststore commit` process commit version 2 through `path`,
    /// then waits on `store` for up to an hour: only the notification ends the wait within the
    /// test's time limit.
    private static func commitElsewhereThenWait(on store: Store, through path: String, in dir: TemporaryDirectory) async throws {
        let seen = store.commitGeneration()
        let file = try dir.file("v2.json", #"{"sections":[{"id":"s","elements":[{"id":"x"}]}]}"#)
        let commit = try await CLIRunner.runOffPool(["commit", "--db", path, "--list", "l", "--file", file])
        #expect(commit.status == 0, "\(commit.stderr)")
        await store.waitForCommit(after: seen, timeout: .seconds(3600))
        #expect(store.commitGeneration() != seen)
    }

    /// A commit by a `liststore commit` process wakes a wait of this process on the store file at
    /// once: without the notification it would sleep out its hour, past the test's time limit (the
    /// commit does not pass through this process's signal).
    @Test(.timeLimit(.minutes(2)), .enabled(if: _StoreFileWatcher.shared != nil)) func anotherProcesssCommitWakesAWaiter() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.url.appendingPathComponent("s.liststore").path
        let store = try Store(path: path)
        try await store.commit(linearList(3), to: "l")
        #expect(_StoreFileWatcher.shared?.watch(path) == true)
        let seen = store.commitGeneration()
        let waiter = Task { await store.waitForCommit(after: seen, timeout: .seconds(3600)) }
        let file = try dir.file("v2.json", #"{"sections":[{"id":"s","elements":[{"id":"x"}]}]}"#)
        let commit = try await CLIRunner.runOffPool(["commit", "--db", path, "--list", "l", "--file", file])
        #expect(commit.status == 0, "\(commit.stderr)")
        await waiter.value
        #expect(store.commitGeneration() != seen)
    }

    /// A commit that lands after a waiter read the generation and before it waits (while it reads
    /// the head) is not missed, on the first wait on a file too: reading the generation starts the
    /// watch.
    @Test(.timeLimit(.minutes(2)), .enabled(if: _StoreFileWatcher.shared != nil)) func aCommitBeforeTheFirstWaitIsNotMissed() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.url.appendingPathComponent("s.liststore").path
        let store = try Store(path: path)
        try await store.commit(linearList(3), to: "l")
        try await Self.commitElsewhereThenWait(on: store, through: path, in: dir)
    }

    /// A store opened through a symbolic link to its file in another directory is watched where
    /// SQLite writes its log (next to the link's target), so a commit through the real path wakes a
    /// waiter on the link's.
    @Test(.timeLimit(.minutes(2)), .enabled(if: _StoreFileWatcher.shared != nil)) func aStoreOpenedThroughASymbolicLinkIsWatched() async throws {
        let dir = try TemporaryDirectory()
        let real = dir.url.appendingPathComponent("real")
        try FileManager.default.createDirectory(at: real, withIntermediateDirectories: true)
        let path = real.appendingPathComponent("s.liststore").path
        try await Store(path: path).commit(linearList(3), to: "l")
        let link = dir.url.appendingPathComponent("s.liststore")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: URL(fileURLWithPath: path))
        let store = try Store(path: link.path)
        try await Self.commitElsewhereThenWait(on: store, through: path, in: dir)
        #expect(try await store.summary(of: "l").version == 2)
    }

    /// `changes(after:)` of a local source hears another process's commit without waiting for its
    /// poll: with a poll interval of an hour, the commit still arrives (without the notification,
    /// the test runs into its time limit).
    @Test(.timeLimit(.minutes(2)), .enabled(if: _StoreFileWatcher.shared != nil)) func localFollowersHearOtherProcessesCommits() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.url.appendingPathComponent("s.liststore").path
        let store = try Store(path: path)
        try await store.commit(linearList(3), to: "l")
        let source = LocalSource(store, pollInterval: .seconds(3600))
        let cursor = try await source.cursor(of: "l")
        let follower = Task {
            for try await change in source.changes(after: cursor, wait: .seconds(3600)) { return change.entry.version }
            return 0
        }
        // The commit once the follower has read its first page and waits for a commit to the file.
        try await waitUntil("the follower waits for a commit") { CommitSignal.shared.waiterCount(path: path) == 1 }
        let file = try dir.file("v2.json", #"{"sections":[{"id":"s","elements":[{"id":"x"}]}]}"#)
        let commit = try await CLIRunner.runOffPool(["commit", "--db", path, "--list", "l", "--file", file])
        #expect(commit.status == 0, "\(commit.stderr)")
        #expect(try await follower.value == 2)
    }
}
