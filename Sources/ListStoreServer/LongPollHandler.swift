import HTTPTypes
import ListStoreCore
import ListStoreWire
import Logging
import NIOCore
import NIOHTTPTypes

/// Takes the long polls of plain HTTP/1.1 connections in front of the HTTP decoder, on the
/// connection's event loop, and hands them to `LongPollFanout`, which answers them: at once when
/// the list is past their version (from the page the polls of that version share), when a commit
/// passes them, or when their time is up. Every other request goes on to Hummingbird.
///
/// The handler reads each request head from the connection's bytes (`PlainRequestHead`) and takes
/// a poll only when the route would answer it the same way: a `GET /v1/lists/{list}/journal` whose
/// query holds only `since`, `limit`, `wait` and `maxBytes`, each once, in plain digits, and valid
/// (`JournalQuery`), with a `since` and a `wait`; one `Host`, which the server allows, and no
/// `Origin` (`OriginPolicyMiddleware`); no `Connection` header but `Connection: keep-alive`; a
/// token known at once that may read the list (`AccessMiddleware.identify(_:)`: the service token,
/// or a user's token the route verified before); a version at or behind the list's head as the
/// last read of the heads found it (see `LongPollFanout.take(_:deadline:on:answer:)`). Its answer is written as the route's is,
/// byte for byte: its status and body (a poll behind the head may get a page kept since the store
/// last learned of a commit), `Content-Type: application/json`, `Date`, `Server`, and
/// `Vary: Origin` when the server allows origins; the metrics and the request log count it under
/// the route (`RequestMetricsMiddleware`; a poll whose client hung up as 499).
///
/// Any other whole head without a body goes on to the decoder, its bytes alone, and the handler
/// waits for Hummingbird's answer (`HeaderTimeoutHandler.Event.awaitingHead`) before it reads the
/// next request. A head that is not plainly written, or that has a body or changes the protocol,
/// goes on with everything behind it, and the connection is Hummingbird's from then on. So the
/// decoder only ever sees whole requests from their first byte, and the answers keep the requests'
/// order (HTTP/1.1 pipelining); while a request waits for its answer with others behind it, the
/// handler reads no more of the connection.
///
/// The handler keeps the connection's other rules for the polls it takes: it tells the
/// `HeaderTimeoutHandler` in front of it when a head is whole, when a poll waits, and when its
/// answer is written, so the header and idle timeouts, a client that hangs up (its poll's place is
/// freed at once), and `IdleConnections` treat the poll as a request in progress; a graceful
/// shutdown (`ChannelShouldQuiesceEvent`) reaches Hummingbird, which closes the connection, once the
/// poll waiting is answered (the fan-out answers every poll with the empty page then); the close
/// then waits for the answers' bytes (`HeaderTimeoutHandler`).
///
/// TLS connections (HTTP/2, or HTTP/1.1 chosen by ALPN) are not taken: Hummingbird answers all
/// their requests.
///
/// ```swift
/// try channel.pipeline.syncOperations.addHandler(LongPollHandler(intake), position: .after(headerTimeout))
/// ```
final class LongPollHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    /// What the handlers of every connection share: the server's rules and the fan-out.
    struct Intake: Sendable {
        let fanout: LongPollFanout
        let configuration: JournalServer.Configuration
        let access: AccessMiddleware
        let origins: OriginPolicyMiddleware<ServerRequestContext>
        let metrics: ServerMetrics
        let logger: Logger
    }

    /// The route's label in the metrics.
    static let route = "/v1/lists/{list}/journal"
    /// The longest head the handler reads; a longer one goes on to the decoder.
    static let headLimit = 16_384

    /// Who reads the connection's requests.
    private enum Reader {
        /// This handler, one request at a time.
        case handler
        /// Hummingbird, for the request handed on last, until it is answered.
        case route
        /// Hummingbird, for good.
        case hummingbird
    }

    private let intake: Intake
    private var reader = Reader.handler
    /// The bytes read and not yet taken or handed on.
    private var pending: ByteBuffer?
    /// The poll taken: its id in the fan-out while it waits for its answer, and when it came.
    private var held: UInt64?
    private var heldSince = ContinuousClock.now
    /// Whether a read was held back, and a graceful shutdown held back while a poll waits.
    private var readPending = false
    private var heldQuiesce: Any?
    /// How many of the pending bytes were searched for the end of a head, in vain.
    private var searched = 0
    /// Whether bytes went on to Hummingbird since the end of the last read, which it then needs.
    private var handedOn = false
    private var context: ChannelHandlerContext?
    /// The answers handed to this connection's event loop, run at the end of each read (see
    /// `LoopDeliveries`).
    private var deliveries: LoopDeliveries?

    init(_ intake: Intake) {
        self.intake = intake
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        deliveries = intake.fanout.deliveries(to: context.eventLoop)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        release()
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard reader != .hummingbird else { return context.fireChannelRead(data) }
        var bytes = unwrapInboundIn(data)
        if pending == nil {
            pending = bytes
        } else {
            pending!.writeBuffer(&bytes)
        }
        takeRequests(context: context, reading: true)
    }

    /// Takes the polls among the pending requests, one after another, until one waits, one goes
    /// to Hummingbird, or the rest is not a whole head yet.
    private func takeRequests(context: ChannelHandlerContext, reading: Bool) {
        // A client that does not read its answers gets no more of them (and nothing more is read)
        // until the connection can take them again.
        requests: while reader == .handler, held == nil, context.channel.isWritable, let buffer = pending, buffer.readableBytes > 0 {
            // A head is read once its end may be there, or a byte that spoils it (or once it is as
            // long as a head may be): a head that trickles in costs each byte once, not once a read.
            let parsed: PlainRequestHead.Parsed =
                if buffer.readableBytes < Self.headLimit, !buffer.withUnsafeReadableBytes({ PlainRequestHead.mayEnd($0, from: searched) }) {
                    .incomplete
                } else {
                    buffer.withUnsafeReadableBytes { PlainRequestHead.parse($0, limit: Self.headLimit) }
                }
            switch parsed {
            case .incomplete:
                // More is to come: the header timeout times it.
                searched = buffer.readableBytes
                context.triggerUserOutboundEvent(HeaderTimeoutHandler.Event.headIncomplete, promise: nil)
                break requests
            case .unsupported:
                handOnEverything(context: context, reading: reading)
                break requests
            case .head(let head):
                searched = 0
                if head.needsTheFramework {
                    handOnEverything(context: context, reading: reading)
                    break requests
                }
                if let (key, deadline, access) = poll(head) {
                    let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
                    if let taken = intake.fanout.take(key, deadline: deadline, on: context.eventLoop, access: access, answer: { bound.value.answer($0) }) {
                        pending!.moveReaderIndex(forwardBy: head.length)
                        heldSince = .now
                        context.triggerUserOutboundEvent(HeaderTimeoutHandler.Event.requestReceived, promise: nil)
                        if intake.logger.logLevel <= .info {
                            intake.logger.info("Request", metadata: ["hb.request.path": "\(head.target)", "hb.request.method": "GET"])
                        }
                        switch taken {
                        case .answer(let page):
                            write(.page(page), context: context)
                        case .held(let id):
                            held = id
                            context.triggerUserOutboundEvent(HeaderTimeoutHandler.Event.waitingAnswer, promise: nil)
                        }
                        continue
                    }
                }
                // The route answers it; what follows waits for its answer.
                let request = pending!.readSlice(length: head.length)!
                reader = .route
                handOn(request, context: context, reading: reading)
            }
        }
        if pending?.readableBytes == 0 { pending = nil }
        if readPending, !holdsReads {
            readPending = false
            context.read()
        }
    }

    /// Hands every pending byte on to Hummingbird, which reads the connection from now on.
    private func handOnEverything(context: ChannelHandlerContext, reading: Bool) {
        reader = .hummingbird
        searched = 0
        if let bytes = pending {
            pending = nil
            // A head that is not whole is the header timeout's (the decoder reports one that is).
            context.triggerUserOutboundEvent(HeaderTimeoutHandler.Event.headIncomplete, promise: nil)
            handOn(bytes, context: context, reading: reading)
        }
        if readPending {
            readPending = false
            context.read()
        }
    }

    /// Hands `bytes` on to Hummingbird, which takes what it was handed at the end of a read (the
    /// read's own end, or one made here).
    private func handOn(_ bytes: ByteBuffer, context: ChannelHandlerContext, reading: Bool) {
        context.fireChannelRead(wrapInboundOut(bytes))
        if reading {
            handedOn = true
        } else {
            context.fireChannelReadComplete()
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        // A read whose requests were all taken here is nothing to the handlers behind.
        if handedOn || reader == .hummingbird {
            handedOn = false
            context.fireChannelReadComplete()
        }
        // The answers of other connections of this loop (this one's too) that a page read or a
        // commit woke meanwhile: written now, not after the rest of the loop's batch of sockets.
        deliveries?.run()
    }

    /// The page a request asks, when its wait ends, and for a user's token the token and the
    /// generation of the access rules under which it may read the list, when it is a long poll this
    /// handler may take (see the type's overview); `nil` otherwise.
    private func poll(_ head: PlainRequestHead) -> (JournalPages.Key, ContinuousClock.Instant, (token: AccessToken, generation: UInt64)?)? {
        guard head.method == "GET", !head.hasRouteFields, let authority = head.host,
            let (segment, query) = Self.journalTarget(head.target[...].utf8)
        else { return nil }
        guard let list = PercentEncoding.decode(String(Substring(segment))), (try? _Names.checkList(list)) != nil else { return nil }
        // Only plainly written parameters (digits, nothing to decode), each once, and no others.
        var values: [Substring?] = [nil, nil, nil, nil, nil]
        for pair in query.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: false) {
            guard let equals = pair.firstIndex(of: UInt8(ascii: "=")) else { return nil }
            let value = pair[pair.index(after: equals)...]
            guard let slot = Self.parameters.firstIndex(where: { $0.elementsEqual(pair[..<equals]) }), values[slot] == nil,
                !value.isEmpty, value.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
            else { return nil }
            values[slot] = Substring(value)
        }
        guard let query = try? JournalQuery(
            since: values[0], limit: values[1], wait: values[2], maxBytes: values[3], maxEntryBytes: values[4],
            configuration: intake.configuration),
            query.since != nil, query.wait > 0
        else { return nil }
        // The rules read first: a poll taken under rules replaced meanwhile is the route's.
        let (access, generation) = intake.access.state.accessInForce
        guard intake.origins.isAllowedRemembering(host: authority),
            case .known(let identity) = intake.access.identify(head.authorization),
            let grant = JournalRoutes.grant(on: list, to: identity, access: access), grant >= .read
        else { return nil }
        // A user's long poll ends when its token does: the client asks again with a fresh one.
        var wait = Duration.seconds(query.wait)
        guard case .user(let token) = identity else { return (query.page(of: list), .now + wait, nil) }
        wait = min(wait, token.lifetime())
        return (query.page(of: list), .now + wait, (token, generation))
    }

    /// The query parameters a poll taken may have, in the order of `poll`'s values.
    private static let parameters = ["since", "limit", "wait", "maxBytes", "maxEntryBytes"].map { Array($0.utf8) }

    /// The list's segment and the query of a request target `/v1/lists/{segment}/journal?{query}`
    /// (`nil` for any other target).
    /// - Complexity: O(length of the target).
    static func journalTarget(_ target: Substring.UTF8View) -> (segment: Substring.UTF8View, query: Substring.UTF8View)? {
        let prefix = "/v1/lists/".utf8, suffix = "/journal".utf8
        let question = target.firstIndex(of: UInt8(ascii: "?")) ?? target.endIndex
        let path = target[..<question]
        guard path.starts(with: prefix), path.count > prefix.count + suffix.count, path.reversed().starts(with: suffix.reversed()) else { return nil }
        let segment = path.dropFirst(prefix.count).dropLast(suffix.count)
        guard !segment.contains(UInt8(ascii: "/")) else { return nil }
        let query = question == target.endIndex ? target[target.endIndex...] : target[target.index(after: question)...]
        return (segment, query)
    }

    /// Writes the answer of the poll held (on the event loop), then goes on with the requests that
    /// came behind it.
    private func answer(_ answer: LongPollFanout.Answer) {
        guard let context, held != nil else { return }
        held = nil
        context.triggerUserOutboundEvent(HeaderTimeoutHandler.Event.answerReady, promise: nil)
        write(answer, context: context)
        if let event = heldQuiesce {
            // The shutdown's turn: Hummingbird answers the requests that came behind the poll, if
            // any, and closes the connection.
            heldQuiesce = nil
            handOnEverything(context: context, reading: false)
            return context.fireUserInboundEventTriggered(event)
        }
        takeRequests(context: context, reading: false)
    }

    /// Writes `answer` as the route would, in one write: the head, `200` and the page or the
    /// error, then the body.
    private func write(_ answer: LongPollFanout.Answer, context: ChannelHandlerContext) {
        let status: HTTPResponse.Status
        let body: ByteBuffer
        var head = context.channel.allocator.buffer(capacity: 192)
        switch answer {
        case .page(let page):
            (status, body) = (.ok, page)
            head.writeStaticString("HTTP/1.1 200 OK\r\n")
        case .error(let error):
            (status, body) = (error.status, ByteBuffer(bytes: error.body))
            head.writeString("HTTP/1.1 \(status.code) \(status.reasonPhrase)\r\n")
            for field in error.headers where field.name != .contentType {
                head.writeString("\(field.name.rawName): \(field.value)\r\n")
            }
        }
        head.writeStaticString("Content-Type: application/json\r\nContent-Length: ")
        head.writeString(String(body.readableBytes))
        if !intake.configuration.allowedOrigins.isEmpty { head.writeStaticString("\r\nVary: Origin") }
        head.writeStaticString("\r\nDate: ")
        head.writeString(HTTPDate.now())
        head.writeStaticString("\r\nServer: ")
        head.writeString(JournalServer.serverName)
        head.writeStaticString("\r\n\r\n")
        // The connection holds no request once the answer's bytes are written (`IdleConnections`).
        context.triggerUserOutboundEvent(HeaderTimeoutHandler.Event.awaitingHead, promise: nil)
        let written = context.eventLoop.makePromise(of: Void.self)
        written.futureResult.assumeIsolated().whenComplete { _ in
            context.triggerUserOutboundEvent(HeaderTimeoutHandler.Event.answerWritten, promise: nil)
        }
        context.write(wrapOutboundOut(.byteBuffer(head)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.byteBuffer(body)), promise: written)
        intake.metrics.recordRequest(method: "GET", route: Self.route, status: Int(status.code), duration: .now - heldSince)
    }

    /// Whether reads wait: a request waits for its answer with others behind it, or the
    /// connection cannot take the answers of more.
    private var holdsReads: Bool {
        if reader == .handler, context?.channel.isWritable == false { return true }
        return (held != nil || reader == .route) && (pending?.readableBytes ?? 0) > 0
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if reader == .handler, context.channel.isWritable { takeRequests(context: context, reading: false) }
        context.fireChannelWritabilityChanged()
    }

    func read(context: ChannelHandlerContext) {
        if holdsReads {
            readPending = true
        } else {
            context.read()
        }
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        if reader == .route, case .awaitingHead? = event as? HeaderTimeoutHandler.Event {
            // Hummingbird answered the request handed on: the rest of its answer is written right
            // after this event, and the handler reads the next request once it is.
            let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
            context.eventLoop.execute { bound.value.routeAnswered() }
        }
        context.triggerUserOutboundEvent(event, promise: promise)
    }

    private func routeAnswered() {
        guard let context, reader == .route else { return }
        reader = .handler
        takeRequests(context: context, reading: false)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent {
            intake.fanout.noteEnd()
            // No poll is taken from now on (the connection is Hummingbird's); one that waits is
            // answered first. The requests that came go to Hummingbird, which answers them before
            // it closes the connection.
            if held != nil {
                heldQuiesce = event
                return
            }
            handOnEverything(context: context, reading: false)
        } else if case .inputClosed? = event as? ChannelEvent, held == nil {
            // The client sends no more: what it sent goes to Hummingbird before the end of its
            // input, after which the decoder reads nothing. (One that closes its side while its
            // poll waits has hung up: `HeaderTimeoutHandler` closes the connection.)
            intake.fanout.noteEnd()
            handOnEverything(context: context, reading: false)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        release()
        context.fireChannelInactive()
    }

    /// Frees the poll held, if any (its connection is gone): counted as 499, a request whose
    /// client hung up (`RequestMetricsMiddleware`).
    private func release() {
        if let id = held {
            intake.fanout.release(id)
            intake.metrics.recordRequest(method: "GET", route: Self.route, status: 499, duration: .now - heldSince)
        }
        held = nil
        pending = nil
        searched = 0
        readPending = false
        heldQuiesce = nil
    }
}

@available(*, unavailable)
extension LongPollHandler: Sendable {}
