import Foundation
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
            // Threads (a connect blocks) that connect, send a request and let go, again and again,
            // until told to stop.
            let ended = _Locked(0)
            for _ in 0..<2 {
                Thread {
                    while !stop.withLock({ $0 }) {
                        guard let connection = try? RawConnection(port: port) else { continue }
                        _ = connection.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
                    }
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
