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
        let idle = Duration.milliseconds(Int64(request.timeoutInterval * 1000))
        let lastActivity = _Locked(ContinuousClock.now)
        let end = deadline.map { ContinuousClock.now + $0 }
        do {
            return try await withThrowingTaskGroup(of: (HTTPURLResponse, Data).self) { group in
                group.addTask { try await exchange(transfer, request, client: client, lastActivity: lastActivity) }
                // The deadline, and the silence that fails a request: it sleeps until the earlier
                // of the two, and looks again.
                group.addTask {
                    while true {
                        let silentUntil = lastActivity.withLock { $0 } + idle
                        if let end, ContinuousClock.now >= end { throw _HTTPTransfer.Stop.deadline }
                        if ContinuousClock.now >= silentUntil { throw URLError(.timedOut) }
                        try await Task.sleep(until: min(silentUntil, end ?? silentUntil) + .milliseconds(1), clock: .continuous)
                    }
                }
                defer { group.cancelAll() }
                return try await group.next()!
            }
        } catch {
            throw transportError(error)
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
