import Foundation
import ListStore
import ListStoreTestSupport
import ListStoreWire
import ListSync
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `HTTPSource.commits(of:after:pageSize:wait:)` against canned servers: the event stream, and the
/// long polls it falls back to on a server without one.
@Suite struct EventStreamSourceTests {
    /// Three journal entries of a real store.
    private func entries() async throws -> [JournalEntry] {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        for k in 1...3 { try await store.commit(linearList(2 + k, content: k), to: "l") }
        return try await store.journal(of: "l", after: 0, limit: 10, maxBytes: .max).entries
    }

    /// A journal page as a complete answer, with `headers`.
    private static func page(_ entries: [JournalEntry], hasMore: Bool, headers: [String] = []) -> String {
        CannedHTTPServer.answer(
            String(decoding: WireDocument.journal(JournalPage(entries: entries, hasMore: hasMore), list: "l"), as: UTF8.self), headers: headers)
    }

    /// The first `count` entries of `stream`, which then stops.
    private static func first(_ count: Int, of stream: AsyncThrowingStream<JournalEntry, any Error>) async throws -> [JournalEntry] {
        var received: [JournalEntry] = []
        for try await entry in stream {
            received.append(entry)
            if received.count == count { break }
        }
        return received
    }

    /// The request targets a canned server read, without the page and entry sizes a journal page is
    /// asked for with (`&maxBytes=`, `&maxEntryBytes=`, `HTTPSource.maxPageBytes`).
    private static func targets(_ server: CannedHTTPServer) -> [String] {
        server.requests.map { target(of: $0) }
    }

    /// A request head's target, without `&maxBytes=` and `&maxEntryBytes=`.
    private static func target(of head: String) -> String {
        let target = head.split(separator: " ").dropFirst().first.map(String.init) ?? ""
        return target.replacingOccurrences(of: "&maxBytes=\(HTTPSource.defaultMaxPageBytes)", with: "")
            .replacingOccurrences(of: "&maxEntryBytes=\(HTTPSource.defaultMaxPageBytes)", with: "")
    }

    private static func commitEvent(_ entry: JournalEntry) -> [UInt8] {
        Array("id: \(entry.version)\nevent: commit\ndata: ".utf8) + WireDocument.commitObject(entry) + Array("\n\n".utf8)
    }

    /// At the head (an empty backlog), the commits come from the event stream, sent in small pieces
    /// with keep-alive comments between them and for longer than the idle timeout (the stream's own
    /// is at least 60 s), then an error event that ends it with the store error it names: two
    /// requests for all of it.
    @Test(.timeLimit(.minutes(1))) func commitsComeFromOneEventStream() async throws {
        let entries = try await entries()
        let server = try CannedHTTPServer { head, connection in
            if Self.target(of: head) == "/v1/lists/l/journal?since=0&limit=100" {
                connection.send(Self.page([], hasMore: false))
                return
            }
            guard head.hasPrefix("GET /v1/lists/l/events?since=0 ") else {
                connection.send(CannedHTTPServer.answer("{}", status: "500 Internal Server Error"))
                return
            }
            connection.send("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n")
            // The sleeps pace the writer, and nothing is assumed of what the client did meanwhile:
            // pieces of 7 bytes that come apart, then keep-alives spanning more than the client's
            // idle timeout, so that only they can keep the stream open.
            var bytes = Self.commitEvent(entries[0]) + Self.commitEvent(entries[1])
            while !bytes.isEmpty {
                connection.send(Array(bytes.prefix(7)))
                bytes.removeFirst(min(7, bytes.count))
                usleep(2_000)
            }
            for _ in 0..<8 {  // 1.6 s of keep-alives, against an idle timeout of 1 s
                usleep(200_000)
                connection.send(": keep-alive\n\n")
            }
            connection.send(Self.commitEvent(entries[2]))
            connection.send("event: error\ndata: ")
            connection.send(WireDocument.error(code: "versionNotFound", message: "version 3 was pruned") + Array("\n\n".utf8))
            shutdown(connection.fd, Int32(SHUT_WR))
        }
        var source = try HTTPSource(server.url)
        source.idleTimeout = .seconds(1)  // a stream's own is at least 60 s
        var received: [JournalEntry] = []
        do {
            for try await entry in source.commits(of: "l", after: 0, pageSize: 100, wait: .seconds(5)) { received.append(entry) }
            Issue.record("the stream ended without an error")
        } catch {
            #expect((error as? StoreError)?.code == .versionNotFound, "\(error)")
        }
        #expect(received == entries)
        #expect(Self.targets(server) == ["/v1/lists/l/journal?since=0&limit=100", "/v1/lists/l/events?since=0"])
    }

