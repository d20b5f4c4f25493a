import ListStore

/// Concurrent identical reads share one: the first caller of a key reads (in its own task), callers
/// of the same key that come while it reads wait for its result, and once it is done the key is
/// forgotten. Nothing is cached: a caller that comes after a read is done reads again; one that joins
/// a read under way gets what that read found when it started (a long poll then answers an empty
/// page and is asked again; an event stream sees that the head moved and reads again).
///
/// Long polls woken by one commit all ask for the page after the same version, and so do the event
/// streams at that version: on PostgreSQL each read is a round trip, and a thousand of them at once
/// cost more than the commit itself.
final class SharedReads<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// The callers waiting for the read under way of each key.
    private let running = _Locked([Key: [CheckedContinuation<Value, any Error>]]())

    /// The value of the read under way for `key`, or of `read`, run now.
    /// - Throws: what the read throws (to every caller that shared it); when the reading caller was
    ///   cancelled, the others read again instead of getting its failure (on PostgreSQL a cancelled
    ///   read fails with `.io`, not `CancellationError`).
    func value(for key: Key, _ read: () async throws -> Value) async throws -> Value {
        let reads = running.withLock { running -> Bool in
            guard running[key] == nil else { return false }
            running[key] = []
            return true
        }
        guard reads else {
            do {
                return try await withCheckedThrowingContinuation { continuation in
                    let joined = running.withLock { running -> Bool in
                        guard running[key] != nil else { return false }
                        running[key]!.append(continuation)
                        return true
                    }
                    // The read ended in between: read anew.
                    if !joined { continuation.resume(throwing: CancellationError()) }
                }
            } catch is CancellationError where !Task.isCancelled {
                return try await value(for: key, read)
            }
        }
        let result: Result<Value, any Error>
        do {
            result = .success(try await read())
        } catch {
            result = .failure(error)
        }
        let waiting = running.withLock { $0.removeValue(forKey: key) ?? [] }
        if Task.isCancelled, case .failure = result {
            // Not the others' failure: each of them reads again.
            for continuation in waiting { continuation.resume(throwing: CancellationError()) }
        } else {
            for continuation in waiting { continuation.resume(with: result) }
        }
        return try result.get()
    }

    /// How many callers wait for the read under way of `key` (for tests).
    func waitingCount(for key: Key) -> Int {
        running.withLock { $0[key]?.count ?? 0 }
    }
}
