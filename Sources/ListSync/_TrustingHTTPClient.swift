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

/// The requests of an `HTTPSource` that has its own `CertificateAuthorities`, through
/// AsyncHTTPClient: URLSession on Linux cannot be told of an authority. It keeps `_HTTPTransfer`'s
/// rules: the body collected up to `maxBytes` (an announced larger one is refused before it is
/// read), a 2xx body handed to `stream` as it arrives, an overall deadline, a request that fails
/// once nothing has arrived for the request's `timeoutInterval`, redirects followed only within the
/// origin and at most `maxRedirects` times, and cancellation of the calling task.
enum _TrustingHTTPClient {
    /// One client per set of authorities, for the process's life (as HTTPSource's URLSessions):
    /// connections to a server are reused, and event streams each hold one.
    private static let clients = _Locked([HTTPSource.CertificateAuthorities: HTTPClient]())

    static func client(for authorities: HTTPSource.CertificateAuthorities) -> HTTPClient {
        clients.withLock { clients in
            if let client = clients[authorities] { return client }
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates(authorities.certificates)
            var pool = HTTPClient.Configuration.ConnectionPool(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 4096)
            // A connection that fails fails its request at once, as URLSession's do: what is worth
            // trying again is the caller's (`RetryPolicy`), and an untrusted certificate is not.
            pool.retryConnectionEstablishment = false
            let configuration = HTTPClient.Configuration(
                tlsConfiguration: tls, redirectConfiguration: .disallow, timeout: .init(connect: .seconds(10)), connectionPool: pool)
            let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
            clients[authorities] = client
            return client
        }
    }

    /// Sends `request` as `transfer` says, within `deadline` (none when `nil`); returns the answer
    /// and its body (empty when it went to the transfer's stream).
    /// - Throws: `_HTTPTransfer.Stop`; `URLError` for what went wrong on the way (as URLSession
    ///   would name it); NIOSSL's error when the handshake fails; `CancellationError`.
    static func run(_ transfer: _HTTPTransfer, _ request: URLRequest, client: HTTPClient, deadline: Duration?) async throws
        -> (HTTPURLResponse, Data)
    {
        let idle = Duration.milliseconds(Int64(request.timeoutInterval * 1000))
        let lastActivity = _Locked(ContinuousClock.now)
        let end = deadline.map { ContinuousClock.now + $0 }
        do {
            return try await withThrowingTaskGroup(of: (HTTPURLResponse, Data).self) { group in
                group.addTask { try await exchange(transfer, request, client: client, lastActivity: lastActivity) }
                // The deadline, and the silence that fails a request.
                group.addTask {
                    while true {
                        try await Task.sleep(for: .milliseconds(100))
                        let now = ContinuousClock.now
                        if let end, now >= end { throw _HTTPTransfer.Stop.deadline }
                        if now - lastActivity.withLock({ $0 }) > idle { throw URLError(.timedOut) }
                    }
                }
                defer { group.cancelAll() }
                return try await group.next()!
            }
        } catch let error as HTTPClientError {
            switch error {
            case .cancelled: throw CancellationError()
            case .connectTimeout: throw URLError(.cannotConnectToHost)
            case .readTimeout, .deadlineExceeded: throw URLError(.timedOut)
            default: throw URLError(.networkConnectionLost)
            }
        } catch is NIOConnectionError {
            throw URLError(.cannotConnectToHost)
        } catch let error as IOError where error.errnoCode == ECONNREFUSED {
            throw URLError(.cannotConnectToHost)
        } catch ChannelError.connectTimeout {
            throw URLError(.cannotConnectToHost)
        }
    }

    private static func exchange(
        _ transfer: _HTTPTransfer, _ first: URLRequest, client: HTTPClient, lastActivity: _Locked<ContinuousClock.Instant>
    ) async throws -> (HTTPURLResponse, Data) {
        var request = first
        for _ in 0..._HTTPTransfer.maxRedirects {
            guard let url = request.url else { throw URLError(.badURL) }
            var outgoing = HTTPClientRequest(url: url.absoluteString)
            outgoing.method = HTTPMethod(rawValue: request.httpMethod ?? "GET")
            for (name, value) in request.allHTTPHeaderFields ?? [:] { outgoing.headers.add(name: name, value: value) }
            if let body = request.httpBody { outgoing.body = .bytes(ByteBuffer(bytes: body)) }
            let response = try await client.execute(outgoing, deadline: .distantFuture)
            lastActivity.withLock { $0 = .now }
            let status = Int(response.status.code)
            if [301, 302, 303, 307, 308].contains(status), let location = response.headers.first(name: "Location") {
                let target = URL(string: location, relativeTo: url)?.absoluteURL
                if let refusal = transfer.refusal(ofRedirectTo: target) { throw refusal }
                request.url = target
                if status == 303 {
                    request.httpMethod = "GET"
                    request.httpBody = nil
                }
                continue
            }
            let fields = Dictionary(response.headers.map { ($0.name, $0.value) }, uniquingKeysWith: { "\($0), \($1)" })
            guard
                let head = HTTPURLResponse(
                    url: url, statusCode: status, httpVersion: "HTTP/\(response.version.major).\(response.version.minor)",
                    headerFields: fields)
            else { throw URLError(.badServerResponse) }
            let stream = (200..<300).contains(status) ? transfer.stream : nil
            if stream == nil, let length = response.headers.first(name: "Content-Length").flatMap(Int.init), length > transfer.maxBytes {
                throw _HTTPTransfer.Stop.tooLarge
            }
            var body = Data()
            for try await chunk in response.body {
                lastActivity.withLock { $0 = .now }
                if let stream {
                    stream(Data(chunk.readableBytesView))
                    continue
                }
                guard body.count + chunk.readableBytes <= transfer.maxBytes else { throw _HTTPTransfer.Stop.tooLarge }
                body.append(contentsOf: chunk.readableBytesView)
            }
            return (head, body)
        }
        throw _HTTPTransfer.Stop.tooManyRedirects
    }
}
