import Foundation
import ListStore
@testable import ListStoreServer
import ListStoreTestSupport
import Testing

/// Long polls over raw HTTP/1.1 connections: answered by the next commit, in order with the
/// requests behind them, whole when the connection ends, and their places freed when clients hang up.
@Suite(.timeLimit(.minutes(3))) struct LongPollTests {
    /// The request head of a poll of list `l` with `query` (and the harness's token), ready to send.
    static func poll(_ server: ServerHarness, _ query: String, extra: String = "") -> String {
        "GET /v1/lists/l/journal?\(query) HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n\(server.authorization)\(extra)\r\n"
    }

    /// A store with list `l` at version 1, and a server of it: a first poll (`Connection: close`)
    /// was answered, and an event stream of `l` waits at its head meanwhile (see `current(_:)`).
    static func primed<T>(
        _ access: ServerAccess = .open, _ configuration: JournalServer.Configuration = .init(port: 0, keepAliveInterval: .seconds(10)),
        _ body: (ServerHarness, Store) async throws -> T
    ) async throws -> T {
        let directory = try TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(3), to: "l")
        return try await ServerHarness.with(store, access, configuration) { server in
            let first = try await RawAnswer.exchange(port: server.port, String(poll(server, "since=1&wait=1").dropLast()))
            #expect(first.status == 200)
            let stream = try RawConnection(port: server.port)
            #expect(stream.send("GET /v1/lists/l/events?since=1 HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n\(server.authorization)\r\n"))
            try await current(server, head: 1)
            defer { withExtendedLifetime(stream) {} }
            return try await body(server, store)
        }
    }

    /// Waits until the primed event stream waits at the head of `l` again (after a commit, it reads
    /// the new version first).
    static func current(_ server: ServerHarness, head: Int? = nil) async throws {
        try await LimitTests.waitUntil { held(server) >= 0 }
    }

    /// How many long polls wait at the head (the requests waiting less the primed event stream).
    static func held(_ server: ServerHarness) -> Int {
        (server.server.watcher?.waitingCount ?? 0) - 1
    }

    /// Reads until `count` whole answers came on `connection`, and parses them.
    static func read(_ count: Int, from connection: RawConnection) async throws -> [RawAnswer] {
        let text = try await RawConnection.run { connection.receive(timeout: .seconds(60)) { Self.answers(in: $0).count >= count }.text }
        let answers = Self.answers(in: text)
        guard answers.count == count else {
            Issue.record("\(answers.count) answers of \(count): \(text)")
            throw POSIXError(.EBADMSG)
        }
        return answers
    }

    /// The whole answers (each with a Content-Length body) at the start of `text`, one after another.
    static func answers(in text: String) -> [RawAnswer] {
        var answers = [RawAnswer]()
        var rest = Substring(text)
        while let split = rest.range(of: "\r\n\r\n") {
            let head = rest[..<split.lowerBound].lowercased()
            guard let line = head.components(separatedBy: "\r\n").first(where: { $0.hasPrefix("content-length:") }),
                let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces))
            else { break }
            let body = rest[split.upperBound...].utf8
            guard body.count >= length else { break }
            let end = body.index(body.startIndex, offsetBy: length)
            guard let answer = RawAnswer(String(rest[..<end])) else { break }
            answers.append(answer)
            rest = rest[end...]
        }
        return answers
    }

    /// A poll at the head waits and is answered by the next commit with the
    /// route's page; one behind the head is answered at once; one whose wait ends gets the empty
    /// page; one whose list is deleted meanwhile gets 404 at once, as the route's long polls; a poll
    /// of the deleted list is the route's 404. Every mode of access: a user's token is taken beneath once
    /// the route verified it.
    @Test(arguments: ServerAccess.allCases) func aPollIsTakenBeneathAndAnsweredAsTheRouteAnswers(_ access: ServerAccess) async throws {
        try await Self.primed(access) { server, store in
            let connection = try RawConnection(port: server.port)
            #expect(connection.send(Self.poll(server, "since=1&wait=30")))
            try await LimitTests.waitUntil { Self.held(server) == 1 }
            try await store.commit(linearList(4), to: "l")
            let woken = try await Self.read(1, from: connection)[0]
            let route = try await server.request("/v1/lists/l/journal?since=1")
            #expect(woken.status == 200 && woken.body == String(decoding: route.body, as: UTF8.self) && woken.body.contains("\"version\":2"))
            #expect(woken.headers["content-type"] == "application/json" && woken.headers["server"] == "liststore")
            #expect(woken.headers["date"]?.hasSuffix(" GMT") == true)

            // `Connection: keep-alive` (as URLSession sends) is HTTP/1.1's own: the poll is taken.
            #expect(connection.send(Self.poll(server, "since=1&limit=100&wait=30", extra: "Connection: keep-alive\r\n")))
            let behind = try await Self.read(1, from: connection)[0]
            #expect(behind.status == 200 && behind.body == woken.body)

            try await Self.current(server, head: 2)
            #expect(connection.send(Self.poll(server, "since=2&wait=1")))
            // A poll that no commit woke is answered with the empty page, made without a read (so
            // without the head the route's read tells).
            let quiet = try await Self.read(1, from: connection)[0]
            #expect(quiet.status == 200 && quiet.body.contains(#""commits":[]"#))

            // Deleted while they wait, a poll taken and one the route answers (a percent-encoded
            // value) are answered at once: the list is gone.
            try await Self.current(server, head: 2)
            #expect(connection.send(Self.poll(server, "since=2&wait=30")))
            try await LimitTests.waitUntil { Self.held(server) == 1 }
            let routed = try RawConnection(port: server.port)
            #expect(routed.send(Self.poll(server, "since=%32&wait=30")))
            try await LimitTests.waitUntil { server.server.state.streams.current == 3 }
            _ = try await store.deleteList("l")
            let deleted = try await Self.read(1, from: connection)[0]
            #expect(deleted.status == 404 && deleted.errorCode == "listNotFound", "\(deleted.body)")
            let deletedRouted = try await Self.read(1, from: routed)[0]
            #expect(deletedRouted.status == 404 && deletedRouted.errorCode == "listNotFound", "\(deletedRouted.body)")
            #expect(connection.send(Self.poll(server, "since=2&wait=30")))
            let gone = try await Self.read(1, from: connection)[0]
            #expect(gone.status == 404 && gone.errorCode == "listNotFound")

            let metrics = try await server.request("/metrics", token: access == .open ? nil : ServerAccess.serviceToken)
            let text = String(decoding: metrics.body, as: UTF8.self)
            #expect(text.contains(#"liststore_http_requests_total{method="GET",route="/v1/lists/{list}/journal",status="404"} 3"#), "\(text)")
            #expect(text.contains(#"liststore_http_requests_total{method="GET",route="/v1/lists/{list}/journal",status="200"} "#))
        }
    }

    /// A poll that waits longer than the connection's idle timeout is answered: Hummingbird's
    /// connection state sees it as a request in progress.
    @Test func aPollOutlivesTheIdleTimeout() async throws {
        try await Self.primed(.open, .init(port: 0, keepAliveInterval: .seconds(10), idleTimeout: .seconds(1))) { server, _ in
            // Sent as the connection opens: the server finds it there when it accepts it.
            let connection = try RawConnection(port: server.port)
            #expect(connection.send(Self.poll(server, "since=1&wait=3")))
            let quiet = try await Self.read(1, from: connection)[0]
            #expect(quiet.status == 200 && quiet.body.contains("\"commits\":[]"))
        }
    }

    /// Polls that follow one another on a connection for longer than its idle timeout keep it:
    /// the idle timeout counts the polls taken in front of Hummingbird as requests.
    @Test func pollsOneAfterAnotherKeepTheirConnectionPastTheIdleTimeout() async throws {
        try await Self.primed(.open, .init(port: 0, keepAliveInterval: .seconds(10), idleTimeout: .seconds(3))) { server, _ in
            let connection = try RawConnection(port: server.port)
            for round in 1...3 {
                #expect(connection.send(Self.poll(server, "since=1&wait=2")))
                let quiet = try await Self.read(1, from: connection)[0]
                #expect(quiet.status == 200 && quiet.body.contains("\"commits\":[]"), "round \(round)")
            }
        }
    }

    /// A graceful shutdown answers a poll that waits (the empty page) before it closes the
    /// poll's connection.
    @Test func aPollWaitingAtShutdownIsAnsweredBeforeItsConnectionCloses() async throws {
        try await Self.primed { server, _ in
            let connection = try RawConnection(port: server.port)
            #expect(connection.send(Self.poll(server, "since=1&wait=30")))
            try await LimitTests.waitUntil { Self.held(server) == 1 }
            let stopping = Task { await server.server.shutDownGracefully() }
            let answer = try await RawConnection.run { connection.receive(timeout: .seconds(60)) }
            await stopping.value
            #expect(answer.closed, "the connection is closed after the answer")
            let answers = Self.answers(in: answer.text)
            #expect(answers.count == 1 && answers.first?.status == 200 && answers.first?.body.contains("\"commits\":[]") == true, "\(answer.text)")
        }
    }

    /// What ends a connection while a large answer is still being written.
    enum ConnectionEnd: CaseIterable, Sendable {
        /// A graceful shutdown of the server.
        case shutdown
        /// The client closes its sending side.
        case halfClose
    }

    /// An answer larger than the socket's buffers, still being written when a graceful shutdown
    /// comes or when the client closes its side, reaches the client whole before the connection
    /// closes (the server goes on writing it as the client reads): a poll's answer written beneath
    /// Hummingbird, and the route's to a plain journal request. (An answer to `Connection: close`
    /// was never cut: Hummingbird closes after its last bytes are written.)
    @Test(arguments: [(ConnectionEnd.shutdown, false), (.shutdown, true), (.halfClose, false), (.halfClose, true)])
    func aLargeAnswerIsWrittenWholeBeforeItsConnectionCloses(_ end: ConnectionEnd, _ routed: Bool) async throws {
        try await Self.primed { server, store in
            // A version of about 8 MB: more than the kernel's send and receive buffers hold.
            try await RawConnection.run { try LimitTests.bigVersions(store, list: "l", count: 1, size: 8_000_000) }
            try await Self.current(server, head: 2)
            let connection = try RawConnection(port: server.port, receiveBuffer: 4096)
            let request =
                routed
                ? "GET /v1/lists/l/journal?since=1 HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n\(server.authorization)\r\n"
                : Self.poll(server, "since=1&wait=30")
            #expect(connection.send(request))
            // The answer has begun: its first bytes came.
            let start = try await RawConnection.run { connection.receive(timeout: .seconds(30)) { $0.contains("\r\n\r\n") } }
            #expect(start.text.hasPrefix("HTTP/1.1 200 OK"), "\(start.text.prefix(200))")
            var stopping: Task<Void, Never>?
            switch end {
            case .shutdown:
                stopping = Task { await server.server.shutDownGracefully() }
            case .halfClose:
                connection.shutdownWrite()
            }
            let rest = try await RawConnection.run { connection.receive(timeout: .seconds(60)) }
            await stopping?.value
            #expect(rest.closed, "the connection is closed after the answer")
            let answers = Self.answers(in: start.text + rest.text)
            #expect(answers.count == 1 && answers.first?.status == 200, "\((start.text + rest.text).utf8.count) bytes")
            #expect(answers.first?.body.contains("\"version\":2") == true)
        }
    }

    /// A client that reads a large answer for longer than the idle timeout gets it whole (it is not
    /// idle while it reads); one that stops reading is closed. A poll's answer and the route's. The
    /// slow client reads a part of the answer, then waits for the server's next idle check, which
    /// finds it reading, and so on until the server has handed the whole answer to the kernel.
    ///
    /// The reader reads again as soon as it sees a check, and has until the next one to do it. When
    /// it waited for the checks in a task, with an idle timeout of one second, the whole suite at
    /// once on two cores (the fresh-clone CI) kept it from its next read past the next check, and
    /// the server rightly closed it as stopped (both cases, in the fresh-clone run of 2026-12-01):
    /// it now reads and waits on a thread of its own, and the idle timeout is two seconds.
    @Test(arguments: [false, true]) func aSlowClientGetsALargeAnswerWholeAndOneThatStopsReadingIsClosed(_ routed: Bool) async throws {
        let configuration = JournalServer.Configuration(port: 0, keepAliveInterval: .seconds(10), idleTimeout: .seconds(2))
        try await Self.primed(.open, configuration) { server, store in
            // About 12 MB: NIO still holds most of it when the first idle timeout comes.
            try await RawConnection.run { try LimitTests.bigVersions(store, list: "l", count: 1, size: 12_000_000) }
            try await Self.current(server, head: 2)
            let request =
                routed
                ? "GET /v1/lists/l/journal?since=1 HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n\r\n"
                : Self.poll(server, "since=1&wait=30")
            let connections = server.server.state.connections
            let before = connections.current
            var slow: RawConnection? = try RawConnection(port: server.port, receiveBuffer: 16_384)
            #expect(slow!.send(request))
            let reader = slow!
            let head = try await RawConnection.run { reader.receive(timeout: .seconds(30)) { $0.contains("\r\n\r\n") }.text }
            let split = try #require(head.range(of: "\r\n\r\n"), "\(head.prefix(200))")
            let length = try #require(
                head[..<split.lowerBound].split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) })
            // Parts of 2 MB, each more than the kernel takes from NIO at once, so that each check
            // finds the client reading.
            let idle = server.server.state.idleConnections
            let (idleBefore, remaining) = (idle.turnedIdle, length - head[split.upperBound...].utf8.count)
            // The whole reader runs on a thread of its own, as a client's would: it does not wait
            // for a turn of the tasks' threads, which the suites running at once keep busy.
            let rest = try await RawConnection.run { () -> [UInt8] in
                var rest = [UInt8]()
                while rest.count < remaining {
                    let (checks, wanted) = (idle.readingChecks, min(2 << 20, remaining - rest.count))
                    let part = reader.receive(upTo: wanted, timeout: .seconds(30))
                    rest += part
                    guard !part.isEmpty, rest.count < remaining else { break }
                    // The server's next check, or its answer all with the kernel (the connection
                    // idle, perhaps only for a moment: the idle timeout closes it then). A pace, not
                    // a check: the client reads on when neither shows within ten seconds (the checks
                    // are counted below, and the answer must come whole).
                    let pace = ContinuousClock.now + .seconds(10)
                    while idle.readingChecks == checks, idle.turnedIdle == idleBefore, ContinuousClock.now < pace {
                        usleep(2_000)
                    }
                }
                return rest
            }
            let text = head + String(decoding: rest, as: UTF8.self)
            let answers = Self.answers(in: text)
            #expect(idle.readingChecks > 0)
            #expect(answers.count == 1 && answers.first?.status == 200 && answers.first?.body.contains("\"version\":2") == true, "\(text.utf8.count) bytes")
            slow = nil

            let stopped = try RawConnection(port: server.port, receiveBuffer: 4096)
            #expect(stopped.send(request))
            let start = try await RawConnection.run { stopped.receive(timeout: .seconds(30)) { $0.contains("\r\n\r\n") } }
            #expect(start.text.hasPrefix("HTTP/1.1 200 OK"))
            // Both gone: the slow one closed here, the stopped one by the server (at most two idle
            // timeouts after its answer was handed over).
            try await LimitTests.waitUntil { connections.current == before }
            withExtendedLifetime(stopped) {}
        }
    }

    /// Requests a client sends behind a poll it holds (HTTP/1.1 pipelining) are answered after it,
    /// in order; a poll behind a request the route answers is taken once that one is answered.
    @Test func requestsBehindAPollAreAnsweredAfterItInOrder() async throws {
        try await Self.primed { server, store in
            let connection = try RawConnection(port: server.port)
            let summary = "GET /v1/lists/l HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n\r\n"
            #expect(connection.send(Self.poll(server, "since=1&wait=30") + summary + Self.poll(server, "since=1&wait=30")))
            try await LimitTests.waitUntil { Self.held(server) == 1 }
            try await store.commit(linearList(4), to: "l")
            let answers = try await Self.read(3, from: connection)
            #expect(answers.map(\.status) == [200, 200, 200])
            #expect(answers[0].body.contains("\"version\":2") && answers[0].body.contains("\"commits\""))
            #expect(!answers[1].body.contains("\"commits\"") && answers[1].body.contains("\"l\""), "the summary")
            #expect(answers[2].body == answers[0].body)
        }
    }

    /// An upload pipelined behind a poll that waits, with `Expect: 100-continue`, gets its `100
    /// Continue` once the poll's answer has ended, never amid or before it; then its own answer.
    @Test func aContinuePipelinedBehindAPollComesAfterItsAnswer() async throws {
        try await Self.primed { server, store in
            let bytes = [UInt8](repeating: 7, count: 2 << 20)
            let blob = BlobReference(of: bytes)
            let connection = try RawConnection(port: server.port)
            let upload =
                "PUT /v1/lists/l/blobs/\(blob.id) HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\nContent-Type: application/octet-stream\r\n"
                + "Content-Length: \(bytes.count)\r\nExpect: 100-continue\r\n\r\n"
            #expect(connection.send(Self.poll(server, "since=1&wait=30") + upload))
            try await LimitTests.waitUntil { Self.held(server) == 1 }
            try await store.commit(linearList(4), to: "l")
            let text = try await RawConnection.run { connection.receive(timeout: .seconds(60)) { $0.contains("100 Continue\r\n\r\n") }.text }
            let interim = try #require(text.range(of: "HTTP/1.1 100 Continue\r\n\r\n"), "\(text.prefix(300))")
            let before = Self.answers(in: String(text[..<interim.lowerBound]))
            #expect(before.count == 1 && before.first?.status == 200 && before.first?.body.contains("\"version\":2") == true, "\(text.prefix(300))")
            #expect(text[interim.upperBound...].isEmpty, "\(text.prefix(300))")
            #expect(connection.send(bytes))
            let answer = try await RawConnection.run { connection.receive(timeout: .seconds(60)) { $0.contains("\"stored\":true") }.text }
            #expect(answer.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(answer.prefix(300))")
        }
    }

    /// Pipelined requests behind one the route answers are neither stalled nor lost: a head split
    /// across two reads is read whole once its rest comes; requests sent before the client closes
    /// its side are answered (a poll behind the head among them: one at the head would wait, and
    /// its client has hung up); a request with `Connection: close` is the last one answered.
    @Test func pipelinedRequestsBehindTheRoutesAreAnswered() async throws {
        try await Self.primed { server, _ in
            let host = "Host: 127.0.0.1:\(server.port)\r\n"
            let summary = "GET /v1/lists/l HTTP/1.1\r\n\(host)\r\n"
            let split = try RawConnection(port: server.port)
            #expect(split.send(summary + "GET /v1/store HTTP/1.1\r\nHo"))
            let first = try await Self.read(1, from: split)
            #expect(first.map(\.status) == [200])
            #expect(split.send("st: 127.0.0.1\r\n\r\n"))
            let second = try await Self.read(1, from: split)[0]
            #expect(second.status == 200 && second.body.contains("\"uuid\""), "\(second.body)")

            let closing = try RawConnection(port: server.port)
            #expect(closing.send(summary + Self.poll(server, "since=0&wait=30") + summary))
            closing.shutdownWrite()
            let answers = try await Self.read(3, from: closing)
            #expect(answers.map(\.status) == [200, 200, 200])

            let last = try RawConnection(port: server.port)
            #expect(last.send("GET /v1/lists/l HTTP/1.1\r\n\(host)Connection: close\r\n\r\n" + Self.poll(server, "since=0&wait=30")))
            let ended = try await RawConnection.run { last.receive(timeout: .seconds(60)) }
            #expect(ended.closed && Self.answers(in: ended.text).count == 1, "\(ended.text)")
        }
    }

    /// What the route must answer goes on to it: a request from a browser (an `Origin`, for CORS),
    /// a query the handler does not read plainly, a request without the server's token, a version
    /// past the head. Their answers are the route's, and no poll is taken.
    @Test func requestsTheRouteMustAnswerGoOnToIt() async throws {
        let configuration = JournalServer.Configuration(
            port: 0, token: ServerAccess.serviceToken, keepAliveInterval: .seconds(10), allowedOrigins: ["https://app.example"])
        try await Self.primed(.service, configuration) { server, _ in
            let connection = try RawConnection(port: server.port)
            #expect(connection.send(Self.poll(server, "since=1&wait=1", extra: "Origin: https://app.example\r\n")))
            let browser = try await Self.read(1, from: connection)[0]
            #expect(browser.status == 200 && browser.headers["access-control-allow-origin"] == "https://app.example")
            #expect(connection.send(Self.poll(server, "since=%31&wait=1")))
            #expect(try await Self.read(1, from: connection)[0].status == 200)
            #expect(connection.send(Self.poll(server, "since=1&wait=1&limit=0x10")))
            #expect(try await Self.read(1, from: connection)[0].errorCode == "invalidArgument")
            #expect(connection.send("GET /v1/lists/l/journal?since=1&wait=1 HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n\r\n"))
            #expect(try await Self.read(1, from: connection)[0].status == 401)
            // Past the head: the route's error, at once.
            #expect(connection.send(Self.poll(server, "since=9&wait=30")))
            let past = try await Self.read(1, from: connection)[0]
            #expect(past.status == 404 && past.errorCode == "versionNotFound")
            // Every answer carries Vary: Origin when the server allows origins, as the route's.
            #expect(connection.send(Self.poll(server, "since=1&wait=1")))
            let plain = try await Self.read(1, from: connection)[0]
            #expect(plain.status == 200 && plain.headers["vary"] == "Origin")
        }
    }

    /// A client that hangs up while its poll waits (closing its side, or its connection) frees the
    /// poll's place at once: with one place left (the other is the event stream's), the next poll
    /// waits too instead of being refused. A poll whose client hung up counts as 499, taken beneath
    /// or answered by the route.
    @Test func aHangUpFreesThePollsPlace() async throws {
        try await Self.primed(.open, .init(port: 0, keepAliveInterval: .seconds(10), maxStreams: 2)) { server, store in
            let first = try RawConnection(port: server.port)
            #expect(first.send(Self.poll(server, "since=1&wait=30")))
            try await LimitTests.waitUntil { Self.held(server) == 1 && server.server.state.streams.current == 2 }
            first.shutdownWrite()
            try await LimitTests.waitUntil { Self.held(server) == 0 && server.server.state.streams.current == 1 }
            var second: RawConnection? = try RawConnection(port: server.port)
            #expect(second?.send(Self.poll(server, "since=1&wait=30")) == true)
            try await LimitTests.waitUntil { Self.held(server) == 1 }
            second = nil
            try await LimitTests.waitUntil { Self.held(server) == 0 && server.server.state.streams.current == 1 }
            let third = try RawConnection(port: server.port)
            #expect(third.send(Self.poll(server, "since=1&wait=30")))
            try await LimitTests.waitUntil { Self.held(server) == 1 }
            try await store.commit(linearList(4), to: "l")
            #expect(try await Self.read(1, from: third)[0].status == 200)
            // The route's poll (a percent-encoded value), hung up.
            var routed: RawConnection? = try RawConnection(port: server.port)
            #expect(routed?.send(Self.poll(server, "since=%32&wait=30")) == true)
            try await LimitTests.waitUntil { server.server.state.streams.current == 2 }
            routed = nil
            try await LimitTests.waitUntil { server.server.state.streams.current == 1 }
            // The route counts its request once its task ends, just after the place is free.
            let hungUp = #"liststore_http_requests_total{method="GET",route="/v1/lists/{list}/journal",status="499"} 3"#
            try await waitUntil("three polls counted as 499") {
                String(decoding: try await server.request("/metrics").body, as: UTF8.self).contains(hungUp)
            }
        }
    }
}
