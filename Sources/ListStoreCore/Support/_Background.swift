import Dispatch
import Foundation

/// A computation started on another thread, whose result the caller waits for.
///
/// It is sent to a serial dispatch queue of its own, which dispatch gives a thread even when its
/// others are busy (off Apple platforms, Swift's tasks run on those others: a diff of a large list
/// does not take one of their threads). `wait()` runs it on the waiting thread when no thread has
/// taken it yet, so a wait never depends on a free thread. The computations are a commit's CPU
/// work (diffs, hashes, the journal's JSON, the digest).
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

    /// Starts `work` on `queue` (by default a serial queue of its own).
    package init(on queue: DispatchQueue = DispatchQueue(label: "ListStore.background"), _ work: @escaping @Sendable () -> Result) {
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
