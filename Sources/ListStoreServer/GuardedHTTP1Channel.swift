import HummingbirdCore
import ListStoreWire
import Logging
import NIOCore

/// Hummingbird's HTTP/1 channel behind two guards: a cap on open connections (a connection beyond
/// it is answered 503 and closed at once, before it costs more than its descriptor) and a timeout
/// on request heads (`HeaderTimeoutHandler`).
struct GuardedHTTP1Channel: ServerChildChannel {
    /// A connection: the HTTP channel's value, or `nil` when the connection was refused.
    struct Value: ServerChildChannelValue {
        let channel: any Channel
        let http: HTTP1Channel.Value?
    }

    let http1: HTTP1Channel
    let connections: ConnectionLimiter
    let headerTimeout: Duration

    /// `http1`, with `HeaderTimeoutHandler.Observer` added to its handlers.
    init(responder: @escaping HTTPChannelHandler.Responder, idleTimeout: Duration, headerTimeout: Duration, connections: ConnectionLimiter) {
        http1 = HTTP1Channel(
            responder: responder,
            configuration: .init(additionalChannelHandlers: [HeaderTimeoutHandler.Observer()], idleTimeout: TimeAmount(idleTimeout)))
        self.connections = connections
        self.headerTimeout = headerTimeout
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        guard let slot = connections.slot() else {
            logger.warning("refused a connection: \(connections.maximum) connections are open")
            return channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(RefusingHandler())
                return Value(channel: channel, http: nil)
            }
        }
        // The slot is given back once the connection is closed.
        channel.closeFuture.whenComplete { _ in withExtendedLifetime(slot) {} }
        let timeout = TimeAmount(headerTimeout)
        return channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(HeaderTimeoutHandler(timeout: timeout))
        }
        .flatMap { http1.setup(channel: channel, logger: logger) }
        .map { Value(channel: channel, http: $0) }
    }

    func handle(value: Value, logger: Logger) async {
        guard let http = value.http else { return }
        await http1.handle(value: http, logger: logger)
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
extension GuardedHTTP1Channel.RefusingHandler: Sendable {}
