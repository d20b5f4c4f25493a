import HTTPTypes
@testable import ListStoreServer
import NIOCore
import NIOEmbedded
import NIOHTTPTypes
import Testing

/// `RequestActivityHandler` on an embedded channel: what it does with the idle events NIO's
/// `IdleStateHandler` sends it, with a client that closes its side, and what it tells
/// `IdleConnections`.
@Suite struct RequestActivityHandlerTests {
    static let head = HTTPRequestPart.head(HTTPRequest(method: .get, scheme: "http", authority: "127.0.0.1", path: "/v1/lists"))

    static func connected(_ idle: IdleConnections? = nil) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel(handler: RequestActivityHandler(idleTimeout: .seconds(60), idleConnections: idle))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        return channel
    }

    /// The idle timeout passed, as `IdleStateHandler` says it.
    static func idleTimeoutPassed(_ channel: EmbeddedChannel) {
        channel.pipeline.fireUserInboundEventTriggered(IdleStateHandler.IdleStateEvent.all)
    }

    /// A request at work (read whole, its answer not yet written) is not idle, however long it
    /// takes; its connection is once its answer ends, at the head's deadline.
    @Test func aConnectionIsClosedWhenIdleButNotWhileARequestIsAtWork() throws {
        let loop = EmbeddedEventLoop()
        let working = EmbeddedChannel(handler: RequestActivityHandler(idleTimeout: .seconds(60), idleConnections: nil), loop: loop)
        try working.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        try working.writeInbound(Self.head)
        try working.writeInbound(HTTPRequestPart.end(nil))
        Self.idleTimeoutPassed(working)
        loop.advanceTime(by: .seconds(120))
        Self.idleTimeoutPassed(working)
        #expect(working.isActive)
        try working.writeOutbound(HTTPResponsePart.head(HTTPResponse(status: .ok)))
        try working.writeOutbound(HTTPResponsePart.end(nil))
        #expect(working.isActive)
        loop.advanceTime(by: .seconds(61))
        #expect(!working.isActive)
    }

    /// A head must come whole within the idle timeout of the connection's start or last answer,
    /// whatever else comes meanwhile (bytes of a head that trickle in are activity to NIO).
    @Test func aHeadMustComeWithinTheIdleTimeout() throws {
        let loop = EmbeddedEventLoop()
        let channel = EmbeddedChannel(handler: RequestActivityHandler(idleTimeout: .seconds(60), idleConnections: nil), loop: loop)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        loop.advanceTime(by: .seconds(59))
        try channel.writeInbound(Self.head)
        try channel.writeInbound(HTTPRequestPart.end(nil))
        loop.advanceTime(by: .seconds(120))
        #expect(channel.isActive, "a request at work")
        try channel.writeOutbound(HTTPResponsePart.head(HTTPResponse(status: .ok)))
        try channel.writeOutbound(HTTPResponsePart.end(nil))
        loop.advanceTime(by: .seconds(59))
        #expect(channel.isActive)
        loop.advanceTime(by: .seconds(2))
        #expect(!channel.isActive)
    }

    /// A request whose body stops coming is idle; one that waits for a commit is not.
    @Test func aStalledBodyIsIdleAndAWaitIsNot() throws {
        let stalled = try Self.connected()
        try stalled.writeInbound(Self.head)
        Self.idleTimeoutPassed(stalled)
        #expect(!stalled.isActive)

        let waiting = try Self.connected()
        try waiting.writeInbound(Self.head)
        try waiting.writeInbound(HTTPRequestPart.end(nil))
        waiting.pipeline.triggerUserOutboundEvent(RequestActivityHandler.Wait.started, promise: nil)
        Self.idleTimeoutPassed(waiting)
        #expect(waiting.isActive)
        _ = try? waiting.finish()
    }

    /// A client that closes its side while its request waits has hung up: the connection closes
    /// (then, or as soon as the request waits). One whose request does not wait gets its answer.
    @Test func aClientThatClosesItsSideDuringAWaitHasHungUp() throws {
        let waiting = try Self.connected()
        try waiting.writeInbound(Self.head)
        try waiting.writeInbound(HTTPRequestPart.end(nil))
        waiting.pipeline.triggerUserOutboundEvent(RequestActivityHandler.Wait.started, promise: nil)
        waiting.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        #expect(!waiting.isActive)

        let answered = try Self.connected()
        try answered.writeInbound(Self.head)
        try answered.writeInbound(HTTPRequestPart.end(nil))
        answered.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        #expect(answered.isActive)
        answered.pipeline.triggerUserOutboundEvent(RequestActivityHandler.Wait.started, promise: nil)
        #expect(!answered.isActive)
    }

    /// A connection counts as idle (to be closed for room at the cap) from its start and after each
    /// answer's end, not while a request is in progress; closing the oldest closes it.
    /// A connection reported idle again before any request (at its setup, then when its handler
    /// sees it active, which a loaded machine may run after the next connection's setup) keeps its
    /// place: the connection idle longest is still the one closed for room.
    @Test func aConnectionReportedIdleTwiceKeepsItsPlace() throws {
        let idle = IdleConnections()
        let (first, second) = (EmbeddedChannel(), EmbeddedChannel())
        for channel in [first, second] { try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait() }
        let mark = idle.idle(first) { first.close(promise: nil) }
        idle.idle(second) { second.close(promise: nil) }
        #expect(idle.idle(first) { first.close(promise: nil) } == mark)
        #expect(idle.isStillIdle(first, since: mark))
        #expect(idle.closeOldest())
        #expect(!first.isActive && second.isActive)
        #expect(idle.count == 1)
    }

    @Test func aConnectionIsIdleBetweenRequests() throws {
        let idle = IdleConnections()
        let channel = try Self.connected(idle)
        #expect(idle.count == 1)
        try channel.writeInbound(Self.head)
        #expect(idle.count == 0)
        #expect(!idle.closeOldest())
        try channel.writeInbound(HTTPRequestPart.end(nil))
        try channel.writeOutbound(HTTPResponsePart.head(HTTPResponse(status: .ok)))
        try channel.writeOutbound(HTTPResponsePart.end(nil))
        #expect(idle.count == 1)
        #expect(idle.closeOldest())
        #expect(!channel.isActive)
    }
}
