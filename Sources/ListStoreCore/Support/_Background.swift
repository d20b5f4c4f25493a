import Dispatch

/// A computation running on another thread, whose result the caller waits for.
///
/// `@unchecked Sendable`: `result` is written once by the worker before `done` is signalled and read
/// only after `wait()` has seen that signal.
package final class _Background<Result: Sendable>: @unchecked Sendable {
    private var result: Result?
    private let done = DispatchSemaphore(value: 0)

    package init(_ work: @escaping @Sendable () -> Result) {
        _BlockingThreads.shared.submit(beyondLimit: true) {
            self.result = work()
            self.done.signal()
        }
    }

    /// A result known already.
    package init(finished result: Result) {
        self.result = result
        done.signal()
    }

    /// Waits for the result (any number of times, from any thread).
    package func wait() -> Result {
        done.wait()
        defer { done.signal() }
        return result!
    }
}
