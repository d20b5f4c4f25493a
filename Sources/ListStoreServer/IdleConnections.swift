import ListStoreCore
import NIOCore

/// The open connections that hold no request now, oldest first, so that a server at its cap
/// closes the one idle longest to make room for a new one instead of refusing it: a flood of idle
/// or half-sent connections pushes out itself, never a request in progress (RunningAServer.md,
/// “Limits”). `RequestActivityHandler` says when its connection turns idle or busy.
final class IdleConnections: Sendable {
    private struct State {
        var nextSeq: UInt64 = 0
        /// Each idle connection with the sequence number of its turning idle, and how to close it.
        var idle: [ObjectIdentifier: (seq: UInt64, channel: any Channel, close: @Sendable () -> Void)] = [:]
        /// (seq, connection) in the order they turned idle; entries whose seq no longer matches
        /// `idle` are stale and skipped.
        var order: [(seq: UInt64, id: ObjectIdentifier)] = []
        var start = 0
        var readingChecks = 0
    }

    private let state = _Locked(State())

    /// How many connections are idle now.
    var count: Int { state.withLock { $0.idle.count } }

    /// Counts a check that found a client still reading its answer (for tests).
    func noteReading() { state.withLock { $0.readingChecks += 1 } }

    /// How many checks found a client still reading its answer (for tests).
    var readingChecks: Int { state.withLock { $0.readingChecks } }

    /// How many times a connection has turned idle so far (for tests: unlike `count`, it never
    /// goes down, so a wait for it cannot miss a connection idle only for a moment).
    var turnedIdle: UInt64 { state.withLock { $0.nextSeq } }

    /// `channel` holds no request from now on; `close` closes it, to make room. Returns the mark of
    /// this turn (see `isStillIdle(_:since:)`). A channel already idle keeps its place: it is
    /// reported at setup and again when active, which a loaded machine may run after the next
    /// connection's setup.
    /// - Complexity: O(1) amortized.
    @discardableResult
    func idle(_ channel: any Channel, close: @escaping @Sendable () -> Void) -> UInt64 {
        let id = ObjectIdentifier(channel)
        return state.withLock { state in
            if let turn = state.idle[id]?.seq { return turn }
            state.nextSeq += 1
            state.idle[id] = (state.nextSeq, channel, close)
            state.order.append((state.nextSeq, id))
            Self.compact(&state)
            return state.nextSeq
        }
    }

    /// Whether `channel` has been idle, with no other report of it, since the turn `mark` began.
    /// - Complexity: O(1).
    func isStillIdle(_ channel: any Channel, since mark: UInt64) -> Bool {
        state.withLock { $0.idle[ObjectIdentifier(channel)]?.seq == mark }
    }

    /// `channel` holds a request from now on (or has closed).
    /// - Complexity: O(1).
    func busy(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        _ = state.withLock { $0.idle.removeValue(forKey: id) }
    }

    /// Closes the connection idle longest, if any; `true` when one is being closed. It leaves the
    /// idle connections at once, so that each call closes another.
    /// - Complexity: O(1) amortized.
    func closeOldest() -> Bool {
        let close: (@Sendable () -> Void)? = state.withLock { state in
            while state.start < state.order.count {
                let (seq, id) = state.order[state.start]
                state.start += 1
                // A connection closed meanwhile frees its own place.
                if let entry = state.idle[id], entry.seq == seq {
                    state.idle[id] = nil
                    if entry.channel.isActive { return entry.close }
                }
            }
            return nil
        }
        close?()
        return close != nil
    }

    /// Drops the stale entries once they are most of the order.
    private static func compact(_ state: inout State) {
        guard state.order.count - state.start > 2 * state.idle.count + 64 else { return }
        state.order = state.idle.map { (seq: $0.value.seq, id: $0.key) }.sorted { $0.seq < $1.seq }
        state.start = 0
    }
}
