import Foundation
import ListDiffTestSupport
import ListJSON
import ListStore
@testable import ListStoreServer
import ListStoreTestSupport
import ListStoreWire
import Testing

/// `GET /v1/events?lists=`: the store feed as one event stream for many lists, with only what the
/// token may read, lists that appear and go, `Last-Event-ID`, and one read of each commit for every
/// stream at the head.
@Suite struct StoreFeedStreamTests {
    /// An event of a stream as it came: its `id:`, `event:` and data's list (and version, for a commit).
    struct Event: Equatable {
        var id: String
        var type: String
        var list: String
        var version: Int?
    }

    /// The events in the text of a stream (chunk framing and keep-alives skipped); the last `id:`
    /// seen, of an event or of a keep-alive.
    static func events(_ text: String) -> (events: [Event], lastID: String?) {
        var (events, id, type, lastID) = ([Event](), "", "message", String?.none)
        // By scalars: "\r\n" (chunk framing) is one Character.
        let lines = text.unicodeScalars.split(separator: "\n").map { String(String.UnicodeScalarView($0.filter { $0 != "\r" })) }
        for line in lines {
            if line.hasPrefix("id: ") {
                id = String(line.dropFirst(4))
                lastID = id
            } else if line.hasPrefix("event: ") {
                type = String(line.dropFirst(7))
            } else if line.hasPrefix("data: "), let value = try? JSONValue(parsing: Array(line.dropFirst(6).utf8)) {
                events.append(Event(id: id, type: type, list: value["list"]?.stringValue ?? "?", version: value["entry"]?["version"]?.intValue))
                type = "message"
            }
        }
        return (events, lastID)
    }

