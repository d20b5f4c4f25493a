import Foundation
import Hummingbird
import ListStore
import ListStoreTestSupport
import ListDiffTestSupport
@testable import ListStoreServer
import Logging
import NIOCore
import Testing

/// Event streams are written through Hummingbird's response writer: a middleware that wraps the
/// writer sees every event. Not `.heavyWork`: the servers the tests start run their connections in
/// the tests' tasks, which must be on the threads that run Swift's tasks, not on the few threads
/// computing suites share.
@Suite struct EventStreamMiddlewareTests {
    /// A stream whose writer a middleware wraps (here one that marks every buffer it passes on)
    /// writes each event through the middleware, which marks every write the client gets: streams
    /// are written through Hummingbird's writer alone.
    @Test(.timeLimit(.minutes(2))) func aStreamWhoseWriterIsWrappedGetsEveryCommitThroughIt() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(3), to: "l")
        let configuration = JournalServer.Configuration(port: 0, keepAliveInterval: .seconds(120))
        let state = ServerState(configuration)
        let watcher = HeadWatcher(store: store, pollInterval: configuration.pollInterval)
        let router = Router(context: ServerRequestContext.self)
        router.add(middleware: MarkingMiddleware())
        let access = AccessMiddleware(token: nil, state: state)
        router.add(middleware: access)
        JournalRoutes(
            store: store, watcher: watcher, access: access, metrics: ServerMetrics(), pages: JournalPages(store: store), eventPages: EventPages(store: store),
            feedPages: FeedPages(store: store), configuration: configuration, state: state)
            .add(to: router)
        let (ports, bound) = AsyncStream.makeStream(of: Int.self)
        var quiet = Logger(label: "test.server")
        quiet.logLevel = .critical
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in bound.yield(channel.localAddress?.port ?? 0) }, logger: quiet)
        try await withThrowingTaskGroup(of: Void.self) { group in
            // No signal handling in a test process (its children would inherit ignored signals),
            // and the port stream ends with the server, so that a server that fails ends the wait.
            group.addTask {
                defer { bound.finish() }
                try await app.runService(gracefulShutdownSignals: [])
            }
            group.addTask { await watcher.run() }
            var iterator = ports.makeAsyncIterator()
            let port = try #require(await iterator.next())
            let marker = ": through the middleware\n\n"
            let stream = Task {
                try await RawSocket.exchange(
                    port: port, "GET /v1/lists/l/events?since=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", timeout: .seconds(60)
                ) { text in text.range(of: "id: 3\n").map { text[$0.upperBound...].contains(marker) } ?? false }
            }
            // Each commit once the stream waits at the head, so that the commits reach it as a
            // stream at the head gets them, not in its backlog.
            try await LimitTests.waitUntil { watcher.waitingCount == 1 }
            try await store.commit(linearList(4), to: "l")
            try await LimitTests.waitUntil { state.eventBytesWritten > 0 && watcher.waitingCount == 1 }
            try await store.commit(linearList(5), to: "l")
            let text = try await stream.value
            #expect(ServerTests.eventIDs(text) == ["id: 2", "id: 3"])
            // Every event went through the middleware: each write is followed by its marker.
            let afterLastMarker = try #require(text.range(of: marker, options: .backwards)).upperBound
            #expect(!text[afterLastMarker...].contains("id: "))
            #expect(ServerTests.eventIDs(text).count == text.components(separatedBy: marker).count - 1)
            watcher.close()
            group.cancelAll()
        }
    }
}

/// Adds an event-stream comment after every buffer of a body it passes on, by wrapping the body's
/// writer: what a middleware that touches bodies does.
private struct MarkingMiddleware: RouterMiddleware {
    typealias Context = ServerRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        response.body = response.body.map { buffer in
            var marked = buffer
            marked.writeString(": through the middleware\n\n")
            return marked
        }
        return response
    }
}
