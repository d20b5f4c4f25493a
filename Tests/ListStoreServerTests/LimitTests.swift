import Foundation
import ListJSON
import ListStore
@testable import ListStoreServer
import ListStoreTestSupport
import ListStoreWire
import Testing

/// What a client can make the server hold: memory per answer, descriptors, waiting requests, time.
@Suite struct LimitTests {
    /// A list whose every version carries `size` bytes of new content: each journal entry's stages
    /// are a little more than `size` bytes.
    static func bigVersions(_ store: Store, list: String, count: Int, size: Int) throws {
        for k in 1...count {
            let text = String(repeating: Character(UnicodeScalar(UInt8(97 + k % 26))), count: size)
            try store.commit([ListSection(model: ListItem(id: "s", json: .null), elements: [ListItem(id: "e", json: JSONValue(text))])], to: list)
        }
    }

    @Test func journalPagesAreBoundedByBytes() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await RawConnection.run { try Self.bigVersions(store, list: "l", count: 6, size: 100_000) }  // long: not on a task thread

        // The store: as many entries as fit, at least one, and hasMore for the rest.
        #expect(try await store.journal(of: "l", after: 0, limit: 1000).entries.count == 6)
        var page = try await store.journal(of: "l", after: 0, limit: 1000, maxBytes: 250_000)
        #expect(page.entries.map(\.version) == [1, 2] && page.hasMore)
        page = try await store.journal(of: "l", after: 0, limit: 1000, maxBytes: 1)
        #expect(page.entries.map(\.version) == [1] && page.hasMore)
        page = try await store.journal(of: "l", after: 4, limit: 1000, maxBytes: 250_000)
        #expect(page.entries.map(\.version) == [5, 6] && !page.hasMore)
        page = try await store.journal(of: "l", after: 0, limit: 2, maxBytes: 10_000_000)
        #expect(page.entries.map(\.version) == [1, 2] && page.hasMore)
        page = try await store.journal(of: "l", after: 0, limit: 0, maxBytes: 1)
        #expect(page.entries.isEmpty && page.hasMore)

