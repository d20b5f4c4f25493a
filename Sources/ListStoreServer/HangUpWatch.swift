import ListStoreCore
import NIOCore

/// Ends a request's waits the moment its client hangs up, so that its place among the waiting
/// requests is free at once rather than when the wait times out or a keep-alive fails.
///
/// While it lives it tells the connection's `RequestActivityHandler` that the request waits, so the
/// handler closes a connection whose client closes its side (Hummingbird keeps it open for the
/// answer under way). A closed channel, or a reset HTTP/2 stream, interrupts the wait in progress:
/// a wait in `HeadWatcher`'s table through `onClose(_:)`, other work (a push's merge) through `run`.
final class HangUpWatch: Sendable {
    private let channel: any Channel
    /// Interrupts the wait in progress; `closed` once the channel has closed.
    private let state = _Locked<(interrupt: (@Sendable () -> Void)?, closed: Bool)>((nil, false))

    init(_ channel: any Channel) {
        self.channel = channel
        channel.triggerUserOutboundEvent(RequestActivityHandler.Wait.started, promise: nil)
        channel.closeFuture.whenComplete { [state] _ in
            let interrupt = state.withLock { state in
                state.closed = true
                return state.interrupt
            }
            interrupt?()
        }
    }

    deinit {
        channel.triggerUserOutboundEvent(RequestActivityHandler.Wait.ended, promise: nil)
    }

    /// Whether the client hung up (the channel closed).
    var isClosed: Bool { state.withLock { $0.closed } }

    /// Calls `interrupt` when the channel closes, from now until `clear()` (at once when it has
    /// closed already).
    func onClose(_ interrupt: @escaping @Sendable () -> Void) {
        let closed = state.withLock { state in
            if !state.closed { state.interrupt = interrupt }
            return state.closed
        }
        if closed { interrupt() }
    }

    /// Forgets what `onClose(_:)` registered.
    func clear() {
        state.withLock { $0.interrupt = nil }
    }

    /// Runs `work` until it ends, cancelling it when the client hangs up: a push's merge, which
    /// nobody would hear the answer of, stops and writes nothing. Work that ended before the
    /// hang-up was noticed keeps its result.
    /// - Throws: what `work` throws (`CancellationError` when the hang-up stopped it).
    func run<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) async throws -> T {
        let working = Task { try await work() }
        onClose { working.cancel() }
        defer { clear() }
        return try await withTaskCancellationHandler { try await working.value } onCancel: { working.cancel() }
    }
}
