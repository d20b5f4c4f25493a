import ListStoreCore

/// Counts the holders of a scarce resource (connections, or requests that wait for commits)
/// against a maximum. A holder keeps a `Slot` alive (`withExtendedLifetime`); it is given back when
/// deallocated, so it cannot leak whichever way the request or connection ends.
final class ConnectionLimiter: Sendable {
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
    private let held = _Locked(0)
    private let closed = _Locked(false)

    init(maximum: Int) {
        self.maximum = max(0, maximum)
    }

    /// A slot, or `nil` when `maximum` are held or the limiter is closed.
    /// - Complexity: O(1).
    func slot() -> Slot? {
        guard !isClosed else { return nil }
        let taken = held.withLock { held in
            guard held < maximum else { return false }
            held += 1
            return true
        }
        return taken ? Slot(self) : nil
    }

    /// A slot even when `maximum` are held: for a connection taken in place of one being closed
    /// to make room (`IdleConnections.closeOldest()`), which gives its slot back once closed.
    /// - Complexity: O(1).
    func slotInPlaceOfOneClosing() -> Slot {
        held.withLock { $0 += 1 }
        return Slot(self)
    }

    /// How many slots are held now.
    var current: Int { held.withLock { $0 } }

    /// Whether `close()` was called (and `open()` not since): no slot is given.
    var isClosed: Bool { closed.withLock { $0 } }

    /// Gives no slot from now on; the slots held stay until they are given back.
    func close() {
        closed.withLock { $0 = true }
    }

    /// Gives slots again.
    func open() {
        closed.withLock { $0 = false }
    }

    private func release() {
        held.withLock { $0 -= 1 }
    }
}
