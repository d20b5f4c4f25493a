import Foundation
import ListStore

/// Wakes the requests that wait for a list to pass a version (long polls and event streams): one
/// loop reads the heads for all of them, at once after a commit the store learns of (this process's,
/// and on PostgreSQL other servers' through `NOTIFY`) and every `pollInterval` for the others, so a
/// thousand waiting clients cost one query.
final class HeadWatcher: @unchecked Sendable {
    private struct Waiter {
        var list: String
        var after: Int
        var continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var waiters: [UInt64: Waiter] = [:]
        var nextID: UInt64 = 0
        var closed = false
        /// The heads the last read found: a wait for a version they are already past ends at once.
        var heads: [String: Int] = [:]
    }

    let store: any ListStoreEngine
    let pollInterval: Duration
    // `@unchecked Sendable`: `state` is only touched under `lock`.
    private let lock = NSLock()
    private var state = State()

    init(store: any ListStoreEngine, pollInterval: Duration) {
        self.store = store
        self.pollInterval = pollInterval
    }

    private func withState<T>(_ body: (inout State) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&state)
    }

    /// Reads the heads while anyone waits, until the task is cancelled or `close()` is called.
    func run() async {
        while !Task.isCancelled {
            let generation = store.commitGeneration()
            let (closed, waiting) = withState { ($0.closed, !$0.waiters.isEmpty) }
            if closed { return }
            if waiting, let lists = try? await store.lists() {
                let heads = Dictionary(lists.map { ($0.name, $0.version) }, uniquingKeysWith: { a, _ in a })
                let woken = withState { state -> [CheckedContinuation<Bool, Never>] in
                    state.heads = heads
                    let ids = state.waiters.filter { entry in (heads[entry.value.list] ?? -1) > entry.value.after }.map(\.key)
                    return ids.compactMap { state.waiters.removeValue(forKey: $0)?.continuation }
                }
                for continuation in woken { continuation.resume(returning: true) }
            }
            await store.waitForCommit(after: generation, timeout: pollInterval)
        }
    }

    /// Returns `true` as soon as the head of `list` is past `version` (seen by the next read of the
    /// heads), `false` after `timeout`, when the task is cancelled or the watcher closes.
    func wait(for list: String, after version: Int, timeout: Duration) async -> Bool {
        let id = withState { state -> UInt64 in
            state.nextID &+= 1
            return state.nextID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let added = withState { state -> Bool? in
                    guard !state.closed else { return false }
                    // A commit the last read saw already passed it (it landed after the caller read).
                    if (state.heads[list] ?? -1) > version { return true }
                    state.waiters[id] = Waiter(list: list, after: version, continuation: continuation)
                    return nil
                }
                if let added {
                    continuation.resume(returning: added)
                    return
                }
                Task { [weak self] in
                    try? await Task.sleep(for: timeout)
                    self?.resume(id)
                }
            }
        } onCancel: {
            resume(id)
        }
    }

    /// Ends every wait now and every later one at once (the server is shutting down).
    func close() {
        let all = withState { state -> [CheckedContinuation<Bool, Never>] in
            state.closed = true
            defer { state.waiters = [:] }
            return state.waiters.values.map(\.continuation)
        }
        for continuation in all { continuation.resume(returning: false) }
    }

    /// Whether `close()` was called.
    var isClosed: Bool { withState { $0.closed } }

    private func resume(_ id: UInt64) {
        withState { $0.waiters.removeValue(forKey: id) }?.continuation.resume(returning: false)
    }
}
