import Dispatch
import Foundation
import GRDB
import ListDiff
import ListJSON
import ListStore
import ListStoreTestSupport
import ListDiffTestSupport
import Testing

@Suite(.heavyWork) struct StoreAsyncTests {
    @Test func asyncReadsAnswerAsTheSynchronousOnes() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        for k in 1...6 { try await store.commit(linearList(k, content: k), to: "l", author: "ana", message: "v\(k)") }
        try await store.commit(linearList(2), to: "other")
        let expected = try SynchronousReads(try Store(path: store.path))

        #expect(try await store.identity() == expected.identity)
        #expect(try await store.lists() == expected.lists)
        #expect(expected.lists.map(\.name) == ["l", "other"])
        #expect(try await store.summary(of: "l") == expected.summary)
        #expect(try await store.snapshot(of: "l") == expected.head)
        #expect(try await store.snapshot(of: "l", at: 3) == expected.third)
        #expect(expected.third.sections == linearList(3, content: 3))
        #expect(try await store.journal(of: "l") == expected.journal)
        #expect(try await store.journal(of: "l", after: 2, limit: 2) == expected.page)
        #expect(try await store.journal(of: "l", after: 0, limit: 10, maxBytes: 1) == expected.budgeted)
        #expect(expected.budgeted.entries.map(\.version) == [1] && expected.budgeted.hasMore)
        let changeset = try await store.changeset(of: "l", from: 2, to: 5)
        #expect(changeset.from == expected.changeset.from && changeset.to == expected.changeset.to)
        #expect(changeset.changeset == expected.changeset.changeset && !changeset.changeset.isEmpty)
        #expect(try await store.changeset(of: "l", from: 4).to == expected.head)
        #expect(try await store.verify() == expected.report)
        #expect(expected.report.isValid && expected.report.lists.count == 2)
        #expect(try await store.verify(list: "other").lists.map(\.name) == ["other"])
    }

    /// What the synchronous methods answer (called from synchronous code, so the overloads cannot
    /// be the async ones).
    private struct SynchronousReads {
        var identity: StoreIdentity
        var lists: [ListSummary]
        var summary: ListSummary
        var head, third: ListSnapshot
        var journal, page, budgeted: JournalPage
        var changeset: (from: ListSnapshot, to: ListSnapshot, changeset: ListChangeset)
        var report: VerificationReport

        init(_ store: Store) throws {
            identity = try store.identity()
            lists = try store.lists()
            summary = try store.summary(of: "l")
            head = try store.snapshot(of: "l")
            third = try store.snapshot(of: "l", at: 3)
            journal = try store.journal(of: "l")
            page = try store.journal(of: "l", after: 2, limit: 2)
            budgeted = try store.journal(of: "l", after: 0, limit: 10, maxBytes: 1)
            changeset = try store.changeset(of: "l", from: 2, to: 5)
            report = try store.verify()
        }
    }

    @Test func asyncCallsThrowTheStoreErrors() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        await #expect { try await store.summary(of: "l") } throws: { ($0 as? StoreError)?.code == .storeNotFound }
        #expect(!store.exists)
        try await store.commit(linearList(3), to: "l", expectedVersion: 0)
        await #expect { try await store.summary(of: "nope") } throws: { ($0 as? StoreError)?.code == .listNotFound }
        await #expect { try await store.snapshot(of: "l", at: 9) } throws: { ($0 as? StoreError)?.code == .versionNotFound }
        await #expect { try await store.journal(of: "l", after: 5) } throws: { ($0 as? StoreError)?.code == .versionNotFound }
        await #expect {
            try await store.commit(linearList(4), to: "l", expectedVersion: 0)
        } throws: { error in
            guard let error = error as? StoreError else { return false }
            return error.code == .versionConflict && error.expectedVersion == 0 && error.currentVersion == 1
        }
        await #expect {
            try await store.edit("l") { draft in try draft.removeElement("missing") }
        } throws: { ($0 as? StoreError)?.code == .invalidEdit }
        await #expect { try await store.registerConsumer("", of: "l") } throws: { ($0 as? StoreError)?.code == .invalidArgument }
        await #expect {
            try await store.acknowledge(consumer: "nobody", of: "l", version: 1)
        } throws: { ($0 as? StoreError)?.code == .invalidArgument }
        // Nothing was written by the failed calls.
        #expect(try await store.summary(of: "l").version == 1)
        #expect(try await store.snapshot(of: "l").sections == linearList(3))
    }

    @Test func asyncWritesCommitEditAndMoveConsumers() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        let first = try await store.commit(linearList(2), to: "l", author: "ana", message: "start")
        #expect(first.version == 1 && first.changed)
        let unchanged = try await store.commit(linearList(2), to: "l")
        #expect(unchanged.version == 1 && !unchanged.changed)
        let edited = try await store.edit("l", expectedVersion: 1, author: "bo", message: "more") { draft in
            try draft.append(ListItem("e2", 2), toSection: "s")
            try draft.reloadElement(ListItem("e0", 10))
        }
        #expect(edited.version == 2 && edited.parentVersion == 1)
        let head = try await store.snapshot(of: "l")
        #expect(head.sections == [ListSection(model: ListItem("s"), elements: [ListItem("e0", 10), ListItem("e1", 1), ListItem("e2", 2)])])
        let entry = try #require(try await store.journal(of: "l", after: 1).entries.first)
        #expect(entry.author == "bo" && entry.message == "more")

        let registered = try await store.registerConsumer("laptop", of: "l", at: 1)
        #expect(registered.name == "laptop" && registered.list == "l" && registered.version == 1)
        let acknowledged = try await store.acknowledge(consumer: "laptop", of: "l", version: 2)
        #expect(acknowledged.version == 2)
        #expect(try await store.consumers(of: "l").map(\.version) == [2])
    }

    @Test func concurrentAsyncCommitsWithExpectedVersionLoseNoUpdate() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("s.liststore")
        // Two store values on one file: their async writes share the file's queue.
        let stores = [try Store(path: path), try Store(path: path)]
        try await stores[0].commit([ListSection(model: ListItem("s"), elements: [])], to: "l", expectedVersion: 0)
        let writers = 24
        try await withThrowingTaskGroup(of: Void.self) { group in
            for k in 0..<writers {
                group.addTask {
                    let store = stores[k % 2]
                    while true {
                        // Read, change, commit only onto what was read: a lost update would need a
                        // commit onto a stale head.
                        let head = try await store.snapshot(of: "l")
                        var sections = head.sections
                        sections[0].elements.append(ListItem("w\(k)", k))
                        do {
                            try await store.commit(sections, to: "l", expectedVersion: head.version, author: "w\(k)")
                            return
                        } catch let error as StoreError where error.code == .versionConflict {
                            #expect(error.expectedVersion == head.version && error.currentVersion! > head.version)
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let summary = try await stores[1].summary(of: "l")
        #expect(summary.version == 1 + writers)
        let page = try await stores[1].journal(of: "l", limit: 1000)
        #expect(page.entries.map(\.version) == Array(1...(1 + writers)))
        #expect(page.entries.allSatisfy { $0.parentVersion == $0.version - 1 })
        let ids = try await stores[0].snapshot(of: "l").sections[0].elements.map(\.differenceIdentifier)
        #expect(Set(ids) == Set((0..<writers).map { ExactString("w\($0)") }) && ids.count == writers)
        #expect(try await stores[0].verify().isValid)
    }

    @Test func concurrentAsyncEditsAllLandOnConsecutiveVersions() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit([ListSection(model: ListItem("s"), elements: [])], to: "l")
        let editors = 32
        let versions = try await withThrowingTaskGroup(of: Int.self) { group in
            for k in 0..<editors {
                group.addTask {
                    try await store.edit("l") { draft in try draft.append(ListItem("e\(k)", k), toSection: "s") }.version
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(versions.sorted() == Array(2...(1 + editors)))
        let elements = try await store.snapshot(of: "l").sections[0].elements
        #expect(Set(elements.map(\.differenceIdentifier)) == Set((0..<editors).map { ExactString("e\($0)") }))
        #expect(try await store.verify().isValid)
    }

    /// The async variants never run their blocking work on Swift's cooperative thread pool: more
    /// edits and verifications than the pool has threads each hold the thread they run on until a
    /// task on the pool runs. Run on the pool, they would take every thread and that task could never
    /// run (the test would not end); run on GRDB's queues, they leave the pool free.
    @Test(.onTheCooperativePool, .timeLimit(.minutes(3))) func asyncWorkLeavesTheCooperativePoolFree() async throws {
        let directory = try TemporaryDirectory()
        let width = ProcessInfo.processInfo.activeProcessorCount + 1
        var stores: [Store] = []
        for k in 0..<width {
            let store = try Store(path: directory.file("s\(k).liststore"))
            try await store.commit(linearList(2), to: "l")
            stores.append(store)
        }
        // A hold blocks its thread (without spinning) until the release, or gives up after a
        // while (150 s, within the time limit), so that work run on the pool fails the test instead
        // of hanging the whole run.
        // Each operation holds at most once before the release (it is held in that hold), so the
        // release's signals reach every hold that waits; later holds see `released` and go on.
        let release = DispatchSemaphore(value: 0)
        let holding = _Locked((held: 0, gaveUp: 0, released: false))
        let hold: @Sendable () -> Void = {
            guard !holding.withLock({ $0.held += 1; return $0.released }) else { return }
            if release.wait(timeout: .now() + 150) == .timedOut { holding.withLock { $0.gaveUp += 1 } }
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for store in stores {
                group.addTask { try await store.edit("l") { draft in hold(); try draft.reloadElement(ListItem("e0", 7)) } }
                group.addTask { _ = try await store.verify(list: "l") { _ in hold() } }
            }
            group.addTask {
                holding.withLock { $0.released = true }
                for _ in 0..<(2 * width) { release.signal() }
            }
            try await group.waitForAll()
        }
        let (held, gaveUp, _) = holding.withLock { $0 }
        #expect(held >= 2 * width && gaveUp == 0)
        for store in stores { #expect(try await store.snapshot(of: "l").sections[0].elements[0] == ListItem("e0", 7)) }
    }

    /// Opening a store's file, which the first async call after `close()` does, never runs on Swift's
    /// cooperative thread pool either: more opens than the pool has threads each wait for a lock
    /// another connection holds on their file (a rollback journal and `BEGIN EXCLUSIVE` keep its
    /// readers out) until a task on the pool lets it go. Run on the pool, they would take every
    /// thread, the locks would be held past the busy timeout and the opens fail; run on each store's
    /// serial queue, they wait for the release and answer.
    @Test(.onTheCooperativePool, .timeLimit(.minutes(3))) func openingAStoreLeavesTheCooperativePoolFree() async throws {
        let directory = try TemporaryDirectory()
        let width = ProcessInfo.processInfo.activeProcessorCount + 1
        var configuration = Store.Configuration()
        configuration.busyTimeout = 60
        var stores: [Store] = []
        var locks: [DatabaseQueue] = []
        for k in 0..<width {
            let path = directory.file("s\(k).liststore")
            let store = try Store(path: path, configuration: configuration)
            try await store.commit(linearList(2), to: "l")
            try store.close()
            var unsafe = GRDB.Configuration()
            unsafe.allowsUnsafeTransactions = true  // the lock is held across accesses
            let lock = try DatabaseQueue(path: path, configuration: unsafe)
            try Self.execute(lock, "PRAGMA journal_mode = DELETE; BEGIN EXCLUSIVE")
            stores.append(store)
            locks.append(lock)
        }
        let opened = _Locked(0)
        let held = locks
        try await withThrowingTaskGroup(of: Void.self) { group in
            for store in stores {
                group.addTask {
                    let version = try await store.summary(of: "l").version
                    #expect(version == 1)
                    opened.withLock { $0 += 1 }
                }
            }
            group.addTask {
                for lock in held { try Self.execute(lock, "COMMIT") }
            }
            try await group.waitForAll()
        }
        #expect(opened.withLock { $0 } == width)
        for lock in locks { try lock.close() }
    }

    /// Runs `sql` on `queue`'s connection, leaving a transaction it begins open.
    private static func execute(_ queue: DatabaseQueue, _ sql: String) throws {
        try queue.inDatabase { try $0.execute(sql: sql) }
    }

    /// A verification cancelled while it runs (here by its own progress callback, after the first
    /// replayed entry) throws `CancellationError`, not a report of a damaged store.
    @Test func aVerificationCancelledWhileItRunsThrowsCancellation() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        for list in ["a", "b", "c"] {
            for k in 1...5 { try await store.commit(linearList(k), to: list) }
        }
        let verification = Task {
            try await store.verify { _ in withUnsafeCurrentTask { $0?.cancel() } }
        }
        await #expect(throws: CancellationError.self) { try await verification.value }
        #expect(try await store.verify().isValid)
    }

    /// An edit whose task is cancelled while its body runs writes nothing and throws
    /// `CancellationError`.
    @Test func anEditCancelledWhileItRunsWritesNothing() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(3), to: "l")
        let edit = Task {
            try await store.edit("l") { draft in
                withUnsafeCurrentTask { $0?.cancel() }
                try draft.append(ListItem("e9", 9), toSection: "s")
            }
        }
        await #expect(throws: CancellationError.self) { try await edit.value }
        #expect(try await store.summary(of: "l").version == 1)
        #expect(try await store.verify().isValid)
    }

    @Test func cancelledTaskNeitherReadsNorWrites() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        let cancelledFirst = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await store.commit(linearList(1), to: "l")
        }
        await #expect(throws: CancellationError.self) { try await cancelledFirst.value }
        #expect(!store.exists)

        try await store.commit(linearList(1), to: "l")
        let read = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await store.snapshot(of: "l")
        }
        await #expect(throws: CancellationError.self) { try await read.value }
    }

    /// Through the store contract (`any ListStoreEngine`, `any ReplicaStore`), a `Store` answers with
    /// its async methods, not the blocking ones of the same names (a blocking witness would run on
    /// the cooperative pool and would not see that the task is cancelled).
    @Test func theStoreContractOfAStoreIsItsAsyncMethods() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(2), to: "l")
        let engine: any ReplicaStore = store
        let calls: [@Sendable () async throws -> Void] = [
            { _ = try await engine.identity() }, { _ = try await engine.lists() }, { _ = try await engine.summary(of: "l") },
            { _ = try await engine.snapshot(of: "l", at: nil) }, { _ = try await engine.journal(of: "l", after: nil, limit: 9, maxBytes: .max) },
            { _ = try await engine.changeset(of: "l", from: 1, to: nil) }, { _ = try await engine.consumers(of: "l") },
            { _ = try await engine.pushes(from: "c", to: "l", seqs: 1...2) }, { _ = try await engine.verify(list: nil, progress: nil) },
            { _ = try await engine.replicaSource(of: "l") }, { _ = try await engine.clientID() }, { _ = try await engine.outbox(of: "l") },
            { _ = try await engine.replicaStatus(of: "l") },
            { _ = try await engine.commit(linearList(3), to: "l", expectedVersion: nil, author: nil, message: nil) },
            { _ = try await engine.registerConsumer("c", of: "l", at: nil) }, { _ = try await engine.prune("l", .keepLast(1), force: true) },
            { _ = try await engine.advanceEpoch() },
        ]
        for (index, call) in calls.enumerated() {
            let cancelled = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                try await call()
            }
            await #expect(throws: CancellationError.self, "call \(index)") { try await cancelled.value }
        }
        #expect(try await store.summary(of: "l").version == 1)
        #expect(try await store.identity().epoch == 1)
    }

    @Test func cancellingAQueuedCommitSkipsIt() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(1), to: "l")
        // An edit holds the file's write queue until released; a commit queued behind it is cancelled.
        let (started, didStart) = AsyncStream.makeStream(of: Void.self)
        let release = DispatchSemaphore(value: 0)
        let holder = Task {
            try await store.edit("l") { draft in
                didStart.yield()
                release.wait()
                try draft.append(ListItem("e1", 1), toSection: "s")
            }
        }
        for await _ in started { break }
        let queued = Task { try await store.commit(linearList(5), to: "l") }
        queued.cancel()
        release.signal()
        #expect(try await holder.value.version == 2)
        await #expect(throws: CancellationError.self) { try await queued.value }
        #expect(try await store.summary(of: "l").version == 2)
        // The queue still serves the next writer.
        #expect(try await store.commit(linearList(5), to: "l").version == 3)
    }
}
