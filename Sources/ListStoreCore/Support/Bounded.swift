/// Work bounded in time without waiting for it to end: for a read that must answer within a limit
/// (a health check, opening a store) although what it waits on (a pooled connection, a connection
/// attempt that a pool retries) may not end when it is cancelled.
package enum Bounded {
    /// `work`'s result, or `nil` once `limit` has passed. Returns as soon as either happens (or
    /// throws `CancellationError` as soon as the caller is cancelled), cancelling `work`, without
    /// waiting for it: work that ignores its cancellation runs on unobserved.
    /// - Throws: what `work` throws; `CancellationError`.
    package static func run<T: Sendable>(
        within limit: Duration, _ work: @escaping @Sendable () async throws -> T
    ) async throws -> T? {
        let pending = _Locked<CheckedContinuation<T?, any Error>?>(nil)
        let tasks = _Locked<[Task<Void, Never>]>([])
        // Resumes the caller (once) and cancels the work and the timer.
        let finish: @Sendable (Result<T?, any Error>) -> Void = { result in
            pending.withLock { $0.take() }?.resume(with: result)
            for task in tasks.withLock({ $0 }) { task.cancel() }
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T?, any Error>) in
                pending.withLock { $0 = continuation }
                let running = Task {
                    do {
                        finish(.success(try await work()))
                    } catch {
                        finish(.failure(error))
                    }
                }
                let timer = Task {
                    guard (try? await Task.sleep(for: limit)) != nil else { return }
                    finish(.success(nil))
                }
                tasks.withLock { $0 = [running, timer] }
                // What finished before the tasks were kept found nothing to cancel.
                if Task.isCancelled { finish(.failure(CancellationError())) }
                if pending.withLock({ $0 == nil }) { finish(.failure(CancellationError())) }
            }
        } onCancel: {
            finish(.failure(CancellationError()))
        }
    }
}
