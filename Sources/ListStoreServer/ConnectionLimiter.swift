import Foundation

/// Counts the holders of a scarce resource — connections, or requests that wait for commits —
/// against a maximum. A holder keeps a `Slot`; the slot is given back when it is deallocated, so it
/// cannot leak on any path, whichever way the request or connection ends.
///
/// ```swift
/// let streams = ConnectionLimiter(maximum: 100)
/// guard let slot = streams.slot() else { throw busy }
/// defer { withExtendedLifetime(slot) {} }
/// ```
final class ConnectionLimiter: @unchecked Sendable {
    /// A held place, given back when deallocated.
    final class Slot: Sendable {
        private let limiter: ConnectionLimiter

        fileprivate init(_ limiter: ConnectionLimiter) {
            self.limiter = limiter
        }

        deinit {
            limiter.release()
        }
    }

    /// The most slots held at once.
    let maximum: Int
    // `@unchecked Sendable`: `held` is only touched under `lock`.
    private let lock = NSLock()
    private var held = 0

    init(maximum: Int) {
        self.maximum = max(0, maximum)
    }

    /// A slot, or `nil` when `maximum` are held.
    ///
    /// - Complexity: O(1).
    func slot() -> Slot? {
        lock.lock()
        defer { lock.unlock() }
        guard held < maximum else { return nil }
        held += 1
        return Slot(self)
    }

    /// How many slots are held now.
    var current: Int {
        lock.lock()
        defer { lock.unlock() }
        return held
    }

    private func release() {
        lock.lock()
        defer { lock.unlock() }
        held -= 1
    }
}
