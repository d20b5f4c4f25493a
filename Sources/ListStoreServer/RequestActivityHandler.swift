import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// The server's one channel handler of its own, behind Hummingbird's HTTP codec (it sees request
/// and response parts). NIO's `IdleStateHandler` tells it each `idleTimeout` that nothing was read
/// and no write completed; it decides what that means (RunningAServer.md, “Timeouts”):
///
/// - A connection without a request, or whose request body stopped, is closed. A head must come
///   whole within `idleTimeout` on its own timer, since trickling bytes are activity to NIO.
/// - A client that stopped reading its answer is closed; a slow reader, a request at work and a
///   wait are not. Once a graceful shutdown began, the check runs every second.
/// - A close from behind waits for the bytes written before it: NIO's close drops them.
/// - A client that closes its side while a request waits (`HangUpWatch`) is closed at once, since
///   Hummingbird would keep the connection open until the wait's answer.
/// - `Expect: 100-continue` gets `100 Continue` on HTTP/1.1 (Hummingbird sends none), once the
///   answer before it has ended: an interim answer amid another would break it.
/// - It tells `IdleConnections` when the connection holds no request, for room at the cap.
final class RequestActivityHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// What `HangUpWatch` tells the handler, as outbound user events of the request's channel.
    enum Wait {
        /// A request of the connection waits for what to answer (a long poll, an event stream).
        case started
        /// That wait is over.
        case ended
    }

    /// Requests whose head came and whose answer has not ended, in order, each with whether it
    /// waits for a `100 Continue` (sent when its answer is the next to start).
    private var underWay: [Bool] = []
    /// Between a head and the end of its request's body.
    private var bodyComing = false
    /// Requests waiting for what to answer, and whether the client closed its side.
    private var waits = 0
    private var inputClosed = false
    /// The body bytes written so far, and how many NIO had handed to the kernel at the last idle
    /// check and the last shutdown check (`nil`: none since the connection last held no bytes).
    private var bytesOut = 0
    private var sentAtCheck: Int?
    private var sentAtShutdownCheck: Int?
    /// The last write's outcome: a close from behind waits for it.
    private var lastWrite: EventLoopFuture<Void>?
    /// Whether a close from behind waits; the checks once a graceful shutdown began.
    private var closeWaits = false
    private var shutdownCheck: Scheduled<Void>?
    /// When a connection without a request is closed unless a head comes first.
    private var headDeadline: Scheduled<Void>?
    private let idleTimeout: TimeAmount
    private let idleConnections: IdleConnections?

    init(idleTimeout: TimeAmount, idleConnections: IdleConnections?) {
        self.idleTimeout = idleTimeout
        self.idleConnections = idleConnections
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { reportIdle(context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        shutdownCheck?.cancel()
        headDeadline?.cancel()
    }

    func channelActive(context: ChannelHandlerContext) {
        reportIdle(context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        idleConnections?.busy(context.channel)
        shutdownCheck?.cancel()
        headDeadline?.cancel()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let request):
            // HTTP/1.1 only (not on an HTTP/2 stream).
            let expects = Self.connection(of: context.channel) === context.channel && request.headerFields[.expect]?.lowercased() == "100-continue"
            underWay.append(expects)
            if underWay.count == 1, expects { sendContinue(context) }
            bodyComing = true
            headDeadline?.cancel()
            headDeadline = nil
            // An HTTP/2 stream's connection is busy from its first request on.
            idleConnections?.busy(Self.connection(of: context.channel))
        case .body:
            break
        case .end:
            bodyComing = false
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let part = unwrapOutboundIn(data)
        if case .body(let bytes) = part { bytesOut &+= bytes.readableBytes }
        let written = promise ?? context.eventLoop.makePromise()
        lastWrite = written.futureResult
        context.write(data, promise: written)
        if case .end = part {
            if !underWay.isEmpty { underWay.removeFirst() }
            if underWay.isEmpty {
                reportIdle(context)
            } else if underWay[0] {
                // The next request's answer starts now: its interim answer first.
                sendContinue(context)
            }
        }
    }

    /// Writes a `100 Continue` before the answer of the request being answered.
    private func sendContinue(_ context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(.head(HTTPResponse(status: .continue))), promise: nil)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event {
        case let event as IdleStateHandler.IdleStateEvent where event == .all:
            // Consumed: nothing behind acts on it.
            if isIdle(context) { context.close(promise: nil) }
        case let event as ChannelEvent where event == .inputClosed:
            inputClosed = true
            // The client hung up on a request that waits: nobody will read its answer.
            if waits > 0 { return context.close(promise: nil) }
            context.fireUserInboundEventTriggered(event)
        case is ChannelShouldQuiesceEvent:
            scheduleShutdownCheck(context)
            context.fireUserInboundEventTriggered(event)
        default:
            context.fireUserInboundEventTriggered(event)
        }
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard let wait = event as? Wait else { return context.triggerUserOutboundEvent(event, promise: promise) }
        switch wait {
        case .started:
            waits += 1
            if inputClosed { context.close(promise: nil) }
        case .ended:
            waits = max(0, waits - 1)
        }
        promise?.succeed()
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        // A close from behind waits for the bytes written before it (the checks bound the wait).
        guard mode != .input, let lastWrite, context.channel.isActive, heldBytes(context) > 0 else {
            return context.close(mode: mode, promise: promise)
        }
        closeWaits = true
        lastWrite.assumeIsolated().whenComplete { _ in
            self.closeWaits = false
            context.close(mode: mode, promise: promise)
        }
    }

    /// Whether the connection is idle for the idle timeout that just passed. Without a request
    /// under way, the head's deadline decides (`armHeadDeadline(_:)`).
    private func isIdle(_ context: ChannelHandlerContext) -> Bool {
        if bodyComing && waits == 0 { return true }
        if underWay.isEmpty { return false }
        // A wait holds bytes only when its client stopped reading what came before.
        if waits > 0 && heldBytes(context) == 0 { return false }
        return writesStalled(context, mark: &sentAtCheck)
    }

    /// Closes the connection unless a request head comes within the idle timeout, or the client
    /// still reads the last answer then (it is checked again a timeout later).
    private func armHeadDeadline(_ context: ChannelHandlerContext) {
        headDeadline?.cancel()
        headDeadline = context.eventLoop.assumeIsolated().scheduleTask(in: idleTimeout) {
            self.headDeadline = nil
            guard self.underWay.isEmpty, context.channel.isActive else { return }
            if self.heldBytes(context) > 0, !self.writesStalled(context, mark: &self.sentAtCheck) {
                self.armHeadDeadline(context)
            } else {
                context.close(promise: nil)
            }
        }
    }

    /// Whether NIO holds bytes of the connection and the kernel took none of them since the last
    /// check. Progress is counted in bytes handed over, not held, so that what is written meanwhile
    /// does not look like a client that stopped.
    private func writesStalled(_ context: ChannelHandlerContext, mark: inout Int?) -> Bool {
        let held = heldBytes(context)
        let sent = bytesOut &- held
        defer { mark = held > 0 ? sent : nil }
        guard held > 0 else { return false }
        // The first check since bytes are held finds the client reading: it has a timeout to read some.
        guard let last = mark, sent == last else {
            idleConnections?.noteReading()
            return false
        }
        return true
    }

    /// The bytes NIO holds for the connection, not yet taken by the kernel.
    private func heldBytes(_ context: ChannelHandlerContext) -> Int {
        (try? context.channel.syncOptions?.getOption(.bufferedWritableBytes)) ?? 0
    }

    /// Once a graceful shutdown began, checks every second that the client reads what the server
    /// still writes to it, and closes the connection when it does not.
    private func scheduleShutdownCheck(_ context: ChannelHandlerContext) {
        shutdownCheck = context.eventLoop.assumeIsolated().scheduleTask(in: .seconds(1)) {
            guard context.channel.isActive else { return }
            if self.writesStalled(context, mark: &self.sentAtShutdownCheck) {
                context.close(promise: nil)
            } else {
                self.scheduleShutdownCheck(context)
            }
        }
    }

    /// The connection `channel` belongs to: itself, or for an HTTP/2 stream (whose parent is a
    /// connection, a child of the listening channel) its parent.
    static func connection(of channel: any Channel) -> any Channel {
        if let parent = channel.parent, parent.parent != nil { parent } else { channel }
    }

    /// Tells `idleConnections` that the connection holds no request (HTTP/1 connections only: an
    /// HTTP/2 stream is not a connection to close for room).
    private func reportIdle(_ context: ChannelHandlerContext) {
        guard Self.connection(of: context.channel) === context.channel else { return }
        armHeadDeadline(context)
        let channel = context.channel
        idleConnections?.idle(channel) { channel.close(promise: nil) }
    }
}

@available(*, unavailable)
extension RequestActivityHandler: Sendable {}
