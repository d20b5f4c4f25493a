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
        let page = try decode(try await send("GET", "v1/changes", query: query, extraTime: .seconds(seconds)), WireDocument.decodeChanges)
        return FeedChanges(changes: page.events.map { FeedChange(event: $0.event, cursor: $0.cursor) }, cursor: page.cursor, hasMore: page.hasMore)
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
        of pattern: ListPattern, after cursor: FeedCursor?, into continuation: AsyncThrowingStream<FeedChange, any Error>.Continuation,
        refreshingToken refresh: Bool = false
    ) async throws {
        let idle = max(idleTimeout, .seconds(60))
        var query = "lists=\(PercentEncoding.encode(pattern.description))"
        if let cursor { query += "&since=\(PercentEncoding.encode(cursor.description))" }
        let (request, what) = try request(
            "GET", "v1/events", query: query, extraTime: idle - idleTimeout, accept: "text/event-stream", token: try await bearer(refresh: refresh))
        let parser = _Locked(_EventStreamParser(maxEventBytes: maxAnswerBytes))
        let shown = url.absoluteString
        let transfer = _HTTPTransfer(origin: serverOrigin, maxBytes: maxAnswerBytes) { data in
            do {
                for event in try parser.withLock({ try $0.feed(data) }) {
                    switch event.type {
                    case "commit", "deleted", "":
                        guard let id = event.id else { continue }
                        let cursor = try FeedCursor(parsing: id)
                        let change = event.type.isEmpty ? nil : try WireDocument.decodeFeedEvent(event.data, position: cursor.position)
                        continuation.yield(FeedChange(event: change, cursor: cursor))
                    case "error":
                        continuation.finish(throwing: Self.failure(status: nil, body: event.data, what: what))
                        return
                    default:
                        continue
                    }
                }
            } catch {
                continuation.finish(throwing: SyncError.transport("\(shown) answered a document this client cannot read: \(error)"))
            }
        }
        let (http, bytes) = try await run(transfer, request, what: what, deadline: nil)
        if http.statusCode == 401, tokenProvider != nil, !refresh {
            return try await readFeedEvents(of: pattern, after: cursor, into: continuation, refreshingToken: true)
        }
        if (200..<300).contains(http.statusCode) {
            throw SyncError.transport("\(what): the server ended the event stream", transient: true)
        }
        if [404, 405].contains(http.statusCode), (try? WireDocument.decodeError(bytes)).flatMap({ StoreError.Code(named: $0.code) }) == nil {
            throw EventsUnavailable()
        }
        throw Self.failure(status: http.statusCode, body: bytes, what: what)
    }
}