        // The server pages by bytes, and a client paging with hasMore gets everything.
        try await ServerHarness.with(store, .init(port: 0, maxPageBytes: 250_000)) { server in
            var versions: [Int] = []
            var since = 0
            while true {
                let answer = try await server.request("/v1/lists/l/journal?since=\(since)&limit=1000")
                #expect(answer.status == 200)
                let page = try WireDocument.decodeJournal(answer.body)
                #expect(page.entries.count <= 2)
                versions += page.entries.map(\.version)
                since = versions.last ?? since
                if !page.hasMore { break }
            }
            #expect(versions == Array(1...6))
        }
    }

    /// An event stream to a client that does not read stops writing once the connection's buffers
    /// are full (Hummingbird's body writer waits while the channel is not writable), instead of
    /// building the whole backlog in memory; once the client reads, the rest comes.
    @Test func eventStreamsWaitForClientsThatDoNotRead() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        let entries = 48
        try await RawConnection.run { try Self.bigVersions(store, list: "l", count: entries, size: 1 << 20) }
        try await ServerHarness.with(store, .init(port: 0, maxPageBytes: 4 << 20)) { server in
            let connection = try RawConnection(port: server.port, receiveBuffer: 4096)
            connection.send("GET /v1/lists/l/events?since=0 HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n\r\n")

            // Wait until the stream stops making progress, without reading. No event marks a write
            // that waits for the client, so the bytes written are sampled (the sleep paces the
            // sampling) until they stay the same for 2 s. Nothing is assumed from that: a server
            // that writes without waiting passes the total / 2 below whatever the timing, and one
            // that waits never reaches it.
            var written = -1
            var stableSince = ContinuousClock.now
            let deadline = ContinuousClock.now + .seconds(60)
            while written <= 0 || ContinuousClock.now - stableSince < .seconds(2) {
                guard ContinuousClock.now < deadline else {
                    Issue.record("the stream did not stop writing to a client that reads nothing within 60 s (\(written) bytes)")
                    break
                }
                try await Task.sleep(for: .milliseconds(250))
                let now = server.server.state.eventBytesWritten
                if now != written { (written, stableSince) = (now, .now) }
            }
            let total = entries << 20
            #expect(written > 0)
            #expect(written < total / 2, "the server wrote \(written) of \(total) bytes to a client that reads nothing")

            // The client reads: every entry comes.
            let stream = try await RawConnection.run { connection.receive(timeout: .seconds(120)) { $0.contains("id: \(entries)\n") } }
            #expect(stream.text.contains("id: \(entries)\n"))
            #expect(server.server.state.eventBytesWritten > total)
        }
    }

    /// A graceful shutdown ends even when an event stream's client stopped reading while the
    /// server had more to write to it: the connection is closed once its writes made no progress
    /// for an idle timeout, where before the shutdown waited for it for ever.
    @Test(.timeLimit(.minutes(2))) func aGracefulShutdownClosesAStreamWhoseClientStoppedReading() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await RawConnection.run { try Self.bigVersions(store, list: "l", count: 12, size: 1 << 20) }
        let server = try await ServerHarness.start(
            store, .init(port: 0, maxPageBytes: 4 << 20, keepAliveInterval: .seconds(10), idleTimeout: .seconds(1)))
        let connection = try RawConnection(port: server.port, receiveBuffer: 4096)
        connection.send("GET /v1/lists/l/events?since=0 HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n\r\n")
        let state = server.server.state
        try await Self.waitUntil { state.eventBytesWritten > 0 }
        // Twelve MiB to write: more than the socket's buffers and NIO's take before the stream waits.
        let run = server.task
        let ended = RunEnded()
        Task {
            _ = try? await run.value
            await ended.set()
        }
        await server.server.shutDownGracefully()
        try await ListStoreTestSupport.waitUntil("the server's run ended", within: .seconds(30)) { await ended.value }
        withExtendedLifetime(connection) {}
    }

    /// Whether a server's run ended.
    actor RunEnded {
        var value = false
        func set() { value = true }
    }

    @Test func idleAndHalfSentConnectionsAreClosedButWaitingClientsAreNot() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(3), to: "l")
        // Idle: closed after the idle timeout.
        let idleServer = try await ServerHarness.start(
            store, .init(port: 0, keepAliveInterval: .seconds(10), idleTimeout: .seconds(2)))
        let port = idleServer.port
        let idle = try await RawConnection.run { try RawConnection(port: port).receive(timeout: .seconds(20)).closed }
        #expect(idle)
        // A long poll and an event stream outlive the idle timeout: they answer, the server is not silent on them.
        let poll = try await RawAnswer.exchange(port: port, "GET /v1/lists/l/journal?since=1&wait=5 HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n")
        #expect(poll.status == 200 && poll.body.contains("\"hasMore\":false"))
        let stream = try RawConnection(port: port)
        stream.send("GET /v1/lists/l/events?since=1 HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
        let head = try await RawConnection.run { stream.receive(timeout: .seconds(20)) { $0.contains("\r\n\r\n") } }
        #expect(head.text.contains("text/event-stream") && !head.closed, "\(head.text)")
        // The stream is silent from here (keep-alives every 10 s). A connection made now, idle as
        // well, is closed by the idle timeout: once it is, the stream has outlived it too.
        let witness = try await RawConnection.run { try RawConnection(port: port).receive(timeout: .seconds(20)).closed }
        #expect(witness)
        try await store.commit(linearList(5), to: "l")
        let events = try await RawConnection.run { stream.receive(timeout: .seconds(20)) { $0.contains("id: 2\n") } }
        #expect(events.text.contains("id: 2\n") && !events.closed)
        await idleServer.stop()

        // A head sent a byte at a time: closed after the idle timeout, though bytes keep coming (a
        // head must come whole within it).
        try await ServerHarness.with(store, .init(port: 0, idleTimeout: .seconds(2))) { server in
            let slowPort = server.port
            let dribbled = try await RawConnection.run {
                let connection = try RawConnection(port: slowPort)
                connection.send("GET /v1/lists HTTP/1.1\r\n")
                return connection.dribble("X", every: .milliseconds(300), timeout: .seconds(30))
            }
            #expect(dribbled)
            // A whole request on the same kind of connection is answered, and the next one too.
            let answers = try await RawConnection.run {
                let connection = try RawConnection(port: slowPort)
                connection.send("GET /v1/lists HTTP/1.1\r\nHost: 127.0.0.1:\(slowPort)\r\n\r\n")
                let first = connection.receive(timeout: .seconds(20)) { $0.contains("\"lists\"") }
                connection.send("GET /v1/store HTTP/1.1\r\nHost: 127.0.0.1:\(slowPort)\r\n\r\n")
                let second = connection.receive(timeout: .seconds(20)) { $0.contains("\"uuid\"") }
                return (first.text, second.text)
            }
            #expect(answers.0.hasPrefix("HTTP/1.1 200") && answers.1.hasPrefix("HTTP/1.1 200"), "\(answers)")
        }
    }

    @Test func connectionsAndWaitingRequestsHaveCaps() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(3), to: "l")
        try await ServerHarness.with(store, .init(port: 0, maxConnections: 6, maxStreams: 2)) { server in
            let port = server.port
            let state = server.server.state
            let host = "Host: 127.0.0.1:\(port)\r\n"

            // Two event streams fill the streams' cap; a third, and a long poll that would wait, get 503.
            let streams = try await RawConnection.run {
                try (0..<2).map { _ in
                    let connection = try RawConnection(port: port)
                    connection.send("GET /v1/lists/l/events HTTP/1.1\r\n\(host)\r\n")
                    _ = connection.receive(timeout: .seconds(20)) { $0.contains("text/event-stream") }
                    return connection
                }
            }
            for request in ["GET /v1/lists/l/events HTTP/1.1\r\n", "GET /v1/lists/l/journal?since=1&wait=5 HTTP/1.1\r\n"] {
                let busy = try await RawAnswer.exchange(port: port, request + host)
                #expect(busy.status == 503 && busy.errorCode == "serverBusy" && busy.headers["retry-after"] == "5", "\(request)")
                // A cache in front may hand it to the long polls waiting behind this one for a second.
                #expect(busy.headers["x-accel-expires"] == "1", "\(request)")
            }
            // Ordinary requests still go through, and a long poll that needs no wait too.
            #expect(try await RawAnswer.exchange(port: port, "GET /v1/lists HTTP/1.1\r\n" + host).status == 200)
            #expect(try await RawAnswer.exchange(port: port, "GET /v1/lists/l/journal?since=0&wait=5 HTTP/1.1\r\n" + host).status == 200)

            // Connections up to the cap (two streams and four idle ones): the next takes the place of
            // the one idle longest, which is closed, and is served.
            try await Self.waitUntil { state.connections.current == 2 }
            var idle: [RawConnection]? = []
            for _ in 0..<4 {
                idle?.append(try RawConnection(port: port))
                try await Self.waitUntil { state.idleConnections.count == idle?.count }
            }
            try await Self.waitUntil { state.connections.current == 6 }
            #expect(try await RawAnswer.exchange(port: port, "GET /v1/lists HTTP/1.1\r\n" + host).status == 200)
            let oldest = try #require(idle?.first)
            #expect(try await RawConnection.run { oldest.receive(timeout: .seconds(20)).closed })
            try await Self.waitUntil { state.connections.current == 5 }

            // Connections that all hold a request (heads sent whole, bodies awaited): the next is
            // closed at once, unanswered.
            idle = nil
            try await Self.waitUntil { state.connections.current == 2 }
            // One at a time, each seen idle first and busy after: a connection counted but not yet
            // seen idle could still turn idle after the wait, and be closed for the next one.
            var busy: [RawConnection] = []
            for _ in 0..<4 {
                let connection = try RawConnection(port: port)
                try await Self.waitUntil { state.idleConnections.count == 1 }
                connection.send("POST /v1/lists/l/commits HTTP/1.1\r\n\(host)Content-Type: application/json\r\nContent-Length: 100\r\n\r\n")
                try await Self.waitUntil { state.idleConnections.count == 0 }
                busy.append(connection)
            }
            try await Self.waitUntil { state.connections.current == 6 }
            let refused = try await RawConnection.run { try RawConnection(port: port).receive(timeout: .seconds(20)) }
            #expect(refused.closed && refused.text.isEmpty, "\(refused.text)")
            withExtendedLifetime(busy) {}

            // Once connections close, their places are free again.
            withExtendedLifetime(streams) {}
        }
    }

    /// A flood of idle and half-sent connections up to the cap gives way to rightful clients at
    /// once: each new connection takes the place of the flood's connection idle longest, oldest
    /// first, and no request in progress is ever closed for room (before, every request got 503
    /// until the flood's connections timed out, 40 s and more).
    @Test func aFloodOfIdleAndHalfSentConnectionsGivesWayToRightfulClients() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(3), to: "l")
        // Timeouts of an hour: only room for new clients may close the flood's connections here.
        let configuration = JournalServer.Configuration(
            port: 0, keepAliveInterval: .seconds(120), maxConnections: 40, maxStreams: 4, idleTimeout: .seconds(3600))
        try await ServerHarness.with(store, configuration) { server in
            let (port, state) = (server.port, server.server.state)
            let host = "Host: 127.0.0.1:\(port)\r\n"
            // A follower's event stream holds a request all along.
            let follower = try await RawConnection.run {
                let connection = try RawConnection(port: port)
                connection.send("GET /v1/lists/l/events HTTP/1.1\r\n\(host)\r\n")
                _ = connection.receive(timeout: .seconds(20)) { $0.contains("text/event-stream") }
                return connection
            }
            // The flood: 30 silent connections and 9 that send half a head, one after the other.
            var flood: [RawConnection] = []
            for k in 0..<39 {
                let connection = try RawConnection(port: port)
                if k >= 30 { connection.send("GET /v1/lists HTTP/1.1\r\nHo") }
                flood.append(connection)
                try await Self.waitUntil { state.idleConnections.count == flood.count }
            }
            #expect(state.connections.current == 40)
            // Twenty rightful clients, each on a new connection that it keeps, are served; the flood's
            // twenty oldest connections were closed for them, and only those.
            let request = "GET /v1/lists/l HTTP/1.1\r\n\(host)\r\n"
            var clients: [RawConnection] = []
            for _ in 0..<20 {
                let client = try RawConnection(port: port)
                let answer = try await RawConnection.run {
                    client.send(request)
                    return client.receive(timeout: .seconds(20)) { $0.hasSuffix("}") }
                }
                #expect(answer.text.hasPrefix("HTTP/1.1 200"), "\(answer.text)")
                clients.append(client)
            }
            let (floodConnections, rightful) = (flood, clients)
            // The twenty are waited for (a close for room is on the closed connection's own event
            // loop, and may come after the answer its room served); the rest must be open now.
            let closed = try await RawConnection.run {
                floodConnections.enumerated().map { $1.receive(timeout: $0 < 20 ? .seconds(20) : .milliseconds(1)).closed }
            }
            #expect(closed == Array(repeating: true, count: 20) + Array(repeating: false, count: 19), "\(closed)")
            // Their connections, idle since, are younger than the rest of the flood: they stay, and
            // serve again.
            let again = try await RawConnection.run {
                rightful.map { client in
                    client.send(request)
                    return client.receive(timeout: .seconds(20)) { $0.hasSuffix("}") }.text.hasPrefix("HTTP/1.1 200")
                }
            }
            #expect(again.allSatisfy { $0 })
            let stream = try await RawConnection.run { follower.receive(timeout: .milliseconds(1)) }
            #expect(!stream.closed, "the follower's stream was closed for room")
        }
    }

    /// A client that hangs up frees its place among the waiting requests at once: long polls that
    /// would wait a minute and event streams whose next keep-alive is two minutes away, once their
    /// connections close, leave the streams' cap free for the next clients.
    @Test func aClientThatHangsUpFreesItsSlotAtOnce() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(3), to: "l")
        try await ServerHarness.with(store, .init(port: 0, keepAliveInterval: .seconds(120), maxStreams: 2)) { server in
            let (port, state) = (server.port, server.server.state)
            for request in ["GET /v1/lists/l/journal?since=1&wait=60 HTTP/1.1\r\n", "GET /v1/lists/l/events?since=1 HTTP/1.1\r\n"] {
                var waiting: [RawConnection]? = try (0..<2).map { _ in
                    let connection = try RawConnection(port: port)
                    connection.send(request + "Host: 127.0.0.1:\(port)\r\n\r\n")
                    return connection
                }
                try await Self.waitUntil { state.streams.current == 2 }
                let busy = try await RawAnswer.exchange(port: port, request + "Host: 127.0.0.1:\(port)\r\n")
                #expect(busy.status == 503, "\(request)")
                // They hang up: their places are free long before their waits or keep-alives end.
                #expect(waiting?.count == 2)
                waiting = nil
                try await ListStoreTestSupport.waitUntil("the hung-up \(request.prefix(30)) free their places", within: .seconds(20)) {
                    state.streams.current == 0
                }
            }
            // And the next client is served.
            let next = try await RawAnswer.exchange(port: port, "GET /v1/lists/l/journal?since=0&wait=5 HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n")
            #expect(next.status == 200)
        }
    }

    /// A push whose client hangs up while it merges is stopped and writes nothing (before, it went
    /// on after the client left, and the server's shutdown waited for it). The store's writer is
    /// held meanwhile, so that the push can only be waiting when its client leaves.
    @Test func aPushWhoseClientHangsUpIsStoppedAndWritesNothing() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(3), to: "l")
        try await store.commit(linearList(1), to: "other")
        try await ServerHarness.with(store, .init(port: 0)) { server in
            let (port, state) = (server.port, server.server.state)
            let (held, holding) = AsyncStream.makeStream(of: Void.self)
            let release = DispatchSemaphore(value: 0)
            let holder = Task {
                try await RawConnection.run {
                    _ = try store.edit("other") { _ in
                        holding.yield()
                        holding.finish()
                        release.wait()
                    }
                }
            }
            for await _ in held {}
            do {
                let body = PushRouteTests.document(seq: 1, PushRouteTests.insert("x", after: "e0", before: "e1"))
                var client: RawConnection? = try RawConnection(port: port)
                client?.send(
                    "POST /v1/lists/l/pushes HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Type: application/json\r\n"
                        + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)")
                try await Self.waitUntil { state.mergesInProgress == 1 }
                client = nil
                // The server closes the connection at once, and the merge stops when it reaches the writer.
                try await Self.waitUntil { state.connections.current == 0 }
            } catch {
                release.signal()
                _ = await holder.result
                throw error
            }
            release.signal()
            try await holder.value
            try await Self.waitUntil { state.mergesInProgress == 0 }
            #expect(try await store.summary(of: "l").version == 1)
            #expect(try await store.pushes(from: "c1", to: "l", seqs: 1...1).isEmpty)
            let metrics = try await server.request("/metrics")
            #expect(String(decoding: metrics.body, as: UTF8.self).contains(#"route="/v1/lists/{list}/pushes",status="499""#))
        }
    }

    /// Waits until `condition` holds (see `ListStoreTestSupport.waitUntil`); bounded (by `limit`)
    /// only so that a hang reports what it waited for before the test's time limit stops it.
    static func waitUntil(
        within limit: Duration = .seconds(30), sourceLocation: SourceLocation = #_sourceLocation, _ condition: @escaping () -> Bool
    ) async throws {
        try await ListStoreTestSupport.waitUntil("the condition at \(sourceLocation)", within: limit) { condition() }
    }
}
