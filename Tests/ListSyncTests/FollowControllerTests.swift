import Foundation
import ListDiff
import ListDiffTestSupport
import ListStore
import ListStoreTestSupport
import ListStoreWire
import ListSync
import Observation
import Testing

/// A source that counts what is under way through it at once: requests (`changes`, `journal`,
/// `push`) and open follows (`followChanges`, `commits`), and the most ever at once. One model's
/// background sync and its syncs take turns, so at most one follow is open at any instant; a set's
/// follow closes its feed before it pushes or pulls, so with a set at most one of all is under way.
final class WatchedSource: FeedSource, _ForwardingSource, @unchecked Sendable {
    let local: LocalSource
    var base: any ListSource { local }
    private let counts = _Locked((now: 0, most: 0, follows: 0, mostFollows: 0))

    init(_ local: LocalSource) { self.local = local }

    /// The most requests and follows under way at once so far, and those under way now.
    var most: Int { counts.withLock { $0.most } }
    var now: Int { counts.withLock { $0.now } }
    /// The follows open now, and the most ever open at once.
    var follows: Int { counts.withLock { $0.follows } }
    var mostFollows: Int { counts.withLock { $0.mostFollows } }

    private func begin(follow: Bool = false) {
        counts.withLock {
            $0.now += 1
            $0.most = max($0.most, $0.now)
            if follow {
                $0.follows += 1
                $0.mostFollows = max($0.mostFollows, $0.follows)
            }
        }
    }

    private func end(follow: Bool = false) {
        counts.withLock {
            $0.now -= 1
            if follow { $0.follows -= 1 }
        }
    }

    private func counting<T>(_ body: () async throws -> T) async throws -> T {
        begin()
        defer { end() }
        return try await body()
    }

