import NIOCore
import NIOHTTPTypes

/// Closes a connection whose request head is not complete within a timeout of its first byte, so a
/// client that sends its headers a byte every few seconds cannot hold a connection forever.
///
/// It sits in front of the HTTP decoder (and of TLS, when there is TLS), where it sees the bytes as
/// they come; its `Observer`, behind the decoder, tells it (by outbound user events) when a head is
/// complete and when the connection waits for the next request, and so does `LongPollHandler`,
/// right behind it, for the polls it takes. The time a request takes to answer
/// — a long poll, an event stream — is not counted: the timer runs only between the first byte of a
/// request and the end of its head. A plain connection that sends nothing at all is the idle
/// timeout's business; a TLS connection is timed from its start (`armedAtConnect`), since the idle
/// timeout is only set up once the handshake has chosen the protocol, so a handshake that never
/// comes counts as a head that never ends.
///
/// On a plain connection (`idleTimeout` given) it also keeps the idle timeout: a connection that
/// holds no request for `idleTimeout` is closed, and so is one whose request's body stops coming
/// for as long; a client still reading the last answer (the kernel took more of its bytes from NIO
/// since the last check) is not idle, so a slow client gets a large answer whole, and one that
/// stops reading it is closed one to two idle timeouts later (two, when it read nothing). (Over TLS, Hummingbird keeps it: the handler sees only encrypted bytes.) It keeps
/// it rather than Hummingbird because `LongPollHandler` answers long polls in front of Hummingbird,
/// which never sees them.
///
/// Over HTTP/2 a connection carries many requests: once its first stream opens, the head timer
/// stops for good, and the handler closes the connection when it has had no open stream for
/// `multiplexedIdleTimeout`, whether or not the client answers the HTTP/2 channel's own goodbye.
///
/// It also tells `IdleConnections` when its connection holds no request (from its start, and once
/// each last answer's bytes are written to the socket) and when it holds one (a head came whole, an
/// HTTP/2 stream opened), so that a server at its cap closes the connection idle longest to make room.
///
/// A close from behind it — Hummingbird's after the last answer of a graceful shutdown, or of a
/// client that closed its side (a close of the output) — waits until the bytes NIO still holds for
/// the connection are written: a close drops them, which would cut an answer larger than the
/// socket's buffers. Each idle timeout (over TLS, `multiplexedIdleTimeout`, after the TLS
/// handler's own wait for the client's goodbye) it checks that the kernel took some of the bytes
/// since the last check, and closes the connection, whole, when it took none: one to two timeouts
/// after the client stops reading, two when it reads nothing at all. Once a graceful shutdown began
/// (`ChannelShouldQuiesceEvent`), the handler checks every connection that holds bytes the same way,
/// and closes one whose client stopped reading: an event stream or answer whose client stopped would
/// otherwise hold the shutdown for ever. (Over HTTP/2 a stream that waits for the client's flow
/// control holds no bytes here, and is not closed so.) There is no cap on the whole: a client that
/// keeps reading keeps its connection, as with nginx's `send_timeout`. The handler's own closes (the timeouts, a client that hung up, room for a new
/// connection) are at once.
final class HeaderTimeoutHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    /// What the `Observer` (and `LongPollHandler`) tell the handler.
    enum Event {
        /// A request head is complete: stop the timer.
        case headReceived
        /// The bytes of a head are there, not all of them yet (`LongPollHandler`, which tells
        /// when it answered a request during the read that brought them).
        case headIncomplete
        /// A request is read whole (its body, if any, came to its end).
        case requestRead
        /// A request without a body is read whole (`LongPollHandler`'s polls): `headReceived` and
        /// `requestRead` at once.
        case requestReceived
        /// Every request so far is answered: the next byte starts a new head.
        case awaitingHead
        /// The last answer's last bytes are written to the connection.
        case answerWritten
        /// An HTTP/2 stream of the connection opened.
        case streamOpened
        /// An HTTP/2 stream of the connection closed.
        case streamClosed
        /// A request of the connection waits for what to answer (a long poll, an event stream):
        /// a client that closes its side meanwhile has hung up, and the connection is closed.
        case waitingAnswer
        /// That request's wait is over.
        case answerReady
    }

    private let timeout: TimeAmount
    private let idleTimeout: TimeAmount?
    private let armedAtConnect: Bool
    private let multiplexedIdleTimeout: TimeAmount
    private var awaitingHead = true
    /// Between a head and the end of its request's body.
    private var bodyComing = false
    /// While a read goes through the handlers behind, and whether a request was answered meanwhile
    /// (what is left of the read is then not known to be a head: `headIncomplete` says so).
    private var reading = false
    private var answeredInRead = false
    private var multiplexed = false
    private var openStreams = 0
    /// When the connection is closed unless the timer is cancelled first (`nil`: not armed), and
    /// the task that checks it. Cancelling clears the deadline only: the task, if it runs, finds
    /// nothing due, so a head costs no removal from the event loop's timers (a linear search
    /// among every connection's), only a task once per timeout while heads keep coming.
    private var deadline: NIODeadline?
    /// Whether `deadline` is the idle timeout's (the head's otherwise).
    private var deadlineIsIdle = false
    private var timer: (task: Scheduled<Void>, at: NIODeadline)?
    /// Requests waiting for what to answer, and whether the client closed its side.
    private var waitingAnswers = 0
    private var inputClosed = false
    private let idleConnections: IdleConnections?
    /// Closes the connection from this handler, in front of TLS (a closing TLS connection would
    /// wait for its peer's goodbye): how `idleConnections` makes room.
    private var closeForRoom: (@Sendable () -> Void)?
    /// A close from behind that waits for the bytes before it to be written, when it is checked
    /// next, and how many bytes NIO had handed to the kernel at the last check.
    private var closing: (mode: CloseMode, promise: EventLoopPromise<Void>?, limit: Scheduled<Void>, held: Int?)?
    /// How many bytes NIO had handed to the kernel when the idle timeout last came (`nil`: no
    /// check since it was armed).
    private var heldAtIdleCheck: Int?
    /// Once a graceful shutdown began: the next check that the client reads what is written to
    /// it, and how many bytes NIO had handed to the kernel at the last one.
    private var shutdownCheck: (task: Scheduled<Void>, held: Int?)?
    /// The bytes written to the connection so far (through this handler, the one nearest it).
    private var bytesOut = 0

    init(
        timeout: TimeAmount, idleTimeout: TimeAmount? = nil, armedAtConnect: Bool = false, multiplexedIdleTimeout: TimeAmount = .seconds(60),
        idleConnections: IdleConnections? = nil
    ) {
        self.timeout = timeout
        self.idleTimeout = idleTimeout
        self.armedAtConnect = armedAtConnect
        self.multiplexedIdleTimeout = multiplexedIdleTimeout
        self.idleConnections = idleConnections
    }

    func handlerAdded(context: ChannelHandlerContext) {
        guard context.channel.isActive else { return }
        armAtConnect(context)
        reportIdle(context)
    }

    func channelActive(context: ChannelHandlerContext) {
        armAtConnect(context)
        reportIdle(context)
        context.fireChannelActive()
    }

    private func armAtConnect(_ context: ChannelHandlerContext) {
        if armedAtConnect {
            arm(context, timeout)
        } else if let idleTimeout {
            armIdle(context, idleTimeout)
        }
    }

    /// Tells `idleConnections` that the connection holds no request now.
    private func reportIdle(_ context: ChannelHandlerContext) {
        guard let idleConnections, context.channel.isActive else { return }
        let close: @Sendable () -> Void
        if let closeForRoom {
            close = closeForRoom
        } else {
            let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
            close = { bound.eventLoop.execute { bound.value.close(promise: nil) } }
            closeForRoom = close
        }
        idleConnections.idle(context.channel, close: close)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // The decoder behind reports a complete head while it reads these bytes (`headReceived`),
        // so the timer is armed only when they leave a head incomplete: a request whose head comes
        // in one read, as nearly all do, costs no timer.
        reading = true
        answeredInRead = false
        context.fireChannelRead(data)
        reading = false
        guard context.channel.isActive else { return }
        if awaitingHead, !multiplexed, !answeredInRead, !bodyComing {
            armHead(context)
        } else if bodyComing, let idleTimeout {
            cancelTimer()
            armIdle(context, idleTimeout)
        }
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard let event = event as? Event else {
            context.triggerUserOutboundEvent(event, promise: promise)
            return
        }
        switch event {
        case .headReceived, .requestReceived:
            awaitingHead = false
            bodyComing = event == .headReceived
            cancelTimer()
            if bodyComing, let idleTimeout { armIdle(context, idleTimeout) }
            idleConnections?.busy(context.channel)
        case .headIncomplete:
            if awaitingHead, !multiplexed { armHead(context) }
        case .requestRead:
            bodyComing = false
            if deadlineIsIdle { cancelTimer() }
            // Answered before its body was all read (a refusal): idle from now. What follows the
            // body in this read is not known to be a head (the idle timeout times it).
            if awaitingHead, let idleTimeout, !multiplexed {
                armIdle(context, idleTimeout)
                if reading { answeredInRead = true }
            }
        case .awaitingHead:
            awaitingHead = true
            if reading { answeredInRead = true }
            if let idleTimeout, !multiplexed {
                cancelTimer()
                armIdle(context, idleTimeout)
            }
        case .answerWritten:
            // Idle, unless a next request's head came whole meanwhile (a head still coming counts
            // as idle, as a connection's first does); the idle time starts again now that the
            // answer is all with the kernel, which a slow client may still be reading.
            if awaitingHead {
                reportIdle(context)
                if deadlineIsIdle, deadline != nil, let idleTimeout, !multiplexed {
                    deadline = context.eventLoop.now + idleTimeout
                    scheduleCheck(context)
                }
            }
        case .streamOpened:
            multiplexed = true
            openStreams += 1
            cancelTimer()
            idleConnections?.busy(context.channel)
        case .streamClosed:
            openStreams = max(0, openStreams - 1)
            if openStreams == 0 {
                arm(context, multiplexedIdleTimeout)
                reportIdle(context)
            }
        case .waitingAnswer:
            waitingAnswers += 1
            if inputClosed { context.close(promise: nil) }
        case .answerReady:
            waitingAnswers = max(0, waitingAnswers - 1)
        }
        promise?.succeed()
    }

    /// A client that closes its side while a request waits has hung up: the connection is closed
    /// (which ends the wait and frees its place). Hummingbird keeps a half-closed connection open
    /// for the answers of requests that do not wait.
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent, shutdownCheck == nil { scheduleShutdownCheck(context) }
        if case ChannelEvent.inputClosed = event {
            inputClosed = true
            if waitingAnswers > 0 {
                context.close(promise: nil)
                return
            }
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        stopTimer()
        shutdownCheck?.task.cancel()
        shutdownCheck = nil
        idleConnections?.busy(context.channel)
        closeForRoom = nil
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        stopTimer()
        closing?.limit.cancel()
        shutdownCheck?.task.cancel()
        shutdownCheck = nil
        idleConnections?.busy(context.channel)
        // It holds the context, which holds this handler.
        closeForRoom = nil
    }

    /// Closes the connection after `delay`, unless the timer is cancelled first; a timer already
    /// running is left as it is.
    private func arm(_ context: ChannelHandlerContext, _ delay: TimeAmount) {
        guard deadline == nil else { return }
        deadline = context.eventLoop.now + delay
        deadlineIsIdle = false
        scheduleCheck(context)
    }

    /// Starts the head's timer: the first bytes of a head end the idle time.
    private func armHead(_ context: ChannelHandlerContext) {
        if deadlineIsIdle { deadline = nil }
        arm(context, timeout)
    }

    /// Closes the connection after `delay` of idleness, unless the timer is cancelled first; a
    /// timer already running is left as it is.
    private func armIdle(_ context: ChannelHandlerContext, _ delay: TimeAmount) {
        if deadline == nil { heldAtIdleCheck = nil }
        arm(context, delay)
        deadlineIsIdle = true
    }

    /// What the bytes NIO holds for the connection did since the last check.
    private enum Writes {
        /// None are held.
        case none
        /// The client reads them: the kernel took some of the connection's bytes from NIO since
        /// the last check (or some are held, and there was no check).
        case moving
        /// Some are held, and the kernel took none since the last check.
        case stalled
    }

    /// What the bytes NIO holds for the connection did since the last check (`mark`: how many
    /// bytes of the connection NIO had handed to the kernel then, which this check updates).
    /// Progress is counted in bytes handed over, not held, so that what is written meanwhile (the
    /// rest of an event stream, pipelined answers) does not look like a client that stopped.
    private func writes(_ context: ChannelHandlerContext, mark: inout Int?) -> Writes {
        let held = (try? context.channel.syncOptions?.getOption(.bufferedWritableBytes)) ?? 0
        let sent = bytesOut - held
        defer { mark = sent }
        guard held > 0 else { return .none }
        guard let last = mark else { return .moving }
        return sent > last ? .moving : .stalled
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        bytesOut &+= unwrapOutboundIn(data).readableBytes
        context.write(data, promise: promise)
    }

    /// Whether the client is reading an answer still being written (see `writes(_:mark:)`).
    private func clientIsReading(_ context: ChannelHandlerContext, mark: inout Int?) -> Bool {
        guard writes(context, mark: &mark) == .moving else { return false }
        idleConnections?.noteReading()
        return true
    }

    /// After a graceful shutdown began, checks every idle timeout that the client reads what the
    /// server still writes to it, and closes the connection when it does not: a request still at
    /// work, or an answer the client reads, keeps it open; an event stream or answer whose client
    /// stopped reading would hold the shutdown for ever.
    private func scheduleShutdownCheck(_ context: ChannelHandlerContext) {
        let task = context.eventLoop.assumeIsolated().scheduleTask(in: idleTimeout ?? multiplexedIdleTimeout) {
            guard self.shutdownCheck != nil, context.channel.isActive else { return }
            if self.writes(context, mark: &self.shutdownCheck!.held) == .stalled {
                self.shutdownCheck = nil
                context.close(promise: nil)
            } else {
                self.scheduleShutdownCheck(context)
            }
        }
        shutdownCheck = (task, shutdownCheck?.held)
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        // A close of the output waits for the bytes held while the input is open, but drops them
        // when the client closed its side (NIO then closes the whole connection).
        let dropsWrites = mode == .all || mode == .output
        if dropsWrites, closing != nil {
            // Another close from behind while one waits: a whole close takes its place; either is
            // done when the connection is closed.
            if mode == .all { closing?.mode = .all }
            if let promise { context.channel.closeFuture.cascade(to: promise) }
            return
        }
        guard dropsWrites, context.channel.isActive,
            let buffered = try? context.channel.syncOptions?.getOption(.bufferedWritableBytes), buffered > 0
        else { return context.close(mode: mode, promise: promise) }
        // An empty write after the bytes held: NIO completes writes in order.
        let written = context.eventLoop.makePromise(of: Void.self)
        closing = (mode, promise, scheduleHoldCheck(context), nil)
        written.futureResult.assumeIsolated().whenComplete { _ in self.closeHeld(context) }
        context.writeAndFlush(wrapOutboundOut(.byteBuffer(ByteBuffer())), promise: written)
    }

    /// The check, an idle timeout from now, that closes the connection whose close waits unless
    /// its client read some of the bytes meanwhile (then it checks again later).
    private func scheduleHoldCheck(_ context: ChannelHandlerContext) -> Scheduled<Void> {
        context.eventLoop.assumeIsolated().scheduleTask(in: idleTimeout ?? multiplexedIdleTimeout) {
            guard self.closing != nil else { return }
            if self.clientIsReading(context, mark: &self.closing!.held) {
                self.closing?.limit = self.scheduleHoldCheck(context)
            } else {
                // Whole: a close of the output would wait for the bytes again, without end.
                self.closing?.mode = .all
                self.closeHeld(context)
            }
        }
    }

    /// Closes the connection whose close waited, once (or, when it closed meanwhile, completes
    /// the close's promise).
    private func closeHeld(_ context: ChannelHandlerContext) {
        guard let (mode, promise, limit, _) = closing else { return }
        closing = nil
        limit.cancel()
        if context.channel.isActive {
            context.close(mode: mode, promise: promise)
        } else if let promise {
            context.channel.closeFuture.cascade(to: promise)
        }
    }

    /// Schedules the task that closes the connection at `deadline` (unless one is scheduled for
    /// that time or sooner).
    private func scheduleCheck(_ context: ChannelHandlerContext) {
        guard let deadline else { return }
        if let timer, timer.at <= deadline { return }
        timer?.task.cancel()
        let task = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) {
            self.timer = nil
            guard let due = self.deadline else { return }
            if due <= context.eventLoop.now {
                // Idle, unless the client is still reading the last answer: then idle from now.
                if self.deadlineIsIdle, let idleTimeout = self.idleTimeout, self.clientIsReading(context, mark: &self.heldAtIdleCheck) {
                    self.deadline = context.eventLoop.now + idleTimeout
                    self.scheduleCheck(context)
                } else {
                    context.close(promise: nil)
                }
            } else {
                self.scheduleCheck(context)
            }
        }
        timer = (task, deadline)
    }

    private func cancelTimer() {
        deadline = nil
    }

    /// Cancels the scheduled task too (the connection is gone: its task must not keep it).
    private func stopTimer() {
        deadline = nil
        timer?.task.cancel()
        timer = nil
    }

    /// Behind the HTTP decoder: reports complete heads and answered requests to the
    /// `HeaderTimeoutHandler` in front of it. On an HTTP/2 stream it tells the connection that a
    /// stream opened, and when it closes (however it ends).
    final class Observer: ChannelDuplexHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPRequestPart
        typealias InboundOut = HTTPRequestPart
        typealias OutboundIn = HTTPResponsePart
        typealias OutboundOut = HTTPResponsePart

        private var unanswered = 0
        private var streamReported = false

        /// The connection `channel` is a stream of, when it is an HTTP/2 stream: a connection's
        /// parent is the listening channel, which has none, and a stream's is its connection.
        static func multiplexingConnection(of channel: any Channel) -> (any Channel)? {
            guard let parent = channel.parent, parent.parent != nil else { return nil }
            return parent
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            if case .head = unwrapInboundIn(data) {
                if let connection = Self.multiplexingConnection(of: context.channel) {
                    if !streamReported {
                        streamReported = true
                        connection.pipeline.triggerUserOutboundEvent(Event.streamOpened, promise: nil)
                        context.channel.closeFuture.whenComplete { _ in
                            connection.pipeline.triggerUserOutboundEvent(Event.streamClosed, promise: nil)
                        }
                    }
                    return context.fireChannelRead(data)
                }
                unanswered += 1
                context.triggerUserOutboundEvent(Event.headReceived, promise: nil)
            } else if case .end = unwrapInboundIn(data), Self.multiplexingConnection(of: context.channel) == nil {
                context.triggerUserOutboundEvent(Event.requestRead, promise: nil)
            }
            context.fireChannelRead(data)
        }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            guard case .end = unwrapOutboundIn(data), Self.multiplexingConnection(of: context.channel) == nil else {
                return context.write(data, promise: promise)
            }
            unanswered -= 1
            guard unanswered == 0 else { return context.write(data, promise: promise) }
            context.triggerUserOutboundEvent(Event.awaitingHead, promise: nil)
            // Once the answer's last bytes are written to the socket, the connection holds nothing
            // of a request any more (closed for room before that, a slow reader would lose them).
            let written = promise ?? context.eventLoop.makePromise(of: Void.self)
            written.futureResult.assumeIsolated().whenComplete { _ in
                context.triggerUserOutboundEvent(Event.answerWritten, promise: nil)
            }
            context.write(data, promise: written)
        }
    }
}

@available(*, unavailable)
extension HeaderTimeoutHandler: Sendable {}

@available(*, unavailable)
extension HeaderTimeoutHandler.Observer: Sendable {}
