import ListStoreCore
import NIOCore

/// Ends a request's waits (a long poll's, an event stream's at the head) the moment its client
/// hangs up, so that its place among the waiting requests is free at once rather than when the wait
/// times out or the next keep-alive fails to be written.
///
/// The connection's `HeaderTimeoutHandler` closes a connection whose client closes its side while
/// a request waits (Hummingbird keeps half-closed connections open for the answers of the others);
/// a closed channel (an HTTP/2 stream reset too) cancels the wait in progress. One watch serves
/// every wait of a request, registered with the channel once.
final class HangUpWatch: Sendable {
    private let channel: any Channel
    /// Cancels the wait in progress; `closed` once the channel has closed.
    private let state = _Locked<(cancel: (@Sendable () -> Void)?, closed: Bool)>((nil, false))

    init(_ channel: any Channel) {
        self.channel = channel
        channel.closeFuture.whenComplete { [state] _ in
            let cancel = state.withLock { state in
                state.closed = true
                return state.cancel
            }
            cancel?()
        }
    }

    /// Runs `wait` until it returns, or until the client hangs up (`nil` then).
    func wait<T: Sendable>(_ wait: @escaping @Sendable () async -> T) async -> T? {
        channel.triggerUserOutboundEvent(HeaderTimeoutHandler.Event.waitingAnswer, promise: nil)
        defer { channel.triggerUserOutboundEvent(HeaderTimeoutHandler.Event.answerReady, promise: nil) }
        let waiting = Task { await wait() }
        let registered = state.withLock { state in
            if !state.closed { state.cancel = { waiting.cancel() } }
            return !state.closed
        }
        if !registered { waiting.cancel() }
        let value = await withTaskCancellationHandler { await waiting.value } onCancel: { waiting.cancel() }
        let closed = state.withLock { state in
            state.cancel = nil
            return state.closed
        }
        return closed ? nil : value
    }

    /// Runs `work` until it ends, cancelling it when the client hangs up: a push's merge, which
    /// nobody would hear the answer of, stops and writes nothing.
    /// - Throws: what `work` throws; `CancellationError` when the client hung up.
    func run<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) async throws -> T {
        let outcome = await wait { () async -> Result<T, any Error> in
            do { return .success(try await work()) } catch { return .failure(error) }
        }
        guard let outcome else { throw CancellationError() }
        return try outcome.get()
    }
}
