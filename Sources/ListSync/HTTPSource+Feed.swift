import Foundation
import ListStore
import ListStoreWire

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// The store feed of a server: `GET /v1/lists`, `GET /v1/changes` and `GET /v1/events?lists=`.

extension HTTPSource: FeedSource {
    public func lists(matching pattern: ListPattern) async throws -> [ListSummary] {
        try decode(try await send("GET", "v1/lists"), WireDocument.decodeLists).filter { pattern.matches($0.name) }
    }

    public func changes(of pattern: ListPattern, after cursor: FeedCursor?, limit: Int, wait: Duration) async throws -> FeedChanges {
        let seconds = max(0, Int((wait + .milliseconds(999)).components.seconds))
        var query = "lists=\(PercentEncoding.encode(pattern.description))&limit=\(max(1, limit))&wait=\(seconds)"
        if let cursor { query += "&since=\(PercentEncoding.encode(cursor.description))" }
        // Read event by event as the page arrives, as a journal page is.
        return try await streamedPage("v1/changes", query: query, member: "events", limit: max(1, limit), extraTime: .seconds(seconds)) { element in
            let (event, cursor) = try WireDocument.decodeChangesEvent(element)
            return FeedChange(event: event, cursor: cursor)
        } page: { changes, rest in
            let frame = try WireDocument.decodeChangesFrame(rest)
            return FeedChanges(changes: changes, cursor: frame.cursor, hasMore: frame.hasMore)
        }
    }

    /// The server's event stream of the feed (`GET /v1/events?lists=`), or long polls of
    /// `GET /v1/changes` when the server has no such stream.
    public func followChanges(of pattern: ListPattern, after cursor: FeedCursor?) -> AsyncThrowingStream<FeedChange, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: FeedChange.self)
        let task = Task {
            do {
                try await readFeedEvents(of: pattern, after: cursor, into: continuation)
            } catch is EventsUnavailable {
                do {
                    for try await change in pollingChanges(of: pattern, after: cursor, wait: .seconds(30)) { continuation.yield(change) }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    private func readFeedEvents(
        of pattern: ListPattern, after cursor: FeedCursor?, into continuation: AsyncThrowingStream<FeedChange, any Error>.Continuation
    ) async throws {
        var query = "lists=\(PercentEncoding.encode(pattern.description))"
        if let cursor { query += "&since=\(PercentEncoding.encode(cursor.description))" }
        try await readEventStream("v1/events", query: query, into: continuation) { event in
            // `commit` and `deleted` events, and keep-alives that move the cursor (type "").
            guard ["commit", "deleted", ""].contains(event.type), let id = event.id else { return nil }
            let cursor = try FeedCursor(parsing: id)
            return FeedChange(event: event.type.isEmpty ? nil : try WireDocument.decodeFeedEvent(event.data, position: cursor.position), cursor: cursor)
        }
    }
}
