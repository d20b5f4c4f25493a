import ListStore
@testable import ListStoreServer
import ListStoreTestSupport
import ListStoreWire
import Logging
import NIOCore
import NIOEmbedded
import NIOPosix
import Testing

/// `LongPollFanout` on its own: a poll at a head the store may have moved past reads the page
/// first, as the route does, and then waits, or ends with the server.
@Suite(.timeLimit(.minutes(2))) struct LongPollFanoutTests {
    /// A fan-out of a store holding list `l` at version 1, whose heads were read before the store
    /// learned of its last commit (so a poll at the head is checked first).
    static func fanout() async throws -> (LongPollFanout, CountingEngine, TemporaryDirectory) {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(3), to: "l")
        let engine = CountingEngine(store)
        let fanout = LongPollFanout(pages: JournalPages(store: engine), slots: ConnectionLimiter(maximum: 4), logger: Logger(label: "test"))
        fanout.headsRead(["l": 1], generation: engine.commitGeneration() &- 1)
        #expect(!fanout.headsAreCurrent)
        return (fanout, engine, directory)
    }

    /// The answers a poll gets, as they come.
    final class Answers: Sendable {
        let received = _Locked([LongPollFanout.Answer]())
        var count: Int { received.withLock { $0.count } }
        var first: LongPollFanout.Answer? { received.withLock { $0.first } }
        func take(_ answer: LongPollFanout.Answer) { received.withLock { $0.append(answer) } }
    }

    static let key = JournalPages.Key(list: "l", since: 1, limit: 100, maxBytes: 1 << 20)

    /// Checked, the poll reads an empty page and waits; the next read of the heads past it
    /// answers it with the commit.
    @Test func aPollAtAHeadNotCurrentReadsFirstThenWaits() async throws {
        let (fanout, engine, directory) = try await Self.fanout()
        defer { withExtendedLifetime(directory) {} }
        let answers = Answers()
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        guard case .held = fanout.take(Self.key, deadline: .now + .seconds(60), on: loop, answer: answers.take) else {
            Issue.record("not held")
            return
        }
        try await waitUntil("the check read the page") { engine.journalReads == 1 && fanout.isWaiting && answers.count == 0 }
        try await engine.store.commit(linearList(4), to: "l")
        fanout.headsRead(["l": 2], generation: engine.commitGeneration())
        try await waitUntil("the answer") { answers.count == 1 }
        guard case .page(let body) = answers.first else { Issue.record("\(String(describing: answers.first))"); return }
        #expect(String(buffer: body).contains("\"version\":2"))
        #expect(fanout.heldCount == 0)
    }

    /// A poll whose first read is under way when the server shuts down is answered with the empty
    /// page once the read comes back empty, as the route's wait ends at once then.
    @Test func aPollCheckedWhileTheServerShutsDownIsAnswered() async throws {
        let (fanout, engine, directory) = try await Self.fanout()
        defer { withExtendedLifetime(directory) {} }
        let answers = Answers()
        engine.journalGate.close()
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        guard case .held = fanout.take(Self.key, deadline: .now + .seconds(60), on: loop, answer: answers.take) else {
            Issue.record("not held")
            return
        }
        try await waitUntil("the check's read at the gate") { engine.journalGate.waitingCount == 1 }
        fanout.close()
        engine.journalGate.open()
        try await waitUntil("the answer") { answers.count == 1 }
        guard case .page(let body) = answers.first else { Issue.record("\(String(describing: answers.first))"); return }
        // The page the read came back with: no commits, and the list's head.
        let page = try WireDocument.decodeJournal(Array(buffer: body))
        #expect(page.entries.isEmpty && !page.hasMore && page.head?.version == 1)
        #expect(fanout.heldCount == 0)
    }

    /// Answers go to their event loop's deliveries: the end of a read on that loop writes them,
    /// without waiting for the loop's task (an embedded loop runs none until told).
    @Test func answersAreWrittenAtTheEndOfAReadOnTheirLoop() async throws {
        let (fanout, engine, directory) = try await Self.fanout()
        defer { withExtendedLifetime(directory) {} }
        fanout.headsRead(["l": 1], generation: engine.commitGeneration())
        let loop = EmbeddedEventLoop()
        let answers = Answers()
        guard case .held = fanout.take(Self.key, deadline: .now + .seconds(60), on: loop, answer: answers.take) else {
            Issue.record("not held")
            return
        }
        fanout.close()
        #expect(answers.count == 0)
        fanout.deliveries(to: loop).run()
        #expect(answers.count == 1)
        loop.run()
        #expect(answers.count == 1)
        guard case .page(let body) = answers.first else { Issue.record("\(String(describing: answers.first))"); return }
        #expect(body == LongPollFanout.emptyPage(of: "l"))
    }

    /// On an event loop whose tasks have not run (an embedded loop runs none until told), the
    /// answer of a poll held on one connection is written when another connection of the loop ends
    /// a read, and the request piped behind the poll is read after it; the loop's task then finds
    /// nothing left to write. Without the handlers running the loop's deliveries, the answer would
    /// wait for the task.
    @Test func aHeldAnswerIsWrittenWhenAnotherConnectionOfItsLoopEndsARead() async throws {
        let directory = try TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(3), to: "l")
        let configuration = JournalServer.Configuration(port: 0)
        let state = ServerState(configuration)
        let fanout = LongPollFanout(pages: JournalPages(store: store), slots: ConnectionLimiter(maximum: 4), logger: Logger(label: "test"))
        fanout.headsRead(["l": 1], generation: store.commitGeneration())
        let intake = LongPollHandler.Intake(
            fanout: fanout, configuration: configuration, access: AccessMiddleware(token: nil, state: state),
            origins: OriginPolicyMiddleware(configuration: configuration, port: { 80 }), metrics: ServerMetrics(),
            logger: Logger(label: "test"))
        // From here on, one thread: the embedded loop's.
        let loop = EmbeddedEventLoop()
        let polling = EmbeddedChannel(handler: LongPollHandler(intake), loop: loop)
        let other = EmbeddedChannel(handler: LongPollHandler(intake), loop: loop)
        let poll = "GET /v1/lists/l/journal?since=1&wait=30 HTTP/1.1\r\nHost: 127.0.0.1:80\r\n\r\n"
        // The poll waits at the head, a second one piped behind it.
        try polling.writeInbound(ByteBuffer(string: poll + poll))
        #expect(try polling.readOutbound(as: IOData.self) == nil)
        #expect(fanout.heldCount == 1)
        fanout.close()  // answers every waiting poll with the empty page (through the loop's deliveries)
        #expect(try polling.readOutbound(as: IOData.self) == nil)
        // Another connection's read ends (the first bytes of a head): the answer goes out now.
        try other.writeInbound(ByteBuffer(string: "GET"))
        var written = ""
        while let part = try polling.readOutbound(as: IOData.self) {
            guard case .byteBuffer(let buffer) = part else { continue }
            written += String(buffer: buffer)
        }
        #expect(written.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(written.hasSuffix("\r\n\r\n" + String(buffer: LongPollFanout.emptyPage(of: "l"))))
        // The poll behind was read once the first was answered: the fan-out, closed, left it to
        // Hummingbird (here the channel's end, which receives its bytes).
        let handedOn = try polling.readInbound(as: ByteBuffer.self).map { String(buffer: $0) }
        #expect(handedOn == poll)
        loop.run()
        #expect(try polling.readOutbound(as: IOData.self) == nil)
    }
}
