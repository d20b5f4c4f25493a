import ListStoreCore

/// The turns of the reads of list pages (`GET /v1/lists/{list}/pages`): at most `maximum` at once,
/// the others waiting in order, so that a server holds a few pages however many first syncs are
/// under way. A read whose request is cancelled while it waits leaves the queue.
final class PageReadTurns: Sendable {
    private struct State {
        var running = 0
        var waiting: [(id: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []
        var nextID: UInt64 = 0
    }

    let maximum: Int
    private let state = _Locked(State())

    init(maximum: Int) {
        self.maximum = max(1, maximum)
    }

    /// Runs `body` in its turn.
    /// - Throws: `CancellationError` when the task is cancelled while it waits; what `body` throws.
    func taking<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        try await take()
        defer { give() }
        return try await body()
    }

    /// The reads running and waiting (for tests).
    var counts: (running: Int, waiting: Int) { state.withLock { ($0.running, $0.waiting.count) } }

    private func take() async throws {
        let id: UInt64? = state.withLock { state in
            if state.running < maximum {
                state.running += 1
                return nil
            }
            state.nextID += 1
            return state.nextID
        }
        guard let id else { return }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let cancelled = state.withLock { state -> Bool in
                    if Task.isCancelled { return true }
                    state.waiting.append((id, continuation))
                    return false
                }
                if cancelled { continuation.resume(throwing: CancellationError()) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                guard let k = state.waiting.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiting.remove(at: k).continuation
            }
            waiter?.resume(throwing: CancellationError())
        }
    }

    /// Ends a turn: the next waiting read runs (keeping the count), or the count goes down.
    private func give() {
        let next = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            if state.waiting.isEmpty {
                state.running -= 1
                return nil
            }
            return state.waiting.removeFirst().continuation
        }
        next?.resume()
    }
}
