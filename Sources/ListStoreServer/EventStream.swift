import Hummingbird
import HTTPTypes
import ListStoreCore
import NIOCore

/// The loop of a Server-Sent Events stream, a list's (`GET /v1/lists/{list}/events`) or the store
/// feed's (`GET /v1/events`). Each write waits while the client does not read, so a stream holds
/// at most one page of the store; at the head it waits in `HeadWatcher`'s table and writes a
/// keep-alive each interval of silence. It ends when the client hangs up, the server shuts down,
/// the store's epoch changes, its token expires, or the access rules no longer allow it.
struct EventStream<Cursor: Sendable>: Sendable {
    /// What a read found.
    enum Read: Sendable {
        /// Events to write (none: nothing new), the cursor after them, and whether more follow.
        case events(ByteBuffer, after: Cursor, hasMore: Bool)
        /// The stream ends after writing this (an error event), or without writing anything.
        case end(ByteBuffer?)
    }

    /// Whether the stream may go on, and under which generation of the access rules (`nil`: the
    /// service token's, which the rules do not concern).
    enum Access: Sendable {
        case allowed(UInt64?)
        case refused
    }

    /// The first read, done before the answer started (its failures got a status).
    var first: Read
    /// The cursor the stream starts after.
    var start: Cursor
    /// Reads after a cursor.
    var read: @Sendable (Cursor) async -> Read
    /// Waits at the head after a cursor, for at most the given time, under the given access
    /// generation: whether a commit it follows woke it.
    var wait: @Sendable (Cursor, Duration, UInt64?, HangUpWatch) async -> Bool
    /// The keep-alive comment at a cursor, and the cursor after it (a feed stream's moves past
    /// other lists' events).
    var keepAlive: @Sendable (Cursor) -> (ByteBuffer, Cursor)
    /// Whether its access still holds (checked before each read and each write).
    var access: @Sendable () -> Access

    /// The stream as a response: `text/event-stream`, `no-cache`.
    /// - Parameters:
    ///   - slot: its place among the waiting requests, given back when the stream ends.
    ///   - identity: the store's identity when the stream started: it ends when the epoch changes.
    ///   - expiry: when a user's token expires (its stream ends then; the first read is still written).
    func response(
        channel: any Channel, slot: ConnectionLimiter.Slot, watcher: HeadWatcher, state: ServerState, identity: StoreIdentity,
        keepAliveInterval: Duration, expiry: ContinuousClock.Instant?
    ) -> Response {
        let body = ResponseBody { writer in
            // A client that hangs up ends the stream, and frees its place, at once.
            let hangUp = HangUpWatch(channel)
            defer { withExtendedLifetime(slot) {} }
            var cursor = start
            var pending: Read? = first
            // After a keep-alive the client has every event up to the head: wait again without reading.
            var atHead = false
            // The first read, done while the token was valid, is written even if it expired since.
            while !Task.isCancelled && !watcher.isClosed && (pending != nil || expiry.map({ ContinuousClock.now < $0 }) ?? true) {
                // The waits at the head end at the token's expiry at the latest.
                let interval = expiry.map { min(keepAliveInterval, max(.zero, $0 - ContinuousClock.now)) } ?? keepAliveInterval
                guard case .allowed = access() else { break }
                if let now = state.storeIdentity, now != identity {
                    try await writer.write(JournalRoutes.epochChangedEvent(now))
                    break
                }
                if !atHead {
                    let got: Read
                    if let first = pending { got = first } else { got = await read(cursor) }
                    pending = nil
                    guard case .events(let events, let after, let hasMore) = got else {
                        if case .end(let last?) = got { try await writer.write(last) }
                        break
                    }
                    if events.readableBytes > 0 {
                        // The rules may have changed during the read.
                        guard case .allowed = access() else { break }
                        try await writer.write(events)
                        state.addEventBytes(events.readableBytes)
                    }
                    cursor = after
                    if hasMore { continue }
                }
                if let expiry, ContinuousClock.now >= expiry { break }
                atHead = false
                guard case .allowed(let generation) = access() else { break }
                let from = cursor
                let woken = await wait(from, interval, generation, hangUp)
                if hangUp.isClosed { break }
                if woken { continue }
                if watcher.isClosed || Task.isCancelled { break }
                // The rules changed: checked again at the top.
                if let generation, state.accessGeneration != generation { continue }
                let (comment, moved) = keepAlive(cursor)
                try await writer.write(comment)
                cursor = moved
                atHead = true
            }
            try await writer.finish(nil)
        }
        var headers = HTTPFields()
        headers[.contentType] = "text/event-stream"
        headers[.cacheControl] = "no-cache"
        return Response(status: .ok, headers: headers, body: body)
    }
}
