import Foundation

/// Runs `body` on the concurrency runtime's global executor and blocks the calling thread until it
/// returns, for the synchronous scenarios that time async library calls (a replica's pull, a
/// follower's `changes(after:)`). The calling thread is not one of the runtime's, so blocking it
/// takes nothing away from `body`.
func runBlocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let outcome = BlockingOutcome<T>()
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        do {
            outcome.set(.success(try await body()))
        } catch {
            outcome.set(.failure(error))
        }
        done.signal()
    }
    done.wait()
    return try outcome.get()
}

/// The result handed from the task to the blocked thread.
private final class BlockingOutcome<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var result: Result<T, any Error>?

    func set(_ result: Result<T, any Error>) {
        lock.lock()
        self.result = result
        lock.unlock()
    }

    func get() throws -> T {
        lock.lock()
        defer { lock.unlock() }
        guard let result else { preconditionFailure("runBlocking: the task ended without a result") }
        return try result.get()
    }
}