    /// A backlog is read a page at a time as it is consumed, and the event stream starts after its
    /// last entry.
    @Test(.timeLimit(.minutes(1))) func theBacklogIsPagedThenTheStreamStartsAtItsEnd() async throws {
        let entries = try await entries()
        let server = try CannedHTTPServer { head, connection in
            if Self.target(of: head) == "/v1/lists/l/journal?since=0&limit=2" {
                connection.send(Self.page(Array(entries[0...1]), hasMore: true))
            } else if Self.target(of: head) == "/v1/lists/l/journal?since=2&limit=2" {
                connection.send(Self.page([], hasMore: false))
            } else if head.hasPrefix("GET /v1/lists/l/events?since=2 ") {
                connection.send("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n")
                connection.send(Self.commitEvent(entries[2]))
                connection.send("event: error\ndata: ")
                connection.send(WireDocument.error(code: "listNotFound", message: "no list 'l'") + Array("\n\n".utf8))
                shutdown(connection.fd, Int32(SHUT_WR))
            } else {
                connection.send(CannedHTTPServer.answer("{}", status: "500 Internal Server Error"))
            }
        }
        var received: [JournalEntry] = []
        let stream = try HTTPSource(server.url).commits(of: "l", after: 0, pageSize: 2, wait: .seconds(5))
        var iterator = stream.makeAsyncIterator()
        received.append(try #require(try await iterator.next()))
        // One page read so far: the next is read when this one is used up.
        #expect(Self.targets(server) == ["/v1/lists/l/journal?since=0&limit=2"])
        do {
            while let entry = try await iterator.next() { received.append(entry) }
            Issue.record("the stream ended without an error")
        } catch {
            #expect((error as? StoreError)?.code == .listNotFound, "\(error)")
        }
        #expect(received == entries)
        #expect(Self.targets(server) == [
            "/v1/lists/l/journal?since=0&limit=2", "/v1/lists/l/journal?since=2&limit=2", "/v1/lists/l/events?since=2",
        ])
    }

    /// A server that closes the stream (it is stopping) ends it with a transient error; one that
    /// writes an event it cannot read, with one that is not.
    @Test(.timeLimit(.minutes(1))) func aClosedStreamIsTransientAndAGarbledEventIsNot() async throws {
        let entries = try await entries()
        let server = try CannedHTTPServer { head, connection in
            if head.contains("/journal?") {
                connection.send(Self.page([], hasMore: false))
                return
            }
            connection.send("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n")
            connection.send(Self.commitEvent(entries[0]))
            if head.contains("/garbled/") { connection.send("id: 2\nevent: commit\ndata: {\"version\":\n\n") }
            shutdown(connection.fd, Int32(SHUT_WR))
        }
        for (prefix, transient) in [("/closed", true), ("/garbled", false)] {
            var received: [Int] = []
            do {
                for try await entry in try HTTPSource(server.url + prefix).commits(of: "l", after: 0, pageSize: 100, wait: .seconds(5)) {
                    received.append(entry.version)
                }
                Issue.record("no error")
            } catch {
                #expect((error as? SyncError)?.isTransient == transient, "\(prefix): \(error)")
            }
            #expect(received == [1], "\(prefix)")
        }
    }

    /// A server without event streams (404, no store error): the journal is read and long-polled.
    @Test(.timeLimit(.minutes(1))) func withoutEventStreamsTheJournalIsLongPolled() async throws {
        let entries = try await entries()
        let server = try CannedHTTPServer { head, connection in
            switch Self.target(of: head) {
            case "/v1/lists/l/journal?since=0&limit=100": connection.send(Self.page(Array(entries[0...1]), hasMore: false))
            case let poll where poll.hasPrefix("/v1/lists/l/journal?since=2&limit=0&wait="):
                // A long poll that a commit ended: there is more.
                connection.send(Self.page([], hasMore: true))
            case "/v1/lists/l/journal?since=2&limit=100": connection.send(Self.page([entries[2]], hasMore: false))
            default:
                connection.send(CannedHTTPServer.answer(
                    #"{"error":{"code":"notFound","message":"no such endpoint"},"schemaVersion":1}"#, status: "404 Not Found"))
            }
        }
        let received = try await Self.first(3, of: try HTTPSource(server.url).commits(of: "l", after: 0, pageSize: 100, wait: .seconds(5)))
        #expect(received == entries)
        #expect(Array(Self.targets(server).prefix(4)) == [
            "/v1/lists/l/journal?since=0&limit=100", "/v1/lists/l/events?since=2",
            "/v1/lists/l/journal?since=2&limit=0&wait=5&cursor=0",
            "/v1/lists/l/journal?since=2&limit=100",
        ])
    }

    /// With `followsByLongPolls`, the journal is long-polled from the start: no event stream is
    /// asked for.
    @Test(.timeLimit(.minutes(1))) func aSourceThatFollowsByLongPollsAsksForNoEventStream() async throws {
        let entries = try await entries()
        let server = try CannedHTTPServer { head, connection in
            switch Self.target(of: head) {
            case "/v1/lists/l/journal?since=0&limit=100": connection.send(Self.page(Array(entries[0...1]), hasMore: false))
            case "/v1/lists/l/journal?since=2&limit=0&wait=5&cursor=0": connection.send(Self.page([], hasMore: true))
            case "/v1/lists/l/journal?since=2&limit=100": connection.send(Self.page([entries[2]], hasMore: false))
            default:
                connection.send(CannedHTTPServer.answer(#"{"error":{"code":"invalidArgument","message":"unexpected"},"schemaVersion":1}"#, status: "400 Bad Request"))
            }
        }
        var source = try HTTPSource(server.url)
        source.followsByLongPolls = true
        let received = try await Self.first(3, of: source.commits(of: "l", after: 0, pageSize: 100, wait: .seconds(5)))
        #expect(received == entries)
        #expect(Array(Self.targets(server).prefix(3)) == [
            "/v1/lists/l/journal?since=0&limit=100", "/v1/lists/l/journal?since=2&limit=0&wait=5&cursor=0",
            "/v1/lists/l/journal?since=2&limit=100",
        ])
    }

    /// A long poll that ends without a commit is followed by the next long poll (with the cursor
    /// it answered), not by a read of the journal: at a quiet head a follower asks only for what a
    /// cache can keep for all of them. The page is read once a poll says there is more.
    @Test(.timeLimit(.minutes(1))) func aLongPollWithoutACommitIsFollowedByTheNextPoll() async throws {
        let entries = try await entries()
        let server = try CannedHTTPServer { head, connection in
            let target = Self.target(of: head)
            switch target {
            case "/v1/lists/l/journal?since=0&limit=100": connection.send(Self.page(Array(entries[0...1]), hasMore: false))
            case "/v1/lists/l/journal?since=2&limit=0&wait=5&cursor=0", "/v1/lists/l/journal?since=2&limit=0&wait=5&cursor=7":
                // Quiet: the wait ended without a commit (at once, as from a cache).
                connection.send(Self.page([], hasMore: false, headers: ["X-ListStore-Cursor: \(target.hasSuffix("cursor=0") ? 7 : 8)"]))
            case "/v1/lists/l/journal?since=2&limit=0&wait=5&cursor=8": connection.send(Self.page([], hasMore: true))
            case "/v1/lists/l/journal?since=2&limit=100": connection.send(Self.page([entries[2]], hasMore: false))
            default:
                connection.send(CannedHTTPServer.answer(
                    #"{"error":{"code":"notFound","message":"no such endpoint"},"schemaVersion":1}"#, status: "404 Not Found"))
            }
        }
        let received = try await Self.first(3, of: try HTTPSource(server.url).commits(of: "l", after: 0, pageSize: 100, wait: .seconds(5)))
        #expect(received == entries)
        #expect(Array(Self.targets(server).prefix(6)) == [
            "/v1/lists/l/journal?since=0&limit=100", "/v1/lists/l/events?since=2",
            "/v1/lists/l/journal?since=2&limit=0&wait=5&cursor=0", "/v1/lists/l/journal?since=2&limit=0&wait=5&cursor=7",
            "/v1/lists/l/journal?since=2&limit=0&wait=5&cursor=8", "/v1/lists/l/journal?since=2&limit=100",
        ])
    }
}
