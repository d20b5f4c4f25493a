import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// A trait for suites whose tests compute for seconds between suspension points (random and
/// property tests over thousands of cases): their bodies run on as many threads of their own as
/// there are cores, instead of on the threads that run Swift's tasks.
///
/// The test process runs every suite at once, and the threads that run tasks are few (one per
/// core). Long computations there would hold them for many seconds at a time, and the in-process
/// servers, timers and streams of other tests (which need them to answer at all) would wait. On
/// threads of their own, the operating system shares the cores among both.
///
/// ```swift
/// @Suite(.heavyWork) struct StagedChangesetPropertyTests { … }
/// ```
public struct HeavyWork: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await _OwnThreads.run(testCase == nil ? nil : .computing, function)
    }
}

/// A trait for suites whose tests block their thread while they wait (for a child process, a
/// socket, a sleep): their bodies run on threads of their own, one for each that waits, so that
/// waiting never holds one of the few threads that run Swift's tasks.
///
/// ```swift
/// @Suite(.blockingWaits) struct StoreCommandTests { … }
/// ```
public struct BlockingWaits: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await _OwnThreads.run(testCase == nil ? nil : .waiting, function)
    }
}

/// A trait for a test that checks what runs on Swift's cooperative thread pool (that a store's work
/// leaves it free): its body runs there even in a suite marked `.heavyWork` or `.blockingWaits`,
/// whose threads would otherwise stand in for the pool.
///
/// ```swift
/// @Test(.onTheCooperativePool) func asyncWorkLeavesTheCooperativePoolFree() async throws { … }
/// ```
public struct OnTheCooperativePool: TestTrait, TestScoping {
    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
            try await withTaskExecutorPreference(globalConcurrentExecutor) { try await function() }
        } else {
            try await function()
        }
    }
}

extension Trait where Self == OnTheCooperativePool {
    /// Runs the test's body on Swift's cooperative thread pool (see `OnTheCooperativePool`).
    public static var onTheCooperativePool: Self { OnTheCooperativePool() }
}

extension Trait where Self == HeavyWork {
    /// Runs the tests' bodies on threads of their own, one per core (see `HeavyWork`).
    public static var heavyWork: Self { HeavyWork() }
}

extension Trait where Self == BlockingWaits {
    /// Runs the tests' bodies on threads of their own, as many as wait (see `BlockingWaits`).
    public static var blockingWaits: Self { BlockingWaits() }
}

/// Threads that run the jobs of the tasks that prefer them, in the order they come: a fixed number
/// of them, or (`growing`) a new one whenever every thread is busy.
private final class _OwnThreads: @unchecked Sendable {
    // Safe: `jobs`, `next`, `threads` and `idle` are only used while `condition` is locked.
    enum Kind { case computing, waiting }

    static let computing = _OwnThreads(threads: max(2, ProcessInfo.processInfo.activeProcessorCount), growing: false)
    static let waiting = _OwnThreads(threads: 1, growing: true)

    /// Runs `function` preferring the threads of `kind` (all but the test itself when `nil`).
    static func run(_ kind: Kind?, _ function: @Sendable () async throws -> Void) async throws {
        guard let kind else { return try await function() }
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
            let executor = kind == .computing ? _Executor(computing) : _Executor(waiting)
            try await withTaskExecutorPreference(executor) { try await function() }
        } else {
            try await function()
        }
    }

    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    private var next = 0
    private var threads = 0
    private var idle = 0
    private let growing: Bool

    private init(threads: Int, growing: Bool) {
        self.growing = growing
        condition.lock()
        for _ in 0..<threads { startThread() }
        condition.unlock()
    }

    /// Queues `job`; with `growing`, starts a thread when none is idle.
    func enqueue(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        jobs.append(job)
        if growing && idle <= jobs.count - next - 1 { startThread() }
        condition.signal()
        condition.unlock()
    }

    /// Called with `condition` locked.
    private func startThread() {
        threads += 1
        let computing = !growing
        let thread = Thread { [self] in
            if computing { Self.yieldToOthers() } else { Self.takeTheUsualShare() }
            work()
        }
        thread.name = growing ? "waiting-\(threads)" : "computing-\(threads)"
        thread.start()
    }

    /// Lowers the calling thread's priority (Linux: nice 10, for this thread only), so that long
    /// computations take the cores only when the servers, timers and clients of other tests, which
    /// wait on the clock, do not need them: on a machine of two cores they would otherwise run late.
    private static func yieldToOthers() {
        #if os(Linux)
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)  // 0: the calling thread, on Linux
        #else
        Thread.current.qualityOfService = .utility
        #endif
    }

    /// Gives the calling thread the usual priority (Linux: nice 0), which a thread started by a
    /// computing thread would otherwise inherit the lowered one of: a waiting thread started while
    /// a test ran on a computing thread waited with it. Raising it back needs the right to (root,
    /// as in CI); without it, the thread keeps what it inherited.
    private static func takeTheUsualShare() {
        #if os(Linux)
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 0)
        #endif
    }

    private func work() {
        while true {
            condition.lock()
            idle += 1
            while next == jobs.count { condition.wait() }
            idle -= 1
            let job = jobs[next]
            next += 1
            if next == jobs.count {
                jobs.removeAll(keepingCapacity: true)
                next = 0
            }
            condition.unlock()
            job()
        }
    }
}

/// `_OwnThreads` as a task executor.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
private final class _Executor: TaskExecutor, @unchecked Sendable {
    // Safe: immutable; `_OwnThreads` is thread-safe.
    private let threads: _OwnThreads

    init(_ threads: _OwnThreads) { self.threads = threads }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        threads.enqueue { [self] in job.runSynchronously(on: asUnownedTaskExecutor()) }
    }
}
