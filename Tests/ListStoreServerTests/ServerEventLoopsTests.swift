import ListStore
@testable import ListStoreServer
import ListStoreTestSupport
import NIOCore
import NIOPosix
import Testing

/// The event loops that serve a server's connections (`JournalServer.Configuration.eventLoops`,
/// `ServerEventLoops`).
@Suite(.timeLimit(.minutes(2))) struct ServerEventLoopsTests {
    /// The default is twice the cores; a count is brought within 1 to 1,024; the default cap on
    /// connections leaves the loops' descriptors (3 each) free.
    @Test func theDefaultIsTwiceTheCores() {
        #expect(JournalServer.Configuration().effectiveEventLoops == 2 * System.coreCount)
        #expect(JournalServer.Configuration(eventLoops: 3).effectiveEventLoops == 3)
        #expect(JournalServer.Configuration(eventLoops: 0).effectiveEventLoops == 1)
        #expect(JournalServer.Configuration(eventLoops: 5000).effectiveEventLoops == 1024)
        let (one, ten) = (JournalServer.Configuration(eventLoops: 1), JournalServer.Configuration(eventLoops: 10))
        if one.effectiveMaxConnections > 16 + 27 {
            #expect(one.effectiveMaxConnections - ten.effectiveMaxConnections == 27)
        }
        #expect(JournalServer.Configuration(maxConnections: 100, eventLoops: 10).effectiveMaxConnections == 100)
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

    /// A server of more loops than the default spreads its connections over all of them, and a
    /// commit answers the long polls waiting on each. (The count is neither NIO's shared group's
    /// nor the default, whose loops the servers of other tests share.)
    @Test func connectionsAreSpreadOverTheLoopsAndEachLoopsPollsAreAnswered() async throws {
        let loops = max(NIOSingletons.groupLoopCountSuggestion, ServerEventLoops.defaultCount) + 1
        let configuration = JournalServer.Configuration(port: 0, keepAliveInterval: .seconds(10), eventLoops: loops)
        try await LongPollTests.primed(.open, configuration) { server, store in
            let connections = try (0..<(4 * loops)).map { _ in try RawConnection(port: server.port) }
            for connection in connections { #expect(connection.send(LongPollTests.poll(server, "since=1&wait=30"))) }
            try await LimitTests.waitUntil { LongPollTests.held(server) == connections.count }
            try await store.commit(linearList(4), to: "l")
            for connection in connections {
                let answer = try await LongPollTests.read(1, from: connection)[0]
                #expect(answer.status == 200 && answer.body.contains("\"version\":2"), "\(answer.body)")
            }
        }
    }
}
