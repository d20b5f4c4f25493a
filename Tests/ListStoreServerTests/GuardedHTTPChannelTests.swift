import Logging
import NIOCore
import NIOEmbedded
import Testing

@testable import ListStoreServer

/// The guard in front of each connection, on an embedded channel.
@Suite struct GuardedHTTPChannelTests {
    /// Once the server's task is cancelled (its connections' limiter closed), a connection accepted
    /// in that instant is closed at once and never made ready to serve: NIO traps on a connection
    /// made ready and then dropped by a server that stopped taking them ("Deinited NIOAsyncWriter
    /// without calling finish()"), which cancelled test servers met now and then.
    @Test func aConnectionAcceptedWhileTheServerIsCancelledIsClosedAndNotServed() throws {
        let connections = ConnectionLimiter(maximum: 4)
        let guarded = try GuardedHTTPChannel(
            responder: { _, _, _ in }, tls: nil, idleTimeout: .seconds(60), connections: connections,
            idleConnections: IdleConnections())
        connections.close()
        let channel = EmbeddedChannel()
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        let value = try guarded.setup(channel: channel, logger: Logger(label: "test")).wait()
        #expect(value.http == nil)
        #expect(!channel.isActive)
        #expect(connections.current == 0 && connections.slot() == nil)
        connections.open()
        #expect(connections.slot() != nil)
    }
}
