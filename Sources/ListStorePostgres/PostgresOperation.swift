import ListStoreCore
import Logging
import NIOCore
import PostgresNIO

/// What one store operation on PostgreSQL has done so far (`PostgresStore.withConnection`): whether
/// it has a connection, whether its commit was sent, whether its time ran out. Its time running
/// out closes its connection, so that a statement waiting on a database that does not answer fails
/// at once.
final class PostgresOperation: Sendable {
    private struct State {
        var connection: PostgresConnection?
        var hadConnection = false
        var committing = false
        var expired = false
    }

    private let state = _Locked(State())
    /// When the operation's time runs out.
    let deadline: NIODeadline
    /// How long it may take, for messages.
    let limit: Duration

    /// An operation of at most `limit`, from now.
    init(limit: Duration) {
        self.limit = limit
        deadline = .now() + .nanoseconds(Int64(clamping: limit.components.seconds) * 1_000_000_000 + limit.components.attoseconds / 1_000_000_000)
    }

    /// Takes `connection` for the operation; `false` when its time ran out first (the connection
    /// goes back to the pool unused).
    func start(on connection: PostgresConnection) -> Bool {
        state.withLock { state in
            guard !state.expired else { return false }
            state.connection = connection
            state.hadConnection = true
            return true
        }
    }

    /// The operation is done with its connection.
    func end() {
        state.withLock { $0.connection = nil }
    }

    /// The commit is about to be sent: from now on a lost connection may have committed. `false`
    /// when the operation's time has run out: the commit must not be sent.
    func commit() -> Bool {
        state.withLock { state in
            guard !state.expired else { return false }
            state.committing = true
            return true
        }
    }

    /// The database refused the commit: nothing landed.
    func commitRefused() {
        state.withLock { $0.committing = false }
    }

    /// The operation's time ran out: its connection, if it holds one, is closed.
    func expire() {
        let connection = state.withLock { state -> PostgresConnection? in
            state.expired = true
            return state.connection
        }
        connection?.close().whenComplete { _ in }
    }

    /// Runs `query` on `connection`, failing at the operation's deadline if it has not ended: a
    /// statement sent as its connection closes may otherwise never be answered, nor failed.
    func run(_ query: PostgresQuery, on connection: PostgresConnection, logger: Logger, location: String) -> EventLoopFuture<PostgresQueryResult> {
        let promise = connection.eventLoop.makePromise(of: PostgresQueryResult.self)
        let done = _Locked(false)
        let complete: @Sendable (Result<PostgresQueryResult, any Error>) -> Void = { result in
            guard done.withLock({ done in defer { done = true }; return !done }) else { return }
            promise.completeWith(result)
        }
        connection.query(query, logger: logger).whenComplete(complete)
        let limit = self.limit
        let timer = connection.eventLoop.scheduleTask(deadline: deadline) {
            complete(.failure(StoreError(.unavailable, "the store at \(location) did not answer within \(limit); nothing was changed")))
        }
        promise.futureResult.whenComplete { _ in timer.cancel() }
        return promise.futureResult
    }

    var hadConnection: Bool { state.withLock { $0.hadConnection } }
    var committing: Bool { state.withLock { $0.committing } }
    var expired: Bool { state.withLock { $0.expired } }
}
