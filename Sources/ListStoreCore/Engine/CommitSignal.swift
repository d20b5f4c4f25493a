import Foundation

/// Wakes those waiting for a commit to a store file in this process as soon as it lands: this
/// process's commits, and other processes' that `_StoreFileWatcher` hears of.
///
/// Not API (package-visible: ListSync's followers and the server wait on it, and poll besides for
/// commits no one told it of).
package final class CommitSignal: Sendable {
    /// The one signal of the process.
    package static let shared = CommitSignal()

    private struct State {
        var generations: [String: UInt64] = [:]
        var waiters: [UInt64: (path: String, continuation: CheckedContinuation<Void, Never>)] = [:]
        var nextWaiter: UInt64 = 0
    }
    private let state = _Locked(State())

    /// A signal of its own (an engine whose commits are not keyed by file, such as PostgreSQL's).
    package init() {}

    /// The key of a store file: its standardized path. Computed once per path (it asks the file
    /// system whether the path is a directory, and a server with 10,000 event streams asks for the
    /// generation 10,000 times per commit); at most `keysKept` are remembered.
    package static func key(_ path: String) -> String {
        if let key = keys.withLock({ $0[path] }) { return key }
        let key = URL(fileURLWithPath: path).standardizedFileURL.path
        keys.withLock { keys in
            if keys.count >= keysKept { keys.removeAll(keepingCapacity: true) }
            keys[path] = key
        }
        return key
    }

    /// The keys of the paths asked for lately.
    private static let keys = _Locked([String: String]())
    private static let keysKept = 1_024

    /// How many commits this process has signalled for `path`: read it before checking the store,
    /// then `wait(path:unlessGenerationIsNot:…)` does not miss a commit that lands in between.
    package func generation(of path: String) -> UInt64 {
        state.withLock { $0.generations[Self.key(path), default: 0] }
    }

    /// How many waits for a commit to `path` are under way (for tests: a follower that waits).
    package func waiterCount(path: String) -> Int {
        let key = Self.key(path)
        return state.withLock { $0.waiters.values.filter { $0.path == key }.count }
    }

    /// Signals a commit to `path`.
    package func notify(path: String) {
        let key = Self.key(path)
        let woken = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.generations[key, default: 0] &+= 1
            let ids = state.waiters.filter { $0.value.path == key }.map(\.key)
            return ids.compactMap { state.waiters.removeValue(forKey: $0)?.continuation }
        }
        for continuation in woken { continuation.resume() }
    }

    /// Returns at the next commit signalled for `path` (at once if one was since `generation`), after
    /// `timeout`, or when the task is cancelled, whichever comes first. The timer is a child task
    /// that ends with the wait: nothing outlives the call.
    package func wait(path: String, unlessGenerationIsNot generation: UInt64, timeout: Duration) async {
        let key = Self.key(path)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.waitForSignal(key, unlessGenerationIsNot: generation) }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
        }
    }

    /// Returns at the next commit signalled for `key` (at once if one was since `generation`), or when
    /// the task is cancelled.
    private func waitForSignal(_ key: String, unlessGenerationIsNot generation: UInt64) async {
        let id = state.withLock { state -> UInt64 in
            state.nextWaiter &+= 1
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                // Under the lock that `resume` takes too: a cancellation either comes first (and is
                // seen here) or finds the waiter registered.
                let waiting = state.withLock { state -> Bool in
                    guard state.generations[key, default: 0] == generation, !Task.isCancelled else { return false }
                    state.waiters[id] = (key, continuation)
                    return true
                }
                if !waiting { continuation.resume() }
            }
        } onCancel: {
            resume(id)
        }
    }

    private func resume(_ id: UInt64) {
        state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume()
    }
}
