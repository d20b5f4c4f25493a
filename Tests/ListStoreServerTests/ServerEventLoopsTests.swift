import ListStore
@testable import ListStoreServer
import ListStoreTestSupport
import NIOCore
import NIOPosix
import Testing

/// The event loops that serve a server's connections (`JournalServer.Configuration.eventLoops`,
/// `ServerEventLoops`).
@Suite(.timeLimit(.minutes(2))) struct ServerEventLoopsTests {
    /// The default is twice the cores; a count below one is one.
    @Test func theDefaultIsTwiceTheCores() {
        #expect(JournalServer.Configuration().effectiveEventLoops == 2 * System.coreCount)
        #expect(JournalServer.Configuration(eventLoops: 3).effectiveEventLoops == 3)
        #expect(JournalServer.Configuration(eventLoops: 0).effectiveEventLoops == 1)
    }

    /// A count gets a group of that many loops, the same one each time it is asked for; NIO's
    /// shared group when that has as many.
    @Test func aCountGetsOneGroupOfThatManyLoops() {
        let count = NIOSingletons.groupLoopCountSuggestion + 3
        let group = ServerEventLoops.group(count: count)
        let loops = Set(group.makeIterator().map { ObjectIdentifier($0) })
        #expect(loops.count == count)
        #expect(ServerEventLoops.group(count: count) === group)
        #expect(ServerEventLoops.group(count: NIOSingletons.groupLoopCountSuggestion) === MultiThreadedEventLoopGroup.singleton)
    }

    /// A server of three loops spreads its connections over the three, and a commit answers the
    /// long polls waiting on each of them.
    @Test func connectionsAreSpreadOverTheLoopsAndEachLoopsPollsAreAnswered() async throws {
        let loops = NIOSingletons.groupLoopCountSuggestion + 1
        let configuration = JournalServer.Configuration(port: 0, keepAliveInterval: .seconds(10), eventLoops: loops)
        try await LongPollHandlerTests.primed(.open, configuration) { server, store in
            let polls = server.server.longPolls
            let connections = try (0..<(4 * loops)).map { _ in try RawConnection(port: server.port) }
            for connection in connections { #expect(connection.send(LongPollHandlerTests.poll(server, "since=1&wait=30"))) }
            try await LimitTests.waitUntil { polls.heldCount == connections.count }
            #expect(polls.loopCount == loops)
            try await store.commit(linearList(4), to: "l")
            for connection in connections {
                let answer = try await LongPollHandlerTests.read(1, from: connection)[0]
                #expect(answer.status == 200 && answer.body.contains("\"version\":2"), "\(answer.body)")
            }
        }
    }
}
