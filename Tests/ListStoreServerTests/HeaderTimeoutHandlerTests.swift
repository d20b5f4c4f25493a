import HTTPTypes
@testable import ListStoreServer
import NIOCore
import NIOEmbedded
import NIOHTTPTypes
import Testing

/// `HeaderTimeoutHandler` on an embedded channel, whose clock the tests move.
@Suite struct HeaderTimeoutHandlerTests {
    static func connected(_ handler: HeaderTimeoutHandler) throws -> (EmbeddedChannel, EmbeddedEventLoop) {
        let loop = EmbeddedEventLoop()
        let channel = EmbeddedChannel(handler: handler, loop: loop)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        return (channel, loop)
    }

    /// A TLS connection that never sends a byte is closed after the header timeout; a plain one is
    /// left to the idle timeout.
    @Test func connectionsTimedFromTheirStartAreClosedWhenNothingComes() throws {
        let (tls, tlsLoop) = try Self.connected(HeaderTimeoutHandler(timeout: .seconds(10), armedAtConnect: true))
        tlsLoop.advanceTime(by: .seconds(9))
        #expect(tls.isActive)
        tlsLoop.advanceTime(by: .seconds(2))
        #expect(!tls.isActive)

        let (plain, plainLoop) = try Self.connected(HeaderTimeoutHandler(timeout: .seconds(10)))
        plainLoop.advanceTime(by: .seconds(60))
        #expect(plain.isActive)
        _ = try? plain.finish()
    }

    /// An HTTP/2 connection is closed once it has had no open stream for the idle time, whatever
    /// its client does; open streams keep it.
    @Test func multiplexedConnectionsCloseWhenIdleWithoutStreams() throws {
        let (channel, loop) = try Self.connected(
            HeaderTimeoutHandler(timeout: .seconds(10), armedAtConnect: true, multiplexedIdleTimeout: .seconds(30)))
        channel.pipeline.triggerUserOutboundEvent(HeaderTimeoutHandler.Event.streamOpened, promise: nil)
        channel.pipeline.triggerUserOutboundEvent(HeaderTimeoutHandler.Event.streamOpened, promise: nil)
        loop.advanceTime(by: .seconds(120))  // two long event streams: neither timer runs
        #expect(channel.isActive)
        channel.pipeline.triggerUserOutboundEvent(HeaderTimeoutHandler.Event.streamClosed, promise: nil)
        loop.advanceTime(by: .seconds(60))
        #expect(channel.isActive)
        channel.pipeline.triggerUserOutboundEvent(HeaderTimeoutHandler.Event.streamClosed, promise: nil)
        loop.advanceTime(by: .seconds(20))
        // A new stream within the idle time keeps the connection.
        channel.pipeline.triggerUserOutboundEvent(HeaderTimeoutHandler.Event.streamOpened, promise: nil)
        loop.advanceTime(by: .seconds(20))
        #expect(channel.isActive)
        channel.pipeline.triggerUserOutboundEvent(HeaderTimeoutHandler.Event.streamClosed, promise: nil)
        loop.advanceTime(by: .seconds(29))
        #expect(channel.isActive)
        loop.advanceTime(by: .seconds(2))
        #expect(!channel.isActive)
    }

    /// A connection counts as idle (to be closed for room at the cap) from its start, not while a
    /// request is in progress, and again only once its answer's last bytes are written to the
    /// socket: a slow reader of a large answer is not cut short for room.
    @Test func aConnectionIsIdleOnlyOnceItsAnswerIsWritten() throws {
        let idle = IdleConnections()
        let loop = EmbeddedEventLoop()
        let channel = EmbeddedChannel(
            handlers: [HeaderTimeoutHandler(timeout: .seconds(10), idleConnections: idle), ResponseBytes(), HeaderTimeoutHandler.Observer()], loop: loop)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        #expect(idle.count == 1)
        try channel.writeInbound(HTTPRequestPart.head(HTTPRequest(method: .get, scheme: nil, authority: "h", path: "/")))
        try channel.writeInbound(HTTPRequestPart.end(nil))
        #expect(idle.count == 0)
        channel.write(HTTPResponsePart.head(HTTPResponse(status: .ok)), promise: nil)
        channel.write(HTTPResponsePart.end(nil), promise: nil)
        // Answered, not yet written: still busy.
        #expect(idle.count == 0)
        channel.flush()
        #expect(idle.count == 1)
        // Closed for room, it is closed.
        #expect(idle.closeOldest())
        loop.run()
        #expect(!channel.isActive)
        #expect(idle.count == 0 && !idle.closeOldest())
    }

