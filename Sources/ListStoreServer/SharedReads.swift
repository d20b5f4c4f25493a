import ListStore

/// Concurrent identical reads share one: the first caller of a key starts the read, callers of the
/// same key that come while it runs wait for its result, and once it is done the key is forgotten.
/// Nothing is cached: a caller that comes later reads again, so no answer is older than its request.
///
/// Long polls woken by one commit all ask for the page after the same version: on PostgreSQL each
/// read is a round trip, and a thousand of them at once cost more than the commit itself.
final class SharedReads<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private let running = _Locked([Key: Task<Value, any Error>]())

    /// The value of the read running for `key`, or of `read`, started now.
    /// - Throws: what the read throws (to every caller that shared it).
    func value(for key: Key, _ read: @escaping @Sendable () async throws -> Value) async throws -> Value {
        let (task, started) = running.withLock { running -> (Task<Value, any Error>, Bool) in
            if let task = running[key] { return (task, false) }
            let task = Task { try await read() }
            running[key] = task
            return (task, true)
        }
        guard started else { return try await task.value }
        let result = await task.result
        running.withLock { $0[key] = nil }
        return try result.get()
    }
}
