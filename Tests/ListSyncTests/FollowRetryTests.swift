import Foundation
import ListDiff
import ListStore
import ListStoreTestSupport
import ListSync
import Testing

/// A source that fails on purpose: after `healthyCalls` requests, the next `failures` requests throw
/// `failure`, then it works again.
private final class FlakySource: ListSource, @unchecked Sendable {
    // Safe: `calls` is reached only under `lock`; the rest is immutable.
    private let base: LocalSource
    private let healthyCalls: Int
    private let failures: Int
    private let failure: any Error
    private let lock = NSLock()
    private var calls = 0

    init(_ base: LocalSource, healthyCalls: Int, failures: Int, failure: any Error) {
        self.base = base
        self.healthyCalls = healthyCalls
        self.failures = failures
        self.failure = failure
    }

    private func call() throws {
        let n = lock.withLock {
            calls += 1
            return calls
        }
        if n > healthyCalls && n <= healthyCalls + failures { throw failure }
    }

    func identity() async throws -> StoreIdentity {
        try call()
        return try await base.identity()
    }

    func summary(of list: String) async throws -> ListSummary {
        try call()
        return try await base.summary(of: list)
    }

    func journal(of list: String, after version: Int, limit: Int) async throws -> JournalPage {
        try call()
        return try await base.journal(of: list, after: version, limit: limit)
    }

    func push(_ push: Push, to list: String) async throws -> PushAnswer {
        try call()
        return try await base.push(push, to: list)
    }

    func pushes(from client: String, to list: String, seqs: ClosedRange<Int>) async throws -> [PushAnswer] {
        try call()
        return try await base.pushes(from: client, to: list, seqs: seqs)
    }

    func snapshot(of list: String, at version: Int?) async throws -> ListSnapshot {
        try call()
        return try await base.snapshot(of: list, at: version)
    }

    func catchUp(of list: String, from version: Int, applyingTo state: [ListSection]) async throws
        -> (changeset: ListChangeset, head: ListSnapshot)
    {
        try call()
        return try await base.catchUp(of: list, from: version, applyingTo: state)
    }

    func waitForCommit(to list: String, after version: Int, timeout: Duration) async throws -> Bool {
        try call()
        return try await base.waitForCommit(to: list, after: version, timeout: timeout)
    }

    func acknowledge(consumer name: String, of list: String, version: Int) async throws {
        try call()
        try await base.acknowledge(consumer: name, of: list, version: version)
    }
}

/// What a follow reported, collected across tasks; a test waits for an entry to come.
private final class Log: @unchecked Sendable {
    // Safe: `entries` and `waiting` are reached only under `lock`.
    private let lock = NSLock()
    private var entries: [String] = []
    private var waiting: [(entry: String, continuation: CheckedContinuation<Void, Never>)] = []

    func add(_ entry: String) {
        let woken = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            entries.append(entry)
            let woken = waiting.filter { $0.entry == entry }.map(\.continuation)
            waiting.removeAll { $0.entry == entry }
            return woken
        }
        for continuation in woken { continuation.resume() }
    }

    var all: [String] { lock.withLock { entries } }

    /// Returns once `entry` was added (at once if it was).
    func until(_ entry: String) async {
        await withCheckedContinuation { continuation in
            let there = lock.withLock { () -> Bool in
                if entries.contains(entry) { return true }
                waiting.append((entry, continuation))
                return false
            }
            if there { continuation.resume() }
        }
    }
}

@Suite struct FollowRetryTests {
    private static let quick = RetryPolicy(initialDelay: .milliseconds(5), maximumDelay: .milliseconds(40))