    /// A plain connection (the handler keeps its idle timeout) is closed once it has held no
    /// request for the idle timeout: from its start, and again after each answer. A request in
    /// progress keeps it however long its answer takes; a body that stops coming for the idle
    /// timeout closes it, one that keeps coming does not.
    @Test func plainConnectionsCloseWhenIdleButNotWhileARequestIsInProgress() throws {
        func connected() throws -> (EmbeddedChannel, EmbeddedEventLoop) {
            let loop = EmbeddedEventLoop()
            let channel = EmbeddedChannel(
                handlers: [HeaderTimeoutHandler(timeout: .seconds(10), idleTimeout: .seconds(60)), ResponseBytes(), HeaderTimeoutHandler.Observer()], loop: loop)
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
            return (channel, loop)
        }
        let head = HTTPRequestPart.head(HTTPRequest(method: .get, scheme: nil, authority: "h", path: "/"))

        let (idle, idleLoop) = try connected()
        idleLoop.advanceTime(by: .seconds(59))
        #expect(idle.isActive)
        idleLoop.advanceTime(by: .seconds(2))
        #expect(!idle.isActive)

        let (answered, loop) = try connected()
        loop.advanceTime(by: .seconds(30))
        try answered.writeInbound(head)
        try answered.writeInbound(HTTPRequestPart.end(nil))
        loop.advanceTime(by: .seconds(300))  // a long poll, an event stream
        #expect(answered.isActive)
        try answered.writeOutbound(HTTPResponsePart.head(HTTPResponse(status: .ok)))
        try answered.writeOutbound(HTTPResponsePart.end(nil))
        loop.advanceTime(by: .seconds(59))
        #expect(answered.isActive)
        loop.advanceTime(by: .seconds(2))
        #expect(!answered.isActive)

        let (uploading, uploadLoop) = try connected()
        try uploading.writeInbound(HTTPRequestPart.head(HTTPRequest(method: .post, scheme: nil, authority: "h", path: "/")))
        for _ in 0..<5 {
            uploadLoop.advanceTime(by: .seconds(50))
            try uploading.writeInbound(HTTPRequestPart.body(ByteBuffer(string: "x")))
        }
        #expect(uploading.isActive)
        uploadLoop.advanceTime(by: .seconds(61))
        #expect(!uploading.isActive)

        // Refused before its body is all read (a 413, a 401): the body that keeps coming is not
        // a head (no header timeout), and once it ends the connection is idle.
        let (refused, refusedLoop) = try connected()
        try refused.writeInbound(HTTPRequestPart.head(HTTPRequest(method: .post, scheme: nil, authority: "h", path: "/")))
        try refused.writeOutbound(HTTPResponsePart.head(HTTPResponse(status: .contentTooLarge)))
        try refused.writeOutbound(HTTPResponsePart.end(nil))
        for _ in 0..<5 {
            refusedLoop.advanceTime(by: .seconds(8))
            try refused.writeInbound(HTTPRequestPart.body(ByteBuffer(string: "x")))
        }
        #expect(refused.isActive)
        try refused.writeInbound(HTTPRequestPart.end(nil))
        refusedLoop.advanceTime(by: .seconds(59))
        #expect(refused.isActive)
        refusedLoop.advanceTime(by: .seconds(2))
        #expect(!refused.isActive)
    }

    /// Methods outside HTTP's own are one label, so clients cannot grow the metrics.
    @Test func unknownMethodsShareOneLabel() throws {
        typealias Middleware = RequestMetricsMiddleware<ServerRequestContext>
        #expect(Middleware.methodLabel(.get) == "GET")
        #expect(Middleware.methodLabel(.post) == "POST")
        #expect(Middleware.methodLabel(try #require(HTTPRequest.Method("BREW"))) == "other")
    }
}

/// Stands for the HTTP encoder between the `Observer` and the `HeaderTimeoutHandler`: each part of
/// an answer becomes a few bytes, as the handler in front of the socket sees them.
private final class ResponseBytes: ChannelOutboundHandler {
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = IOData

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let bytes: String =
            switch unwrapOutboundIn(data) {
            case .head: "HTTP/1.1 200 OK\r\n\r\n"
            case .body(let body): String(repeating: "b", count: body.readableBytes)
            case .end: ""
            }
        context.write(wrapOutboundOut(.byteBuffer(ByteBuffer(string: bytes))), promise: promise)
    }
}
