import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ListStore
@testable import ListStoreServer
import ListStoreTestSupport
import Testing

/// How a server stops: cancelled or signalled, it shuts down gracefully, whatever its clients do.
@Suite struct ShutdownTests {
    /// A server whose task is cancelled while clients keep connecting stops without dropping an
    /// accepted connection unserved (which NIO stops the whole process for): cancelling shuts it
    /// down gracefully. Rounds of connections in flight at the instant of the cancellation.
    @Test(.timeLimit(.minutes(3))) func aServerCancelledWhileClientsConnectStops() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(3), to: "l")
        for _ in 0..<40 {
            let server = try await ServerHarness.start(store, .init(port: 0, keepAliveInterval: .seconds(1)))
            let stop = _Locked(false)
            let port = server.port
            // Threads (a connect blocks) that connect and let go, a connection a millisecond, until
            // told to stop or refused (the server has stopped): what NIO trapped on is a connection
            // accepted as the server stops, not what comes on it.
            let ended = _Locked(0)
            for _ in 0..<2 {
                Thread {
                    // Each held until the next is made, so that one is open at any moment.
                    var last: RawConnection?
                    while !stop.withLock({ $0 }) {
                        guard let next = try? RawConnection(port: port) else { break }
                        last = next
                        usleep(1000)
                    }
                    withExtendedLifetime(last) {}
                    ended.withLock { $0 += 1 }
                }.start()
            }
            try await waitUntil("a client connected") { server.server.state.connections.current > 0 }
            await server.stop()
            stop.withLock { $0 = true }
            try await waitUntil("the clients stopped") { ended.withLock { $0 } == 2 }
        }
    }
}