    @Test func oneStreamCarriesEveryListTheTokenMayReadAsTheyComeAndGo() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        for list in ["users/ana/inbox", "users/bob/inbox", "teams/red/plan", "public/news"] {
            try await store.commit(linearList(3), to: list)
        }
        let ana = AccessServerTests.tokens.token(["sub": "ana", "teams": ["red"]])
        let auth = "Authorization: Bearer \(ana)\r\n"
        try await ServerHarness.with(store, try await AccessServerTests.configuration()) { server in
            let connection = try RawConnection(port: server.port)
            connection.send("GET /v1/events?lists=** HTTP/1.1\r\nHost: 127.0.0.1\r\n\(auth)\r\n")
            let backlog = try await RawConnection.run { connection.receive(timeout: .seconds(60)) { $0.contains("public/news") } }
            #expect(backlog.text.contains("text/event-stream"))
            #expect(Self.events(backlog.text).events.map(\.list) == ["users/ana/inbox", "teams/red/plan", "public/news"])
            // The stream waits at the head: what comes now is written to it by the fan-out.
            let feedServer = server.server
            try await LimitTests.waitUntil { feedServer.waitingCount == 1 }
            try await store.commit(linearList(4), to: "users/bob/inbox")
            try await store.commit(linearList(5), to: "users/ana/inbox")
            try await store.commit(linearList(2), to: "users/ana/projects/new")
            _ = try await store.deleteList("teams/red/plan")
            let live = try await RawConnection.run { connection.receive(timeout: .seconds(60)) { $0.contains("event: deleted") } }
            let events = Self.events(live.text).events
            #expect(events.map(\.list) == ["users/ana/inbox", "users/ana/projects/new", "teams/red/plan"], "\(live.text)")
            #expect(events.map(\.type) == ["commit", "commit", "deleted"])
            #expect(events.map(\.version) == [2, 1, nil])
            // The ids are the feed's cursors, sealed for a user (each anew: see FeedCursorTests).
            let cursors = try events.map { try FeedCursor(parsing: $0.id) }
            #expect(cursors.allSatisfy(\.isSealed) && Set(cursors).count == cursors.count)

            // A client that reconnects with its Last-Event-ID gets what came after it, once.
            let resumed = try await RawSocket.exchange(
                port: server.port, "GET /v1/events?lists=** HTTP/1.1\r\nHost: 127.0.0.1\r\n\(auth)Last-Event-ID: \(events[0].id)\r\n\r\n",
                timeout: .seconds(60)
            ) { $0.contains("event: deleted") }
            let what = { (events: [Event]) in events.map { "\($0.type) \($0.list) \($0.version ?? -1)" } }
            #expect(what(Self.events(resumed).events) == what(Array(events.dropFirst())))

            // A bad cursor or pattern is answered before the stream starts.
            let bad = try await server.request("/v1/events?lists=**&since=nonsense", token: ana)
            #expect(bad.status == 400 && StoreFeedRouteTests.code(bad) == "invalidArgument")
            // Also beside a good Last-Event-ID, which wins but does not excuse a bad `since` (the
            // API contract's fuzzing found it accepted).
            let badBeside = try await RawSocket.exchange(
                port: server.port,
                "GET /v1/events?lists=**&since=nonsense HTTP/1.1\r\nHost: 127.0.0.1\r\n\(auth)Last-Event-ID: \(events[0].id)\r\nConnection: close\r\n\r\n",
                timeout: .seconds(60)
            ) { $0.contains("\r\n\r\n") && $0.contains("}") }
            #expect(badBeside.hasPrefix("HTTP/1.1 400"), "\(badBeside)")
            let noLists = try await server.request("/v1/events", token: ana)
            #expect(noLists.status == 400 && StoreFeedRouteTests.code(noLists) == "invalidArgument")
        }
    }

    /// Streams of different lists at the feed's head share one read of each commit: 30 streams
    /// over 5 commits make a handful of feed reads, not one per stream per commit; each gets the
    /// commits of its lists and only those; a quiet stream's keep-alive carries the cursor on.
    @Test func streamsAtTheHeadShareEachReadOfTheFeed() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        for k in 0..<3 { try await store.commit(linearList(2), to: "team\(k)/plan") }
        // The server learns of each commit once (not of the file's repeated notifications), and
        // polls for others' commits too seldom to count.
        let engine = CountingEngine(store, signalsOwnCommits: true)
        try await ServerHarness.with(engine, .init(port: 0, token: "service", pollInterval: .seconds(30), keepAliveInterval: .seconds(120))) { server in
            var harness = server
            harness.token = "service"
            let head = try StoreFeedRouteTests.page(try await harness.request("/v1/changes?lists=**")).cursor
            let (port, streams, commits) = (server.port, 30, 6)
            let auth = "Authorization: Bearer service\r\n"
            // Stream k follows team(k % 3)'s lists; each wants the commits of its team.
            let followers = (0..<streams).map { k in
                Task {
                    try await RawSocket.exchange(
                        port: port, "GET /v1/events?lists=team\(k % 3)/**&since=\(head) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(auth)\r\n", timeout: .seconds(60)
                    ) { $0.components(separatedBy: "event: commit").count > commits / 3 }
                }
            }
            let feedServer = server.server
            try await LimitTests.waitUntil { feedServer.waitingCount >= streams }
            #expect(feedServer.waitingCount == streams, "the streams did not all start within 30 s")
            let before = engine.feedReads
            let state = server.server.state
            for k in 0..<commits {
                let written = state.eventBytesWritten
                _ = try await engine.commit(linearList(3 + k), to: "team\(k % 3)/plan", expectedVersion: nil, author: nil, message: nil)
                try await waitUntil("commit \(k) is written to the streams and they wait again") {
                    state.eventBytesWritten > written && (k >= commits - 3 || feedServer.waitingCount == streams)
                }
            }
            for (k, follower) in followers.enumerated() {
                let events = Self.events(try await follower.value).events
                #expect(events.map(\.list) == Array(repeating: "team\(k % 3)/plan", count: commits / 3))
                #expect(events.map(\.version) == [2, 3])
            }
            let reads = engine.feedReads - before
            #expect(reads <= 2 * commits, "\(reads) feed reads for \(streams) streams and \(commits) commits")
        }
    }

    /// A read of the feed that fails while streams wait at its head: each stream reads itself,
    /// writes the error as an event and ends (it does not wait on with keep-alives).
    @Test func aFailedReadAtTheHeadEndsTheStreamsWithTheError() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(2), to: "l")
        let engine = CountingEngine(store, signalsOwnCommits: true)
        try await ServerHarness.with(engine, .init(port: 0, token: "service", pollInterval: .seconds(30), keepAliveInterval: .seconds(120))) { server in
            let connection = try RawConnection(port: server.port)
            connection.send("GET /v1/events?lists=** HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer service\r\n\r\n")
            _ = try await RawConnection.run { connection.receive(timeout: .seconds(60)) { $0.contains("event: commit") } }
            let feedServer = server.server
            try await LimitTests.waitUntil { feedServer.waitingCount == 1 }
            engine.feedFails.withLock { $0 = true }
            _ = try await engine.commit(linearList(3), to: "l", expectedVersion: nil, author: nil, message: nil)
            let ended = try await RawConnection.run { connection.receive(timeout: .seconds(60)) { $0.contains("0\r\n\r\n") } }
            #expect(ended.text.contains("event: error"), "\(ended.text)")
        }
    }

    /// A stream whose lists are quiet while others are written: its keep-alive moves its cursor
    /// past their events, so a reconnect need not read them again.
    @Test func aQuietStreamsKeepAliveCarriesItsCursor() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(2), to: "quiet")
        try await ServerHarness.with(store, .init(port: 0, token: "service", keepAliveInterval: .milliseconds(300))) { server in
            let connection = try RawConnection(port: server.port)
            connection.send("GET /v1/events?lists=quiet HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer service\r\n\r\n")
            let first = try await RawConnection.run { connection.receive(timeout: .seconds(60)) { $0.contains("event: commit") } }
            let start = try #require(Self.events(first.text).lastID, "\(first.text)")
            for k in 0..<3 { try await store.commit(linearList(3 + k), to: "busy") }
            // The service token's cursors are not sealed: the position, and its event's fingerprint.
            let target = FeedCursor(store: try await store.identity(), position: try FeedCursor(parsing: start).position + 3).description
            let later = try await RawConnection.run { connection.receive(timeout: .seconds(60)) { $0.contains("id: \(target)-") } }
            #expect(Self.events(later.text).events.isEmpty)
            let moved = try FeedCursor(parsing: try #require(Self.events(later.text).lastID, "\(later.text)"))
            #expect(moved.description.hasPrefix(target + "-") && moved.point?.fingerprint != nil, "\(later.text)")
        }
    }
}
