import Dispatch
import Foundation

/// A computation started on another thread, whose result the caller waits for.
///
/// It is sent to one of dispatch's global queues (`queue`), and `wait()` runs it on the waiting
/// thread when no thread has taken it yet: a wait never depends on a free thread, so a computation
/// started from work that fills every thread still finishes, and no pool of the stores' own is
/// needed. The computations are the store's CPU work (diffs, hashes, the journal's JSON), which
/// never block.
///
/// `@unchecked Sendable`: `state` is only used while `condition` is locked.
package final class _Background<Result: Sendable>: @unchecked Sendable {
    private enum State {
        case waiting(@Sendable () -> Result)
        case running
        case finished(Result)
    }

    private var state: State
    private let condition = NSCondition()

    /// Starts `work` on `queue` (dispatch's global queue by default).
    package init(on queue: DispatchQueue = .global(), _ work: @escaping @Sendable () -> Result) {
        state = .waiting(work)
        queue.async { self.runIfWaiting() }
    }

    /// A result known already.
    package init(finished result: Result) {
        state = .finished(result)
    }

    /// Waits for the result (any number of times, from any thread); runs the computation here when
    /// no thread has started it.
    package func wait() -> Result {
        runIfWaiting()
        condition.lock()
        defer { condition.unlock() }
        while true {
            if case .finished(let result) = state { return result }
            condition.wait()
        }
    }

    /// Runs the computation unless a thread took it already.
    private func runIfWaiting() {
        condition.lock()
        guard case .waiting(let work) = state else { return condition.unlock() }
        state = .running
        condition.unlock()
        let result = work()
        condition.lock()
        state = .finished(result)
        condition.broadcast()
        condition.unlock()
    }
}
