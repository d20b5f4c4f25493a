import ListStoreCore

/// Concurrent identical reads share one: the first caller of a key reads (in its own task), callers
/// of the same key that come while it reads wait for its result, and once it is done the key is
/// forgotten, unless its value is one to keep (`keep`): then the last `capacity` such values are
/// answered for up to `maxAge` to the callers that come after the read and pass the same
/// `generation` (the store's commit generation, read before the read: the value then holds every
/// commit the process knew of). One that joins a read under way, or gets a kept value, gets what
/// that read found when it started (a long poll then answers a page without the newest commits and
/// is asked again; an event stream sees that the head moved and reads again): so only values that
/// let such a caller move on (a page with entries, not an empty one) are worth keeping, and only
/// callers woken by a commit pass a generation (a plain request reads the store).
///
/// Long polls woken by one commit all ask for the page after the same version, and so do the event
/// streams at that version: on PostgreSQL each read is a round trip, and a thousand of them at once
/// cost more than the commit itself. With 10,000 of them, waking takes longer than a read, so most
/// come after it: the page kept for them is what makes one read per commit.
///
/// ```swift
/// let pages = SharedReads<PageKey, EventPage>(keeping: 16, for: .seconds(1)) { $0.lastVersion != nil }
/// let page = try await pages.value(for: key) { try await readPage() }
/// ```
final class SharedReads<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// The callers waiting for the read under way of each key.
    private let running = _Locked([Key: [CheckedContinuation<Value, any Error>]]())
    /// The values kept, with the generation their read passed and when it ended, oldest first.
    private let kept = _Locked([(key: Key, generation: UInt64, value: Value, at: ContinuousClock.Instant)]())
    private let capacity: Int
    private let maxAge: Duration
    private let keep: @Sendable (Value) -> Bool

    /// How long a value is kept by default: a kept value answers only callers at its generation,
    /// so its age bounds nothing but how long it stays in memory (which `capacity` bounds too). Ten
    /// seconds, so that callers woken by a commit that resume late (on a loaded machine, seconds
    /// after the read) still share it.
    static var defaultMaxAge: Duration { .seconds(10) }

    /// Reads that keep nothing once they are done (`keeping: 0`), or the last `capacity` values
    /// `keep` accepts, each for `maxAge`.
    init(keeping capacity: Int = 0, for maxAge: Duration = defaultMaxAge, when keep: @escaping @Sendable (Value) -> Bool = { _ in true }) {
        self.capacity = capacity
        self.maxAge = maxAge
        self.keep = keep
    }

    /// The value of the read under way for `key`, the value kept for `key` at `generation` (none
    /// when it is nil), or the value of `read`, run now.
    /// - Throws: what the read throws (to every caller that shared it); when the reading caller was
    ///   cancelled, the others read again instead of getting its failure (on PostgreSQL a cancelled
    ///   read fails with `.io`, not `CancellationError`).
    func value(for key: Key, generation: UInt64? = nil, _ read: () async throws -> Value) async throws -> Value {
        if let generation, let value = keptValue(for: key, generation: generation) { return value }
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
                return try await value(for: key, generation: generation, read)
            }
        }
        let result: Result<Value, any Error>
        do {
            result = .success(try await read())
        } catch {
            result = .failure(error)
        }
        if capacity > 0, let generation, case .success(let value) = result, keep(value) {
            let now = ContinuousClock.now
            kept.withLock { kept in
                kept.removeAll { $0.key == key || now - $0.at >= maxAge }
                kept.append((key, generation, value, now))
                if kept.count > capacity { kept.removeFirst(kept.count - capacity) }
            }
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

    /// The value of `key` kept from a read at `generation` (not older than the age given to
    /// `init`), if any: what `value(for:generation:_:)` answers without reading.
    /// - Complexity: O(capacity).
    func keptValue(for key: Key, generation: UInt64) -> Value? {
        guard capacity > 0 else { return nil }
        let now = ContinuousClock.now
        return kept.withLock { kept in
            kept.last { $0.key == key && $0.generation == generation && now - $0.at < maxAge }?.value
        }
    }

    /// How many callers wait for the read under way of `key` (for tests).
    func waitingCount(for key: Key) -> Int {
        running.withLock { $0[key]?.count ?? 0 }
    }
}
