import Foundation
import Testing

/// A trait for suites whose tests compute for seconds between suspension points (random and
/// property tests over thousands of cases): their bodies run on threads of their own instead of
/// the cooperative thread pool.
///
/// The test process runs every suite at once, and the pool has one thread per core. Long
/// computations there would hold it for many seconds at a time, and the in-process servers,
/// timers and streams of other tests (which need the pool to answer at all) would wait for them.
/// On threads of their own, the operating system shares the cores among both.
///
/// ```swift
/// @Suite(.heavyWork) struct StagedChangesetPropertyTests { … }
/// ```
public struct HeavyWork: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *), testCase != nil {
            try await withTaskExecutorPreference(_HeavyWorkThreads.shared) { try await function() }
        } else {
            try await function()
        }
    }
}

extension Trait where Self == HeavyWork {
    /// Runs the tests' bodies on threads of their own (see `HeavyWork`).
    public static var heavyWork: Self { HeavyWork() }
}

/// As many threads as cores, running the jobs of the tasks that prefer them in the order they come.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
private final class _HeavyWorkThreads: TaskExecutor, @unchecked Sendable {
    // Safe: `jobs` and `next` are only read and written while `condition` is locked.
    static let shared = _HeavyWorkThreads(threads: max(2, ProcessInfo.processInfo.activeProcessorCount))

    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var next = 0

    private init(threads: Int) {
        for index in 0..<threads {
            let thread = Thread { [unowned self] in self.work() }
            thread.name = "heavy-work-\(index)"
            thread.start()
        }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func work() {
        while true {
            condition.lock()
            while next == jobs.count { condition.wait() }
            let job = jobs[next]
            next += 1
            if next == jobs.count {
                jobs.removeAll(keepingCapacity: true)
                next = 0
            }
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
