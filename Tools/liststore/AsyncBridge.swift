import Dispatch
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs the async work of a synchronous command (`pull`) and waits for it on the calling thread.
enum AsyncBridge {
    /// Runs `body` in a task and returns what it returns (or throws what it throws).
    ///
    /// With `cancellingOn`, the first of those signals cancels the task (the body decides how to
    /// stop, and the command then exits as the body says, usually 0); a second one ends the process
    /// at once with 128 + the signal's number.
    static func run<T: Sendable>(
        cancellingOn signals: [Int32] = [], _ body: @escaping @Sendable () async throws -> T
    ) throws -> T {
        let outcome = Outcome<T>()
        let task = Task {
            do {
                outcome.finish(.success(try await body()))
            } catch {
                outcome.finish(.failure(error))
            }
        }
        let queue = DispatchQueue(label: "liststore.signals")
        let received = Outcome<Int32>()
        let sources = signals.map { number -> any DispatchSourceSignal in
            signal(number, SIG_IGN)  // the dispatch source hears it instead
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler {
                if received.isFinished { _exit(128 + number) }  // output is unbuffered: nothing is lost
                received.finish(.success(number))
                task.cancel()
            }
            source.resume()
            return source
        }
        defer {
            for source in sources { source.cancel() }
        }
        return try outcome.wait().get()
    }

    /// A result set once by one thread and awaited by another.
    private final class Outcome<T: Sendable>: @unchecked Sendable {
        // Safe: `result` is only read and written under `lock`.
        private var result: Result<T, any Error>?
        private let lock = NSLock()
        private let done = DispatchSemaphore(value: 0)

        var isFinished: Bool { lock.withLock { result != nil } }

        func finish(_ value: Result<T, any Error>) {
            lock.withLock { result = value }
            done.signal()
        }

        func wait() -> Result<T, any Error> {
            done.wait()
            return lock.withLock { result! }
        }
    }
}
