import ListStoreCore
import NIOCore

/// Ends a request's waits (a long poll's, an event stream's at the head) the moment its client
/// hangs up, so that its place among the waiting requests is free at once rather than when the wait
/// times out or the next keep-alive fails to be written.
///
/// The connection's `RequestActivityHandler` closes a connection whose client closes its side while
/// a request waits (Hummingbird keeps half-closed connections open for the answers under way); a
/// closed channel (an HTTP/2 stream reset too) cancels the wait in progress. One watch serves
/// every wait of a request, registered with the channel once. A push's merge runs under one too
/// (`run`): a client that hangs up, or closes its side, while its push merges stops the merge; it
/// gets no answer either way, and its replica pushes again, merged once.
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
        let (outcome, closed) = await watching(wait)
        return closed ? nil : try? outcome.get()
    }

    /// Runs `work` until it ends, cancelling it when the client hangs up: a push's merge, which
    /// nobody would hear the answer of, stops and writes nothing. Work that ended before the
    /// hang-up was noticed keeps its result.
    /// - Throws: what `work` throws (`CancellationError` when the hang-up stopped it).
    func run<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) async throws -> T {
        try await watching(work).outcome.get()
    }

    /// Runs `work` in a task of its own that the channel's closing cancels; its outcome, and
    /// whether the channel closed meanwhile.
    private func watching<T: Sendable>(
        _ work: @escaping @Sendable () async throws -> T
    ) async -> (outcome: Result<T, any Error>, closed: Bool) {
        channel.triggerUserOutboundEvent(RequestActivityHandler.Wait.started, promise: nil)
        defer { channel.triggerUserOutboundEvent(RequestActivityHandler.Wait.ended, promise: nil) }
        let working = Task { try await work() }
        let registered = state.withLock { state in
            if !state.closed { state.cancel = { working.cancel() } }
            return !state.closed
        }
        if !registered { working.cancel() }
        let outcome = await withTaskCancellationHandler { await working.result } onCancel: { working.cancel() }
        let closed = state.withLock { state in
            state.cancel = nil
            return state.closed
        }
        return (outcome, closed)
    }
}
