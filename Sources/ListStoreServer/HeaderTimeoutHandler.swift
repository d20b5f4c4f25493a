import NIOCore
import NIOHTTPTypes

/// Closes a connection whose request head is not complete within a timeout of its first byte, so a
/// client that sends its headers a byte every few seconds cannot hold a connection forever.
///
/// It sits in front of the HTTP decoder, where it sees the bytes as they come; its `Observer`,
/// behind the decoder, tells it (by outbound user events) when a head is complete and when the
/// connection waits for the next request. The time a request takes to answer — a long poll, an
/// event stream — is not counted: the timer runs only between the first byte of a request and the
/// end of its head. A connection that sends nothing at all is the idle timeout's business.
final class HeaderTimeoutHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    /// What the `Observer` tells the handler.
    enum Event {
        /// A request head is complete: stop the timer.
        case headReceived
        /// Every request so far is answered: the next byte starts a new head.
        case awaitingHead
        /// The connection carries HTTP/2 streams, which share it: from now on only the HTTP/2
        /// channel's own idle timeout closes it.
        case multiplexed
    }

    private let timeout: TimeAmount
    private var awaitingHead = true
    private var multiplexed = false
    private var timer: Scheduled<Void>?

    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // The decoder behind reports a complete head while it reads these bytes (`headReceived`),
        // so the timer is armed only when they leave a head incomplete: a request whose head comes
        // in one read, as nearly all do, costs no timer.
        context.fireChannelRead(data)
        if awaitingHead, !multiplexed, timer == nil, context.channel.isActive {
            timer = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) {
                context.close(promise: nil)
            }
        }
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard let event = event as? Event else {
            context.triggerUserOutboundEvent(event, promise: promise)
            return
        }
        switch event {
        case .headReceived:
            awaitingHead = false
            cancelTimer()
        case .awaitingHead:
            awaitingHead = true
        case .multiplexed:
            multiplexed = true
            cancelTimer()
        }
        promise?.succeed()
    }

    func channelInactive(context: ChannelHandlerContext) {
        cancelTimer()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        cancelTimer()
    }

    private func cancelTimer() {
        timer?.cancel()
        timer = nil
    }

    /// Behind the HTTP decoder: reports complete heads and answered requests to the
    /// `HeaderTimeoutHandler` in front of it. On an HTTP/2 stream it tells the connection, once, that it is multiplexed.
    final class Observer: ChannelDuplexHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPRequestPart
        typealias InboundOut = HTTPRequestPart
        typealias OutboundIn = HTTPResponsePart
        typealias OutboundOut = HTTPResponsePart

        private var unanswered = 0

        /// The connection `channel` is a stream of, when it is an HTTP/2 stream: a connection's
        /// parent is the listening channel, which has none, and a stream's is its connection.
        static func multiplexingConnection(of channel: any Channel) -> (any Channel)? {
            guard let parent = channel.parent, parent.parent != nil else { return nil }
            return parent
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            if case .head = unwrapInboundIn(data) {
                if let connection = Self.multiplexingConnection(of: context.channel) {
                    connection.pipeline.triggerUserOutboundEvent(Event.multiplexed, promise: nil)
                    return context.fireChannelRead(data)
                }
                unanswered += 1
                context.triggerUserOutboundEvent(Event.headReceived, promise: nil)
            }
            context.fireChannelRead(data)
        }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            if case .end = unwrapOutboundIn(data), Self.multiplexingConnection(of: context.channel) == nil {
                unanswered -= 1
                if unanswered == 0 { context.triggerUserOutboundEvent(Event.awaitingHead, promise: nil) }
            }
            context.write(data, promise: promise)
        }
    }
}

@available(*, unavailable)
extension HeaderTimeoutHandler: Sendable {}

@available(*, unavailable)
extension HeaderTimeoutHandler.Observer: Sendable {}
