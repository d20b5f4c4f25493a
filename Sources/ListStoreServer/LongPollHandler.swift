import HTTPTypes
import ListStoreCore
import ListStoreWire
import Logging
import NIOCore
import NIOHTTPTypes

/// Takes the long polls of plain HTTP/1.1 connections beneath Hummingbird, on the connection's
/// event loop, and hands them to `LongPollFanout`, which answers them: at once when the list is
/// past their version (from the page the polls of that version share), when a commit passes them,
/// or when their time is up. Every other request goes on to Hummingbird untouched.
///
/// A poll is taken only when the route would answer it the same way: a `GET
/// /v1/lists/{list}/journal` whose query holds only `since`, `limit`, `wait` and `maxBytes`, each
/// once, in plain digits, and valid (`JournalQuery`), with a `since` and a `wait`; a `Host` the
/// server allows and no `Origin` (`OriginPolicyMiddleware`); no `Connection` header; a token known
/// at once that may read the list (`AccessMiddleware.identify(_:)`: the service token, or a
/// user's token the route verified before); a version at or behind the list's head as the last
/// read of the heads found it (see `LongPollFanout.take(_:deadline:on:answer:)`). When any of that
/// does not hold, or an earlier request of the connection is still Hummingbird's, the request goes
/// on and the route answers it. The answer is the route's: its status and body (a poll behind the
/// head may get a page kept since the store last learned of a commit), `Content-Type:
/// application/json`, `Date`, `Server`, and `Vary: Origin` when the server allows origins; the
/// metrics and the request log count it under the route (`RequestMetricsMiddleware`; a poll whose
/// client hung up as 499).
///
/// Requests the client sends behind a poll taken (HTTP/1.1 pipelining) wait for its answer, in
/// order; while any does, the handler reads no more of the connection. A client that hangs up
/// frees its poll's place at once; one that closes its side while its poll waits has hung up
/// (`HeaderTimeoutHandler`). It sits behind Hummingbird's `HTTPConnectionStateHandler`, which so
/// sees the polls as requests in progress: the idle timeout does not close a connection whose poll
/// waits, and a graceful shutdown closes the connection once its poll is answered (the fan-out
/// answers every poll with the empty page then).
///
/// TLS connections (HTTP/2, or HTTP/1.1 chosen by ALPN) are not taken: Hummingbird answers all
/// their requests.
///
/// ```swift
/// try channel.pipeline.syncOperations.addHandler(LongPollHandler(intake), position: .after(connectionState))
/// ```
final class LongPollHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

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

    private let intake: Intake
    /// Requests handed to Hummingbird and not answered yet.
    private var forwarded = 0
    /// The poll taken: its id in the fan-out while it waits for its answer, when it came, and
    /// whether its request's parts are still coming.
    private var held: UInt64?
    private var heldSince = ContinuousClock.now
    private var requestOpen = false
    /// Parts that came behind the poll, whether a read was asked for meanwhile, and an error of
    /// the connection (the decoder's) that came behind it.
    private var backlog: [HTTPRequestPart] = []
    private var readPending = false
    private var pendingError: (any Error)?
    private var context: ChannelHandlerContext?

    init(_ intake: Intake) {
        self.intake = intake
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        release()
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        if requestOpen && backlog.isEmpty {
            // The rest of the poll's request (a GET's body is not read).
            if case .end = part { requestOpen = false }
            return
        }
        if held != nil || !backlog.isEmpty {
            backlog.append(part)
            return
        }
        take(part, context: context)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // Behind a poll, an error (Hummingbird answers a parse error with 400 and closes) waits
        // for the poll's answer, as the requests before it do.
        guard held != nil || !backlog.isEmpty else { return context.fireErrorCaught(error) }
        if pendingError == nil { pendingError = error }
    }

    /// Takes the poll `part` begins, or hands `part` on to Hummingbird (and returns `true`).
    @discardableResult
    private func take(_ part: HTTPRequestPart, context: ChannelHandlerContext) -> Bool {
        guard case .head(let head) = part else {
            context.fireChannelRead(wrapInboundOut(part))
            return true
        }
        if forwarded == 0, let (key, deadline) = poll(head) {
            let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
            if let taken = intake.fanout.take(key, deadline: deadline, on: context.eventLoop, answer: { bound.value.answer($0) }) {
                heldSince = .now
                requestOpen = true
                if intake.logger.logLevel <= .info {
                    intake.logger.info("Request", metadata: ["hb.request.path": "\(head.path ?? "")", "hb.request.method": "GET"])
                }
                switch taken {
                case .answer(let page):
                    write(.page(page), context: context)
                case .held(let id):
                    held = id
                    context.triggerUserOutboundEvent(HeaderTimeoutHandler.Event.waitingAnswer, promise: nil)
                }
                return false
            }
        }
        forwarded += 1
        context.fireChannelRead(wrapInboundOut(part))
        return true
    }

    /// The page a request asks and when its wait ends, when it is a long poll this handler may
    /// take (see the type's overview); `nil` otherwise.
    private func poll(_ head: HTTPRequest) -> (JournalPages.Key, ContinuousClock.Instant)? {
        guard head.method == .get, let target = head.path, let authority = head.authority, head.headerFields[.origin] == nil,
            head.headerFields[.connection] == nil, let (segment, query) = Self.journalTarget(target[...].utf8)
        else { return nil }
        guard let list = PercentEncoding.decode(String(Substring(segment))), (try? _Names.checkList(list)) != nil else { return nil }
        // Only plainly written parameters (digits, nothing to decode), each once, and no others.
        var values: [Substring?] = [nil, nil, nil, nil]
        for pair in query.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: false) {
            guard let equals = pair.firstIndex(of: UInt8(ascii: "=")) else { return nil }
            let value = pair[pair.index(after: equals)...]
            guard let slot = Self.parameters.firstIndex(where: { $0.elementsEqual(pair[..<equals]) }), values[slot] == nil,
                !value.isEmpty, value.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
            else { return nil }
            values[slot] = Substring(value)
        }
        guard let query = try? JournalQuery(
            since: values[0], limit: values[1], wait: values[2], maxBytes: values[3], configuration: intake.configuration),
            query.since != nil, query.wait > 0
        else { return nil }
        guard intake.origins.isAllowedRemembering(host: authority),
            case .known(let identity) = intake.access.identify(head.headerFields[.authorization]),
            let grant = JournalRoutes.grant(on: list, to: identity, access: intake.access.state.access), grant >= .read
        else { return nil }
        // A user's long poll ends when its token does: the client asks again with a fresh one.
        var wait = Duration.seconds(query.wait)
        if case .user(let token) = identity { wait = min(wait, .seconds(max(0, token.expiresAt.timeIntervalSinceNow))) }
        return (query.page(of: list), .now + wait)
    }

    /// The query parameters a poll taken may have, in the order of `poll`'s values.
    private static let parameters = ["since", "limit", "wait", "maxBytes"].map { Array($0.utf8) }

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
        drainBacklog(context: context)
    }

    /// Writes `answer` as the route would: 200 and the page, or the error.
    private func write(_ answer: LongPollFanout.Answer, context: ChannelHandlerContext) {
        var fields = HTTPFields()
        let status: HTTPResponse.Status
        let body: ByteBuffer
        switch answer {
        case .page(let page):
            (status, body) = (.ok, page)
        case .error(let error):
            fields = error.headers
            (status, body) = (error.status, ByteBuffer(bytes: error.body))
        }
        fields[.contentType] = "application/json"
        fields[.contentLength] = String(body.readableBytes)
        if !intake.configuration.allowedOrigins.isEmpty { fields[.vary] = "Origin" }
        fields[.date] = HTTPDate.now()
        fields[.server] = JournalServer.serverName
        context.write(wrapOutboundOut(.head(HTTPResponse(status: status, headerFields: fields))), promise: nil)
        context.write(wrapOutboundOut(.body(body)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        intake.metrics.recordRequest(method: "GET", route: Self.route, status: Int(status.code), duration: .now - heldSince)
    }

    /// Hands on, in order, the parts that came behind the poll (taking the next poll among them,
    /// if any), and reads again if a read was held back.
    private func drainBacklog(context: ChannelHandlerContext) {
        var handedOn = false
        while !backlog.isEmpty, held == nil || requestOpen {
            let part = backlog.removeFirst()
            if requestOpen {
                if case .end = part { requestOpen = false }
                continue
            }
            if take(part, context: context) { handedOn = true }
        }
        // Hummingbird takes what it was handed at the end of a read.
        if handedOn { context.fireChannelReadComplete() }
        if held == nil, backlog.isEmpty, let error = pendingError {
            pendingError = nil
            context.fireErrorCaught(error)
        }
        if readPending, held == nil || backlog.isEmpty {
            readPending = false
            context.read()
        }
    }

    func read(context: ChannelHandlerContext) {
        // Behind a poll, requests wait for its answer: read no more of them meanwhile.
        if held != nil && !backlog.isEmpty {
            readPending = true
        } else {
            context.read()
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { forwarded = max(0, forwarded - 1) }
        context.write(data, promise: promise)
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
        backlog = []
        readPending = false
        pendingError = nil
    }
}

@available(*, unavailable)
extension LongPollHandler: Sendable {}