    /// `stream`, counted as one follow from now until it terminates.
    private func counting<T: Sendable>(_ stream: AsyncThrowingStream<T, any Error>) -> AsyncThrowingStream<T, any Error> {
        begin(follow: true)
        let (counted, continuation) = AsyncThrowingStream.makeStream(of: T.self)
        let task = Task {
            do {
                for try await element in stream { continuation.yield(element) }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { [self] _ in
            task.cancel()
            end(follow: true)
        }
        return counted
    }

    func journal(of list: String, after version: Int, limit: Int) async throws -> JournalPage {
        try await counting { try await local.journal(of: list, after: version, limit: limit) }
    }

    func push(_ push: Push, to list: String) async throws -> PushAnswer {
        try await counting { try await local.push(push, to: list) }
    }

    func commits(of list: String, after version: Int, pageSize: Int, wait: Duration) -> AsyncThrowingStream<JournalEntry, any Error> {
        counting(local.commits(of: list, after: version, pageSize: pageSize, wait: wait))
    }

    func lists(matching pattern: ListPattern) async throws -> [ListSummary] { try await local.lists(matching: pattern) }

    func changes(of pattern: ListPattern, after cursor: FeedCursor?, limit: Int, wait: Duration) async throws -> FeedChanges {
        try await counting { try await local.changes(of: pattern, after: cursor, limit: limit, wait: wait) }
    }

    func followChanges(of pattern: ListPattern, after cursor: FeedCursor?) -> AsyncThrowingStream<FeedChange, any Error> {
        counting(local.followChanges(of: pattern, after: cursor))
    }
}

/// Both models' background sync (one `_FollowController`): started, stopped and synced at random
/// points, one follow runs at a time, never beside a sync, and it runs exactly when it should. One
/// case at a time, its follows polling at a calm pace: beside the rest of the suite on two cores,
/// they must not starve other tests of the machine.
@Suite(.serialized, .timeLimit(.minutes(5))) @MainActor struct FollowControllerTests {
    /// What a step of the random sequences does.
    enum Step: CaseIterable { case start, stop, sync, syncInTheBackground, commit, yield }

    /// Returns once `condition` holds (checked on the main actor; a follow's end is no event a
    /// test could wait for, so it is checked again every 10 ms), failing after two minutes.
    nonisolated static func until(
        _ condition: @escaping @MainActor @Sendable () -> Bool, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let what = "the condition at \(sourceLocation)"
        try await waitUntil(what, within: .seconds(120), every: .milliseconds(50)) { await condition() }
    }

    @available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
    @Test(arguments: (1...3).map { 0xF0_11_0 + UInt64($0) })
    func aSetModelStartedStoppedAndSyncedAtRandomRunsOneFollowAtATime(_ seed: UInt64) async throws {
        let directory = try TemporaryDirectory()
        let source = try Store(path: directory.file("source.liststore"))
        for list in ["team/a", "team/b"] { try await source.commit(linearList(3), to: list) }
        let set = try ReplicaSet(store: try Store(path: directory.file("phone.liststore")), lists: "team/*")
        try await set.pull(from: LocalSource(source))
        let watched = WatchedSource(LocalSource(source, pollInterval: .milliseconds(50)))
        let model = ReplicaSetModel(set: set, source: watched)
        var random = SplitMix64(seed: seed)
        var background: [Task<Void, Never>] = []
        var started = false
        for k in 0..<40 {
            switch Step.allCases.randomElement(using: &random)! {
            case .start:
                model.start(retrying: RetryPolicy(initialDelay: .milliseconds(20), maximumDelay: .milliseconds(100)), localPollInterval: .milliseconds(100))
                started = true
            case .stop:
                model.stop()
                started = false
            case .sync: await model.sync()
            case .syncInTheBackground: background.append(Task { await model.sync() })
            case .commit: try await source.commit(linearList(3 + k), to: "team/a")
            case .yield: await Task.yield()
            }
            #expect(watched.most <= 1, "seed \(seed), step \(k): a follow ran beside another, or beside a sync")
            #expect(model.status.isFollowing || !started, "seed \(seed), step \(k)")
        }
        for task in background { await task.value }
        // Started: one follow, which applies the source's commits. Stopped: none.
        model.start(retrying: RetryPolicy(initialDelay: .milliseconds(20), maximumDelay: .milliseconds(100)), localPollInterval: .milliseconds(100))
        try await Self.until { watched.follows == 1 }
        try await source.commit(linearList(99), to: "team/b")
        let listB = model.model(for: "team/b")
        try await Self.until { listB.sections == linearList(99) }
        model.stop()
        try await Self.until { !model.status.isFollowing && watched.now == 0 }
        #expect(watched.most <= 1, "seed \(seed)")
    }

    @available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
    @Test(arguments: (1...3).map { 0xF0_12_0 + UInt64($0) })
    func aListModelStartedStoppedAndSyncedAtRandomRunsOneFollowAtATime(_ seed: UInt64) async throws {
        let directory = try TemporaryDirectory()
        let source = try Store(path: directory.file("source.liststore"))
        try await source.commit(linearList(3), to: "l")
        let replica = Replica(store: try Store(path: directory.file("phone.liststore")), list: "l")
        try await replica.pull(from: LocalSource(source))
        let watched = WatchedSource(LocalSource(source, pollInterval: .milliseconds(50)))
        let model = ReplicaListModel(replica: replica, source: watched)
        var random = SplitMix64(seed: seed)
        var background: [Task<Void, Never>] = []
        var started = false
        for k in 0..<40 {
            switch Step.allCases.randomElement(using: &random)! {
            case .start:
                model.start(retrying: RetryPolicy(initialDelay: .milliseconds(20), maximumDelay: .milliseconds(100)), wait: .milliseconds(200),
                    localPollInterval: .milliseconds(100))
                started = true
            case .stop:
                model.stop()
                started = false
            case .sync: await model.sync()
            case .syncInTheBackground: background.append(Task { await model.sync() })
            case .commit: try await source.commit(linearList(3 + k), to: "l")
            case .yield: await Task.yield()
            }
            #expect(watched.mostFollows <= 1, "seed \(seed), step \(k): a follow ran beside another")
            #expect(model.status.isFollowing || !started, "seed \(seed), step \(k)")
        }
        for task in background { await task.value }
        model.start(retrying: RetryPolicy(initialDelay: .milliseconds(20), maximumDelay: .milliseconds(100)), wait: .milliseconds(200),
            localPollInterval: .milliseconds(100))
        try await source.commit(linearList(99), to: "l")
        try await Self.until { model.sections == linearList(99) }
        model.stop()
        try await Self.until { !model.status.isFollowing && watched.now == 0 }
        #expect(watched.mostFollows <= 1, "seed \(seed)")
    }
}