    @Test(.timeLimit(.minutes(1))) func aFollowerRetriesThroughAnOutageAndSaysSoOnce() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("source.liststore"))
        try await store.commit(linearList(1), to: "l")
        // The first pull and wait work; then six requests fail as a restarting server's would.
        let source = FlakySource(
            LocalSource(store), healthyCalls: 4, failures: 6,
            failure: SyncError.transport("GET http://server/v1/store: cannot connect to the server", transient: true))
        let replica = Replica(store: try Store(path: directory.file("replica.liststore")), list: "l")
        let log = Log()
        let follower = Task {
            try await replica.follow(
                from: source, wait: .milliseconds(50), retrying: Self.quick,
                onEvent: { event in
                    switch event {
                    case .retrying(let error, let attempt, let delay):
                        #expect(error.isTransient && delay <= .milliseconds(40))
                        log.add("retrying \(attempt)")
                    case .reconnected(let failures): log.add("reconnected after \(failures)")
                    }
                }
            ) { result in
                log.add("version \(result.version)")
            }
        }
        // Once the follower is back (whether it waits already or not), a commit reaches it.
        await log.until("reconnected after 6")
        try await store.commit(linearList(2), to: "l")
        await log.until("version 2")
        follower.cancel()
        _ = await follower.result
        #expect(log.all == ["version 1"] + (1...6).map { "retrying \($0)" } + ["reconnected after 6", "version 2"], "\(log.all)")
        #expect(try await replica.store.snapshot(of: "l").sections == store.snapshot(of: "l").sections)
    }

    @Test(.timeLimit(.minutes(1))) func errorsThatRetryingWillNotHealEndTheFollow() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("source.liststore"))
        try await store.commit(linearList(1), to: "l")
        let failures: [any Error] = [
            SyncError.unauthorized("the server refused the token (401)"),
            StoreError(.listNotFound, "no list 'l'"),
            SyncError.transport("answered a document this client cannot read"),
        ]
        for failure in failures {
            let source = FlakySource(LocalSource(store), healthyCalls: 4, failures: 1, failure: failure)
            let replica = Replica(store: try Store(path: directory.file("replica-\(UUID()).liststore")), list: "l")
            let log = Log()
            do {
                try await replica.follow(from: source, wait: .milliseconds(50), retrying: Self.quick, onEvent: { _ in log.add("event") }) { _ in }
                Issue.record("the follow ended without an error")
            } catch {
                #expect("\(error)" == "\(failure)")
            }
            #expect(log.all.isEmpty, "\(log.all)")
        }
    }

    @Test(.timeLimit(.minutes(1))) func withoutARetryPolicyTheFirstFailureEndsTheFollow() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("source.liststore"))
        try await store.commit(linearList(1), to: "l")
        let source = FlakySource(LocalSource(store), healthyCalls: 4, failures: 1, failure: SyncError.transport("down", transient: true))
        let replica = Replica(store: try Store(path: directory.file("replica.liststore")), list: "l")
        await #expect(throws: SyncError.self) { try await replica.follow(from: source, wait: .milliseconds(50)) { _ in } }
    }

    @Test func retryDelaysDoubleUpToTheCapLessTheJitter() {
        let policy = RetryPolicy(initialDelay: .milliseconds(500), maximumDelay: .seconds(15), jitter: 0.2)
        let bases: [Duration] = [.milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(15), .seconds(15)]
        for (index, base) in bases.enumerated() {
            for _ in 0..<50 {
                let delay = policy.delay(afterFailures: index + 1)
                #expect(delay <= base && delay >= base * 0.8, "after \(index + 1) failures: \(delay)")
            }
        }
        #expect(policy.delay(afterFailures: 1_000) <= .seconds(15))
        let fixed = RetryPolicy(initialDelay: .seconds(1), maximumDelay: .seconds(3), jitter: 0)
        #expect((1...4).map { fixed.delay(afterFailures: $0) } == [.seconds(1), .seconds(2), .seconds(3), .seconds(3)])
        // Jittered delays differ (not all followers come back at once).
        #expect(Set((0..<20).map { _ in policy.delay(afterFailures: 3) }).count > 1)
    }
}
