import Foundation

/// Threads of the stores' own for their blocking work (SQLite calls that may wait for another
/// process's write lock, diffs of large lists, waiting for a `_Background` result): never the
/// threads that run Swift's tasks.
///
/// On Linux, dispatch's global queues run on the very threads that run tasks, so work sent there
/// from an async method would still hold them; here it holds a thread of its own. A thread is
/// started when a job comes and none is idle (up to `maxThreads`; beyond that jobs wait their turn),
/// and one that has been idle for `idleTime` ends.
///
/// Not API: package-visible for the engines (`PostgresStore` runs its diffs here too).
package final class _BlockingThreads: @unchecked Sendable {
    // Safe: `jobs`, `next`, `urgent`, `threads` and `idle` are only used while `condition` is locked.

    /// The threads every store shares.
    package static let shared = _BlockingThreads(maxThreads: 64, idleTime: 10)

    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    private var next = 0
    private var urgent: [@Sendable () -> Void] = []
    private var threads = 0
    private var idle = 0
    private let maxThreads: Int
    private let idleTime: TimeInterval

    package init(maxThreads: Int, idleTime: TimeInterval) {
        self.maxThreads = maxThreads
        self.idleTime = idleTime
    }

    /// Runs `job` on one of the threads, after the jobs submitted before it have started.
    ///
    /// With `beyondLimit`, the job goes before the others, and a thread is started for it when none
    /// is idle even if there are `maxThreads` already: for work that jobs running there wait for (a
    /// `_Background` computation), which must never wait for them in turn.
    package func submit(beyondLimit: Bool = false, _ job: @escaping @Sendable () -> Void) {
        condition.lock()
        if beyondLimit { urgent.append(job) } else { jobs.append(job) }
        let waiting = urgent.count + jobs.count - next
        if idle < waiting, beyondLimit || threads < maxThreads {
            threads += 1
            Thread { [self] in work() }.start()
        }
        condition.signal()
        condition.unlock()
    }

    /// Runs `work` on one of the threads and resumes the caller with what it returns or throws.
    package func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            submit { continuation.resume(with: Result { try work() }) }
        }
    }

    private func work() {
        condition.lock()
        while true {
            idle += 1
            var waited = true
            while urgent.isEmpty, next == jobs.count, waited {
                waited = condition.wait(until: Date(timeIntervalSinceNow: idleTime))
            }
            idle -= 1
            let job: @Sendable () -> Void
            if !urgent.isEmpty {
                job = urgent.removeFirst()
            } else if next < jobs.count {
                job = jobs[next]
                next += 1
                if next == jobs.count {
                    jobs.removeAll(keepingCapacity: true)
                    next = 0
                }
            } else {
                break  // idle for `idleTime`: this thread ends
            }
            condition.unlock()
            job()
            condition.lock()
        }
        threads -= 1
        condition.unlock()
    }
}
