import HummingbirdCore
import HummingbirdHTTP2
import Logging
import NIOCore
import NIOSSL

/// Hummingbird's HTTP channel (HTTP/1.1, or over TLS HTTP/2 and HTTP/1.1) behind a cap on open
/// connections: at the cap, a new connection takes the place of the one idle longest
/// (`IdleConnections`), or is closed at once, before it costs more than its descriptor, when every
/// connection holds a request. NIO's `IdleStateHandler` times each connection and
/// `RequestActivityHandler` decides what its silence means.
struct GuardedHTTPChannel: ServerChildChannel {
    /// A connection: the HTTP channel's value, or `nil` when the connection was refused.
    struct Value: ServerChildChannelValue {
        let channel: any Channel
        let http: Negotiated?
    }

    /// What a connection speaks.
    enum Negotiated: Sendable {
        case http1(HTTP1Channel.Value)
        case tls(HTTP2UpgradeChannel.Value)
    }

    /// The HTTP channel of the connections: plain HTTP/1.1, or TLS with HTTP/2 and HTTP/1.1.
    enum Protocols: Sendable {
        case http1(HTTP1Channel)
        case tls(HTTP2UpgradeChannel)
    }

    let protocols: Protocols
    let connections: ConnectionLimiter

    /// Hummingbird's channel, with `RequestActivityHandler` among its handlers (each HTTP/2
    /// stream's, over TLS).
    /// - Throws: when `tls` is not a usable server configuration (NIOSSL's error).
    init(
        responder: @escaping HTTPChannelHandler.Responder, tls: TLSConfiguration?, idleTimeout: Duration, connections: ConnectionLimiter,
        idleConnections: IdleConnections
    ) throws {
        // The idle timeout of HTTP/1 connections is the `RequestActivityHandler`'s, which tells a
        // slow reader from one that stopped (Hummingbird's counts from the answer's last write).
        let idle = TimeAmount(idleTimeout)
        let http1 = HTTP1Channel.Configuration(
            additionalChannelHandlers: [RequestActivityHandler(idleTimeout: idle, idleConnections: idleConnections)])
        if let tls {
            // HTTP/2 streams never see the connection's idle events: each keeps Hummingbird's timeout.
            var streams = http1
            streams.idleTimeout = idle
            protocols = .tls(
                try HTTP2UpgradeChannel(
                    tlsConfiguration: tls, configuration: .init(idleTimeout: idleTimeout, streamConfiguration: streams), responder: responder))
        } else {
            protocols = .http1(HTTP1Channel(responder: responder, configuration: http1))
        }
        self.connections = connections
        self.idleConnections = idleConnections
        self.idleTimeout = TimeAmount(idleTimeout)
    }

    private let idleConnections: IdleConnections
    private let idleTimeout: TimeAmount

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        // Not serving, or at the cap with no idle connection to close: closed unserved (one made
        // ready to serve now might never be taken, which NIO traps on).
        let slot = connections.isClosed ? nil : connections.slot() ?? (idleConnections.closeOldest() ? connections.slotInPlaceOfOneClosing() : nil)
        guard let slot else {
            if !connections.isClosed { logger.warning("refused a connection: \(connections.maximum) connections are open") }
            channel.close(promise: nil)
            return channel.eventLoop.makeSucceededFuture(Value(channel: channel, http: nil))
        }
        // The slot is given back once the connection is closed.
        channel.closeFuture.whenComplete { _ in withExtendedLifetime(slot) {} }
        // Idle from its start: at the cap, a connection that never sends a request makes room.
        let (idleConnections, idleTimeout) = (idleConnections, idleTimeout)
        let mark = idleConnections.idle(channel) { channel.close(promise: nil) }
        // Closed before any handler of its requests was set up (a handshake that failed, a probe).
        channel.closeFuture.whenComplete { _ in idleConnections.busy(channel) }
        let idleness = channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(IdleStateHandler(allTimeout: idleTimeout))
        }
        switch protocols {
        case .http1(let http1):
            return idleness.flatMap { http1.setup(channel: channel, logger: logger) }.map { Value(channel: channel, http: .http1($0)) }
        case .tls(let upgrade):
            // Nothing acts on idleness before the handshake chose a protocol: a connection without a
            // request within the idle timeout is closed.
            channel.eventLoop.scheduleTask(in: idleTimeout) {
                if idleConnections.isStillIdle(channel, since: mark) { channel.close(promise: nil) }
            }
            return idleness.flatMap { upgrade.setup(channel: channel, logger: logger) }.map { Value(channel: channel, http: .tls($0)) }
        }
    }

    func handle(value: Value, logger: Logger) async {
        switch (protocols, value.http) {
        case (.http1(let http1), .http1(let connection)?): await http1.handle(value: connection, logger: logger)
        case (.tls(let upgrade), .tls(let connection)?): await upgrade.handle(value: connection, logger: logger)
        default: return
        }
    }
}
