import Dispatch
@testable import ListStoreCore
import Testing

/// Computations started on another thread (`_Background`), as the store's commits use them.
struct BackgroundTests {
    /// A computation no thread takes (its queue is suspended) is run by its first waiter, once: a
    /// wait never depends on a free thread.
    @Test func aComputationNoThreadTookIsRunByItsWaiter() {
        let queue = DispatchQueue(label: "BackgroundTests.suspended")
        queue.suspend()
        let runs = _Locked(0)
        let background = _Background(on: queue) { () -> Int in
            runs.withLock { $0 += 1 }
            return 42
        }
        #expect(background.wait() == 42)
        #expect(background.wait() == 42)
        queue.resume()
        queue.sync {}  // the queued start found the computation done
        #expect(runs.withLock { $0 } == 1)
    }

    /// Computations started from jobs that occupy every thread of a queue, and waited for there,
    /// all finish, each with its own result, whatever thread ran them.
    @Test(.timeLimit(.minutes(1))) func computationsWaitedForOnEveryThreadFinish() {
        let jobs = 64
        let results = _Locked([Int: Int]())
        DispatchQueue.concurrentPerform(iterations: jobs) { k in
            let inner = _Background { () -> Int in
                let nested = _Background { k * k }
                return nested.wait() + 1
            }
            let value = inner.wait()
            results.withLock { $0[k] = value }
        }
        #expect(results.withLock { $0 } == Dictionary(uniqueKeysWithValues: (0..<jobs).map { ($0, $0 * $0 + 1) }))
    }

    /// Waiters on several threads at once all get the one result.
    @Test func everyWaiterGetsTheResult() {
        let background = _Background { (0..<10_000).reduce(0, +) }
        let values = _Locked([Int]())
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            let value = background.wait()
            values.withLock { $0.append(value) }
        }
        #expect(values.withLock { $0 } == Array(repeating: 49_995_000, count: 8))
    }
}
