import HummingbirdCore
import HummingbirdHTTP2
import ListStoreWire
import Logging
import NIOCore
import NIOHTTP1
import NIOSSL

/// Hummingbird's HTTP channel behind two guards: a cap on open connections and a timeout on request
/// heads (`HeaderTimeoutHandler`). At the cap, a new connection takes the place of the connection
/// idle longest (`IdleConnections`: no request in progress, or a head not yet whole), which is
/// closed; when every connection holds a request, the new one is answered 503 and closed at once,
/// before it costs more than its descriptor. Plain, it speaks HTTP/1.1; with TLS, HTTP/2 or
/// HTTP/1.1 as the client's ALPN asks.
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
    let idleConnections: IdleConnections
    let headerTimeout: Duration
    let idleTimeout: Duration
    let longPolls: LongPollHandler.Intake?

    /// Hummingbird's channel with `HeaderTimeoutHandler.Observer` added to its handlers (to each
    /// HTTP/2 stream's, over TLS); plain HTTP/1.1 connections take the long polls in front of
    /// Hummingbird's HTTP decoder when `longPolls` is given (`LongPollHandler`), and their idle
    /// timeout is the `HeaderTimeoutHandler`'s.
    /// - Throws: when `tls` is not a usable server configuration (NIOSSL's error).
    init(
        responder: @escaping HTTPChannelHandler.Responder, tls: TLSConfiguration?, idleTimeout: Duration, headerTimeout: Duration,
        connections: ConnectionLimiter, idleConnections: IdleConnections, longPolls: LongPollHandler.Intake? = nil
    ) throws {
        if let tls {
            let http1 = HTTP1Channel.Configuration(
                additionalChannelHandlers: [HeaderTimeoutHandler.Observer()], idleTimeout: TimeAmount(idleTimeout))
            protocols = .tls(
                try HTTP2UpgradeChannel(
                    tlsConfiguration: tls, configuration: .init(idleTimeout: idleTimeout, streamConfiguration: http1), responder: responder))
        } else {
            // The idle timeout of a plain connection is the `HeaderTimeoutHandler`'s, which sees the
            // polls `LongPollHandler` takes in front of Hummingbird.
            let http1 = HTTP1Channel.Configuration(additionalChannelHandlers: [HeaderTimeoutHandler.Observer()], idleTimeout: nil)
            protocols = .http1(HTTP1Channel(responder: responder, configuration: http1))
        }
        self.connections = connections
        self.idleConnections = idleConnections
        self.headerTimeout = headerTimeout
        self.idleTimeout = idleTimeout
        self.longPolls = longPolls
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        guard !connections.isClosed else {
            // The server's task is cancelled: it serves no new connection, and one made ready to
            // serve now might never be taken (NIO traps on a connection dropped so).
            channel.close(promise: nil)
            return channel.eventLoop.makeSucceededFuture(Value(channel: channel, http: nil))
        }
        let slot = connections.slot() ?? (idleConnections.closeOldest() ? connections.slotInPlaceOfOneClosing() : nil)
        guard let slot else {
            logger.warning("refused a connection: \(connections.maximum) connections are open")
            return channel.eventLoop.makeCompletedFuture {
                if case .http1 = protocols {
                    try channel.pipeline.syncOperations.addHandler(RefusingHandler())
                } else {
                    channel.close(promise: nil)  // a plain answer means nothing before a handshake
                }
                return Value(channel: channel, http: nil)
            }
        }
        // The slot is given back once the connection is closed.
        channel.closeFuture.whenComplete { _ in withExtendedLifetime(slot) {} }
        // In front of TLS, if any: a handshake that trickles in, or never comes, counts against the
        // head's time. An HTTP/2 connection without streams is closed a little after the HTTP/2
        // channel's own idle timeout, which waits for the client to answer its goodbye.
        let plain = { if case .http1 = protocols { true } else { false } }()
        let guarding = HeaderTimeoutHandler(
            timeout: TimeAmount(headerTimeout), idleTimeout: plain ? TimeAmount(idleTimeout) : nil, armedAtConnect: !plain,
            multiplexedIdleTimeout: TimeAmount(idleTimeout + .seconds(5)), idleConnections: idleConnections)
        let guarded = channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(guarding)
        }
        switch protocols {
        case .http1(let http1):
            return guarded.flatMap { http1.setup(channel: channel, logger: logger) }.flatMapThrowing { connection in
                let operations = channel.pipeline.syncOperations
                // Right behind the HTTP decoder: an absolute-form target's host is not dropped.
                try operations.addHandler(
                    AbsoluteFormHandler(), position: .after(try operations.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)))
                // In front of the HTTP decoder, right behind the header timeout, which it tells of
                // the polls it takes.
                if let longPolls {
                    try operations.addHandler(LongPollHandler(longPolls), position: .after(try operations.handler(type: HeaderTimeoutHandler.self)))
                }
                return Value(channel: channel, http: .http1(connection))
            }
        case .tls(let upgrade):
            return guarded.flatMap { upgrade.setup(channel: channel, logger: logger) }.map { Value(channel: channel, http: .tls($0)) }
        }
    }

    func handle(value: Value, logger: Logger) async {
        switch (protocols, value.http) {
        case (.http1(let http1), .http1(let connection)?): await http1.handle(value: connection, logger: logger)
        case (.tls(let upgrade), .tls(let connection)?): await upgrade.handle(value: connection, logger: logger)
        default: return
        }
    }

    /// Answers 503 (`serverBusy`, `Retry-After`) as soon as the connection is active, and closes it.
    final class RefusingHandler: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = ByteBuffer

        static let answer: [UInt8] = {
            let body = WireDocument.error(code: APIError.serverBusyCode, message: "the server has too many connections; try again later")
            let head = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: \(APIError.retryAfterSeconds)\r\n"
                + "Connection: close\r\nContent-Length: \(body.count)\r\n\r\n"
            return Array(head.utf8) + body
        }()

        func channelActive(context: ChannelHandlerContext) {
            context.writeAndFlush(NIOAny(ByteBuffer(bytes: Self.answer))).assumeIsolated().whenComplete { _ in
                context.close(promise: nil)
            }
            context.fireChannelActive()
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {}
    }
}

extension TimeAmount {
    /// `duration`, to the nanosecond.
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}

@available(*, unavailable)
extension GuardedHTTPChannel.RefusingHandler: Sendable {}
