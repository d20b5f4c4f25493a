import Foundation
import ListStore
import ListStoreWire

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension HTTPSource {
    /// The commits of `list` after `version`: the backlog read page by page as it is consumed, then,
    /// from the head, the server's event stream (`GET /v1/lists/<list>/events`): one request for the
    /// rest of the follow, each commit written to it by the server as it lands. Against a server
    /// without event streams (it answers 404 without a store error), the journal is long-polled
    /// instead (`pageSize` entries per page, `wait` per poll), as it is from the start with
    /// `followsByLongPolls`.
    ///
    /// ```swift
    /// for try await entry in source.commits(of: "inbox", after: 41, pageSize: 100, wait: .seconds(30)) { print(entry.version) }
    /// ```
    ///
    /// The stream ends with an error: the server's store error (`.versionNotFound` when `version` is
    /// pruned), `SyncError.transport` for an event it cannot read or a connection that fails, or one
    /// the server closes (transient: the server is stopping); it ends without one when the iterating
    /// task is cancelled. An event stream is cut (transient) after `max(idleTimeout, 60 s)` without
    /// a byte (the server writes a keep-alive every 15 s of silence); it holds one connection of a
    /// session of its own, so followers never take the connections of other requests. Commits that
    /// land faster than they are consumed wait in memory.
    public func commits(of list: String, after version: Int, pageSize: Int, wait: Duration)
        -> AsyncThrowingStream<JournalEntry, any Error>
    {
        let reader = FollowReader(source: self, list: list, after: version, pageSize: pageSize, wait: wait)
        return AsyncThrowingStream(unfolding: { try await reader.next() })
    }

    /// The backlog through a pager, then the event stream, or long polls without one.
    final class FollowReader: @unchecked Sendable {
        // Safe: `next()` is called by one consumer at a time (the unfolding stream awaits each call).
        private let source: HTTPSource
        private let list: String
        private let pager: _JournalPager<HTTPSource>
        private var live: AsyncThrowingStream<JournalEntry, any Error>.AsyncIterator?
        private var polling = false

        init(source: HTTPSource, list: String, after version: Int, pageSize: Int, wait: Duration) {
            self.source = source
            self.list = list
            pager = _JournalPager(source, list: list, after: version, pageSize: pageSize, wait: wait)
            polling = source.followsByLongPolls
        }

        func next() async throws -> JournalEntry? {
            if polling { return try await pager.next(waitingAtHead: true) }
            if live == nil {
                if let entry = try await pager.next(waitingAtHead: false) { return entry }
                if Task.isCancelled { return nil }
                live = source.eventStream(of: list, after: pager.version).makeAsyncIterator()
            }
            guard var iterator = live else { return nil }
            do {
                let entry = try await iterator.next()
                live = iterator
                return entry
            } catch is EventsUnavailable {
                (polling, live) = (true, nil)
                return try await pager.next(waitingAtHead: true)
            }
        }
    }

    /// The server has no event streams (an older `liststore serve`): it answered 404 or 405 without a
    /// store error.
    struct EventsUnavailable: Error {}

    /// The entries of the event stream of `list` after `version`, decoded as they arrive; it ends
    /// with the error that ends the stream (`EventsUnavailable` when there is none).
    func eventStream(of list: String, after version: Int) -> AsyncThrowingStream<JournalEntry, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: JournalEntry.self)
        let task = Task {
            do {
                try await readEvents(of: list, after: version, into: continuation)
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// Reads the event stream of `list` after `version` into `continuation` until it fails; always throws.
    private func readEvents(
        of list: String, after version: Int, into continuation: AsyncThrowingStream<JournalEntry, any Error>.Continuation
    ) async throws {
        try await readEventStream(path(list, "events"), query: "since=\(version)", into: continuation) { event in
            event.type == "commit" ? try WireDocument.decodeCommitObject(event.data, list: list) : nil
        }
    }

    /// Reads the event stream at `path` with `query` into `continuation` until it fails, each event
    /// as `decode` makes it (nil: skipped; an `event: error` ends the stream with its error); always
    /// throws: `EventsUnavailable` when the server has no such stream, `SyncError.transport`
    /// (transient) when it ends the stream, the error of any other answer.
    func readEventStream<Element: Sendable>(
        _ path: String, query: String, into continuation: AsyncThrowingStream<Element, any Error>.Continuation,
        refreshingToken refresh: Bool = false, decode: @escaping @Sendable (_EventStreamParser.Event) throws -> Element?
    ) async throws {
        let idle = max(idleTimeout, .seconds(60))
        let (request, what) = try request(
            "GET", path, query: query, extraTime: idle - idleTimeout, accept: "text/event-stream", token: try await bearer(refresh: refresh))
        let parser = _Locked(_EventStreamParser(maxEventBytes: maxAnswerBytes))
        let shown = url.absoluteString
        // Runs as the answer arrives, one piece at a time. A failure here ends the stream,
        // whose termination cancels the transfer.
        let transfer = _HTTPTransfer(origin: serverOrigin, maxBytes: maxAnswerBytes) { data in
            do {
                for event in try parser.withLock({ try $0.feed(data) }) {
                    if event.type == "error" {
                        continuation.finish(throwing: Self.failure(status: nil, body: event.data, what: what))
                        return
                    }
                    if let element = try decode(event) { continuation.yield(element) }
                }
            } catch let large as _EventStreamParser.TooLarge {
                // A commit larger than this client takes: the follower pulls instead, in pages.
                continuation.finish(throwing: SyncError.resyncRequired(.tooLarge, message: "\(shown) sent an event larger than \(large.limit) bytes"))
            } catch {
                continuation.finish(throwing: SyncError.transport("\(shown) answered a document this client cannot read: \(error)"))
            }
        }
        let (http, bytes) = try await run(transfer, request, what: what, deadline: nil)
        // A refused token is asked for anew once, when a provider gives them.
        if http.statusCode == 401, tokenProvider != nil, !refresh {
            return try await readEventStream(path, query: query, into: continuation, refreshingToken: true, decode: decode)
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
