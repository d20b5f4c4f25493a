#if !canImport(Darwin)
import AsyncHTTPClient
import Foundation
import ListStore
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The requests of an `HTTPSource` off Apple platforms, through AsyncHTTPClient (on Apple
/// platforms `_URLSessionClient` carries them). On Linux, URLSession (swift-corelibs-foundation over
/// libcurl) keeps a core busy for as long as an answer streams in slowly, which an event stream at
/// the head always does (an idle follower used a whole core), and cannot be told of an authority.
/// It keeps `_HTTPTransfer`'s rules, an overall deadline, a request that fails once nothing has
/// arrived for the request's `timeoutInterval` (as URLSession's), and cancellation of the calling
/// task.
enum _NIOHTTPClient {
    /// Two clients per set of authorities (`nil`: the system's), for the process's life (as
    /// HTTPSource's two URLSessions): one for requests, whose connections to a server are reused
    /// (HTTP/2 when the server offers it), and one for event streams, each holding an HTTP/1.1
    /// connection of its own so that followers never take the streams other requests need (a
    /// server allows an HTTP/2 connection a hundred or so).
    private static let clients = _Locked([Key: HTTPClient]())

    private struct Key: Hashable {
        var authorities: HTTPSource.CertificateAuthorities?
        var streams: Bool
    }

    static func client(for authorities: HTTPSource.CertificateAuthorities?, streams: Bool) -> HTTPClient {
        clients.withLock { clients in
            let key = Key(authorities: authorities, streams: streams)
            if let client = clients[key] { return client }
            var tls = TLSConfiguration.makeClientConfiguration()
            if let authorities { tls.trustRoots = .certificates(authorities.nioCertificates) }
            var pool = HTTPClient.Configuration.ConnectionPool(
                idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: streams ? 4096 : 16)
            // A connection that fails fails its request at once, as URLSession's do: what is worth
            // trying again is the caller's (`RetryPolicy`), and an untrusted certificate is not.
            pool.retryConnectionEstablishment = false
            // No connect timeout of the client's own: as with URLSession's `timeoutInterval`, the
            // request's idle timeout (the silence `run` allows, from the request's start) bounds
            // the wait for a connection and its handshake too, so one rule says when a request
            // that gets nothing fails.
            var configuration = HTTPClient.Configuration(
                tlsConfiguration: tls, redirectConfiguration: .disallow, timeout: .init(connect: .hours(1)), connectionPool: pool)
            if streams { configuration.httpVersion = .http1Only }
            let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
            clients[key] = client
            return client
        }
    }

    /// Sends `request` as `transfer` says, within `deadline` (none when `nil`); returns the answer
    /// and its body (empty when it went to the transfer's stream).
    /// - Throws: `_HTTPTransfer.Stop`; `URLError` for what went wrong on the way (as URLSession
    ///   would name it); NIOSSL's error when the handshake fails; `CancellationError`.
    static func run(_ transfer: _HTTPTransfer, _ request: URLRequest, authorities: HTTPSource.CertificateAuthorities?, deadline: Duration?)
        async throws -> (HTTPURLResponse, Data)
    {
        let client = client(for: authorities, streams: transfer.isEventStream)
        let lastActivity = _Locked(ContinuousClock.now)
        do {
            return try await withThrowingTaskGroup(of: (HTTPURLResponse, Data).self) { group in
                group.addTask { try await exchange(transfer, request, client: client, lastActivity: lastActivity) }
                group.addTask { try await watch(request, lastActivity: lastActivity, end: deadline.map { ContinuousClock.now + $0 }) }
                defer { group.cancelAll() }
                return try await group.next()!
            }
        } catch {
            throw transportError(error)
        }
    }

    /// Fails (never returns) once `end` is past, or nothing went or came for the request's
    /// `timeoutInterval` since `lastActivity`: it sleeps until the earlier of the two, and looks again.
    private static func watch(_ request: URLRequest, lastActivity: _Locked<ContinuousClock.Instant>, end: ContinuousClock.Instant?) async throws
        -> (HTTPURLResponse, Data)
    {
        let idle = Duration.milliseconds(Int64(request.timeoutInterval * 1000))
        while true {
            let silentUntil = lastActivity.withLock { $0 } + idle
            if let end, ContinuousClock.now >= end { throw _HTTPTransfer.Stop.deadline }
            if ContinuousClock.now >= silentUntil { throw URLError(.timedOut) }
            try await Task.sleep(until: min(silentUntil, end ?? silentUntil) + .milliseconds(1), clock: .continuous)
        }
    }

    /// Sends `request` (its method, URL and headers) with a body of `length` bytes that `pieces`
    /// gives, each piece asked for once the connection has taken the one before (two at most in
    /// hand): the body streams, and nothing holds the whole of it. Returns the answer, its body
    /// collected up to `maxBytes`. No redirect is followed: the body went. An answer that comes
    /// before the body is all sent (the server had what it needed) ends the sending.
    /// - Throws: as `run`; `_HTTPTransfer.Stop.tooLarge` for a larger answer; `PiecesFailed` with what
    ///   `pieces` throws.
    static func upload<Pieces: AsyncSequence>(
        _ request: URLRequest, length: Int, pieces: Pieces, maxBytes: Int, authorities: HTTPSource.CertificateAuthorities?
    ) async throws -> (HTTPURLResponse, Data) where Pieces.Element == [UInt8] {
        guard let url = request.url else { throw URLError(.badURL) }
        let client = client(for: authorities, streams: false)
        let lastActivity = _Locked(ContinuousClock.now)
        // The connection taking more of the body is activity too.
        let demand = _Demand(lastActivity: lastActivity)
        let body = NIOThrowingAsyncSequenceProducer.makeSequence(
            elementType: ByteBuffer.self, backPressureStrategy: NIOAsyncSequenceProducerBackPressureStrategies.HighLowWatermark(lowWatermark: 1, highWatermark: 2),
            finishOnDeinit: false, delegate: demand)
        var outgoing = HTTPClientRequest(url: url.absoluteString)
        outgoing.method = HTTPMethod(rawValue: request.httpMethod ?? "PUT")
        for (name, value) in request.allHTTPHeaderFields ?? [:] { outgoing.headers.add(name: name, value: value) }
        outgoing.body = .stream(body.sequence, length: .known(Int64(length)))
        let sent = outgoing
        do {
            return try await withThrowingTaskGroup(of: (HTTPURLResponse, Data)?.self) { group in
                group.addTask {
                    // However the request ends, the body waits no more: an answer that comes before
                    // the body is all sent (a refusal, or a blob the list has), or a failure before
                    // the connection took any of it.
                    defer { demand.end() }
                    let response = try await client.execute(sent, deadline: .distantFuture)
                    lastActivity.withLock { $0 = .now }
                    var data = Data()
                    for try await buffer in response.body {
                        lastActivity.withLock { $0 = .now }
                        guard data.count + buffer.readableBytes <= maxBytes else { throw _HTTPTransfer.Stop.tooLarge }
                        data.append(contentsOf: buffer.readableBytesView)
                    }
                    let fields = Dictionary(response.headers.map { ($0.name, $0.value) }, uniquingKeysWith: { "\($0), \($1)" })
                    guard let http = HTTPURLResponse(url: url, statusCode: Int(response.status.code), httpVersion: nil, headerFields: fields) else {
                        throw URLError(.badServerResponse)
                    }
                    return (http, data)
                }
                group.addTask {
                    defer { demand.end() }
                    return try await watch(request, lastActivity: lastActivity, end: nil)
                }
                defer { group.cancelAll() }
                // The body, a piece at a time, here: `pieces` stays with the task that gave it.
                do {
                    sending: for try await piece in pieces {
                        lastActivity.withLock { $0 = .now }
                        // In slices of 64 KiB, so that a slow connection shows its progress often.
                        let slices = stride(from: 0, to: piece.count, by: 64 << 10).map { ByteBuffer(bytes: piece[$0..<min(piece.count, $0 + (64 << 10))]) }
                        switch body.source.yield(contentsOf: slices) {
                        case .produceMore: continue
                        case .stopProducing: if try await !demand.wait() { break sending }
                        case .dropped: break sending
                        }
                    }
                    body.source.finish()
                } catch {
                    body.source.finish(error)
                    throw PiecesFailed(error: error)
                }
                while let answer = try await group.next() {
                    if let answer { return answer }
                }
                throw URLError(.badServerResponse)
            }
        } catch let failed as PiecesFailed {
            throw failed
        } catch {
            throw transportError(error)
        }
    }

    /// What the pieces of an upload's body threw (`error`): theirs to tell, not the transport's.
    struct PiecesFailed: Error {
        let error: any Error
    }

    /// When the connection takes more of an upload's body: the delegate of its producer, and
    /// what ends the sending when the request ends first.
    private final class _Demand: NIOAsyncSequenceProducerDelegate, Sendable {
        private struct State {
            var more = false
            var ended = false
            var waiting: CheckedContinuation<Bool, Never>?
        }
        private let state = _Locked(State())
        private let lastActivity: _Locked<ContinuousClock.Instant>

        init(lastActivity: _Locked<ContinuousClock.Instant>) { self.lastActivity = lastActivity }

        func produceMore() {
            lastActivity.withLock { $0 = .now }
            resume(more: true)
        }

        func didTerminate() { end() }

        /// The body is to be sent no further: the request ended, or the wait for it was given up.
        func end() { resume(more: false) }

        /// Waits until the connection takes more (`true`) or the body is to be sent no further
        /// (`false`), which the calling task's cancellation also says.
        func wait() async throws -> Bool {
            let more = await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let ready: Bool? = state.withLock { state in
                        if state.ended { return false }
                        if state.more {
                            state.more = false
                            return true
                        }
                        state.waiting = continuation
                        return nil
                    }
                    if let ready { continuation.resume(returning: ready) }
                }
            } onCancel: {
                end()
            }
            try Task.checkCancellation()
            return more
        }

        private func resume(more: Bool) {
            let waiting = state.withLock { state in
                defer { state.waiting = nil }
                if !more { state.ended = true } else if state.waiting == nil { state.more = true }
                return state.waiting
            }
            waiting?.resume(returning: more)
        }
    }

    /// What a failure of AsyncHTTPClient or SwiftNIO is as URLSession would name it, so that
    /// `HTTPSource` tells lasting failures from transient ones alike on both paths: a refused or
    /// timed-out connection, a timeout, and any other failure on the way (a reset, a connection
    /// closed mid-answer, a broken HTTP/2 stream) are transient; a failed TLS handshake or an
    /// untrusted name is lasting and stays NIOSSL's error; the transfer's own stops, cancellation
    /// and `URLError`s stay as they are.
    static func transportError(_ error: any Error) -> any Error {
        // What happened underneath goes with the error (`NSUnderlyingErrorKey`), for its message.
        func urlError(_ code: URLError.Code) -> URLError { URLError(code, userInfo: [NSUnderlyingErrorKey: error]) }
        switch error {
        case is _HTTPTransfer.Stop, is CancellationError, is URLError, is NIOSSLExtraError, is BoringSSLError:
            return error
        case let error as NIOSSLError:
            if case .handshakeFailed = error { return error }
            return urlError(.networkConnectionLost)
        case let error as HTTPClientError:
            switch error {
            case .cancelled: return CancellationError()
            case .connectTimeout: return urlError(.cannotConnectToHost)
            case .readTimeout, .deadlineExceeded: return urlError(.timedOut)
            default: return urlError(.networkConnectionLost)
            }
        case is NIOConnectionError, ChannelError.connectTimeout:
            return urlError(.cannotConnectToHost)
        case let error as IOError where error.errnoCode == ECONNREFUSED:
            return urlError(.cannotConnectToHost)
        default:
            return urlError(.networkConnectionLost)
        }
    }

    private static func exchange(
        _ transfer: _HTTPTransfer, _ first: URLRequest, client: HTTPClient, lastActivity: _Locked<ContinuousClock.Instant>
    ) async throws -> (HTTPURLResponse, Data) {
        var request = first
        for _ in 0..._HTTPTransfer.maxRedirects {
            guard let url = request.url else { throw URLError(.badURL) }
            var headers = HTTPHeaders()
            for (name, value) in request.allHTTPHeaderFields ?? [:] { headers.add(name: name, value: value) }
            let outgoing = try HTTPClient.Request(
                url: url, method: HTTPMethod(rawValue: request.httpMethod ?? "GET"), headers: headers,
                body: request.httpBody.map { .bytes($0) })
            let receiver = Receiver(transfer: transfer, lastActivity: lastActivity)
            let task = client.execute(request: outgoing, delegate: receiver, deadline: nil)
            let (head, body) = try await withTaskCancellationHandler {
                try await task.get()
            } onCancel: {
                task.cancel()
            }
            let status = Int(head.status.code)
            if let location = head.headers.first(name: "Location"), _HTTPTransfer.isRedirect(status: status, location: location) {
                request = try transfer.following(request, status: status, to: location)
                continue
            }
            let fields = Dictionary(head.headers.map { ($0.name, $0.value) }, uniquingKeysWith: { "\($0), \($1)" })
            guard
                let response = HTTPURLResponse(
                    url: url, statusCode: status, httpVersion: "HTTP/\(head.version.major).\(head.version.minor)", headerFields: fields)
            else { throw URLError(.badServerResponse) }
            return (response, body)
        }
        throw _HTTPTransfer.Stop.tooManyRedirects
    }

    /// Takes one answer on its connection's event loop: the time of each arrival goes to
    /// `lastActivity` there, so a busy task pool never makes a trickling answer look silent; a 2xx
    /// body goes to the transfer's `stream`, any other is collected up to its `maxBytes` (an
    /// announced larger one is refused from its head). A redirect's body is not kept.
    private final class Receiver: HTTPClientResponseDelegate, @unchecked Sendable {
        // Safe: AsyncHTTPClient calls a delegate on the task's event loop, one call at a time.
        typealias Response = (HTTPResponseHead, Data)

        let transfer: _HTTPTransfer
        let lastActivity: _Locked<ContinuousClock.Instant>
        private var head: HTTPResponseHead?
        private var body = Data()
        private var stream: (@Sendable (Data) throws -> Void)?
        private var discarding = false

        init(transfer: _HTTPTransfer, lastActivity: _Locked<ContinuousClock.Instant>) {
            self.transfer = transfer
            self.lastActivity = lastActivity
        }

        func didReceiveHead(task: HTTPClient.Task<Response>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
            lastActivity.withLock { $0 = .now }
            self.head = head
            if _HTTPTransfer.isRedirect(status: Int(head.status.code), location: head.headers.first(name: "Location")) {
                discarding = true
            } else if (200..<300).contains(head.status.code), let stream = transfer.stream {
                self.stream = stream
            } else if let length = head.headers.first(name: "Content-Length").flatMap(Int.init) {
                // An announced body is collected in one buffer of its size, or refused at once.
                if length > transfer.maxBytes { task.fail(reason: _HTTPTransfer.Stop.tooLarge) } else { body.reserveCapacity(length) }
            }
            return task.eventLoop.makeSucceededVoidFuture()
        }

        func didReceiveBodyPart(task: HTTPClient.Task<Response>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
            lastActivity.withLock { $0 = .now }
            if let stream {
                do {
                    try stream(Data(buffer.readableBytesView))
                } catch {
                    self.stream = nil
                    discarding = true
                    task.fail(reason: _HTTPTransfer.Stop.refused(error))
                }
            } else if !discarding {
                if body.count + buffer.readableBytes > transfer.maxBytes {
                    discarding = true
                    task.fail(reason: _HTTPTransfer.Stop.tooLarge)
                } else {
                    body.append(contentsOf: buffer.readableBytesView)
                }
            }
            return task.eventLoop.makeSucceededVoidFuture()
        }

        func didFinishRequest(task: HTTPClient.Task<Response>) throws -> Response {
            guard let head else { throw URLError(.badServerResponse) }
            return (head, body)
        }
    }
}
#endif
