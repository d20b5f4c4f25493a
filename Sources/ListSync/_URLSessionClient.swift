#if canImport(Darwin)
import Foundation
import ListStore
import Security

/// The requests of an `HTTPSource` on Apple platforms, through URLSession's async API (elsewhere
/// `_NIOHTTPClient` carries them). Not built on Linux: written from Apple's documentation of
/// `URLSession.bytes(for:delegate:)`, `URLSessionTaskDelegate` and `SecTrust`.
///
/// It keeps `_HTTPTransfer`'s rules: redirects are never followed by URLSession (the task's
/// delegate declines each, so the redirect answer comes back) but by `_HTTPTransfer.following`;
/// the body is collected up to `maxBytes`, or handed to `stream` line by line. The request's
/// `timeoutInterval` is URLSession's own idle timeout; `deadline` bounds the whole transfer;
/// cancelling the calling task cancels the request.
enum _URLSessionClient {
    /// Two sessions per set of authorities (`nil`: the system's), for the process's life: one for
    /// requests, whose connections to a server are reused, and one for event streams, each holding
    /// a connection for as long as it follows. A connection checked against one set of authorities
    /// is never reused for a source that trusts another.
    private static let sessions = _Locked([Key: URLSession]())

    private struct Key: Hashable {
        var authorities: HTTPSource.CertificateAuthorities?
        var streams: Bool
    }

    private static func session(for authorities: HTTPSource.CertificateAuthorities?, streams: Bool) -> URLSession {
        sessions.withLock { sessions in
            let key = Key(authorities: authorities, streams: streams)
            if let session = sessions[key] { return session }
            let configuration = URLSessionConfiguration.ephemeral
            configuration.httpMaximumConnectionsPerHost = streams ? 4096 : 16
            configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
            let session = URLSession(configuration: configuration)
            sessions[key] = session
            return session
        }
    }

    /// Sends `request` as `transfer` says, within `deadline` (none when `nil`); returns the answer
    /// and its body (empty when it went to the transfer's stream).
    /// - Throws: `_HTTPTransfer.Stop`; the `URLError` URLSession reports (an untrusted certificate
    ///   is `.serverCertificateUntrusted`); `CancellationError`.
    static func run(
        _ transfer: _HTTPTransfer, _ request: URLRequest, authorities: HTTPSource.CertificateAuthorities?, deadline: Duration?
    ) async throws -> (HTTPURLResponse, Data) {
        guard let deadline else { return try await exchange(transfer, request, authorities: authorities) }
        return try await withThrowingTaskGroup(of: (HTTPURLResponse, Data).self) { group in
            group.addTask { try await exchange(transfer, request, authorities: authorities) }
            group.addTask {
                try await Task.sleep(for: deadline)
                throw _HTTPTransfer.Stop.deadline
            }
            defer { group.cancelAll() }
            return try await group.next()!
        }
    }

    private static func exchange(
        _ transfer: _HTTPTransfer, _ first: URLRequest, authorities: HTTPSource.CertificateAuthorities?
    ) async throws -> (HTTPURLResponse, Data) {
        let session = session(for: authorities, streams: transfer.isEventStream)
        let delegate = TaskDelegate(authorities: authorities)
        var request = first
        for _ in 0..._HTTPTransfer.maxRedirects {
            let bytes: URLSession.AsyncBytes
            let response: URLResponse
            do {
                (bytes, response) = try await session.bytes(for: request, delegate: delegate)
            } catch let error as URLError where delegate.refusedTrust {
                throw URLError(.serverCertificateUntrusted, userInfo: [NSUnderlyingErrorKey: error])
            }
            guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
            if let location = http.value(forHTTPHeaderField: "Location"), _HTTPTransfer.isRedirect(status: http.statusCode, location: location) {
                request = try transfer.following(request, status: http.statusCode, to: location)
                continue
            }
            return (http, try await read(bytes, of: http, transfer))
        }
        throw _HTTPTransfer.Stop.tooManyRedirects
    }

    /// The answer's body: a 2xx body goes to the transfer's stream a line (or 64 KiB) at a time,
    /// any other is collected up to `maxBytes` (an announced larger one is refused unread).
    private static func read(_ bytes: URLSession.AsyncBytes, of http: HTTPURLResponse, _ transfer: _HTTPTransfer) async throws -> Data {
        if (200..<300).contains(http.statusCode), let stream = transfer.stream {
            var piece = [UInt8]()
            for try await byte in bytes {
                piece.append(byte)
                if byte == UInt8(ascii: "\n") || piece.count >= 1 << 16 {
                    try refusing { try stream(Data(piece)) }
                    piece.removeAll(keepingCapacity: true)
                }
            }
            if !piece.isEmpty { try refusing { try stream(Data(piece)) } }
            return Data()
        }
        if http.expectedContentLength > Int64(transfer.maxBytes) { throw _HTTPTransfer.Stop.tooLarge }
        var body = [UInt8]()
        for try await byte in bytes {
            guard body.count < transfer.maxBytes else { throw _HTTPTransfer.Stop.tooLarge }
            body.append(byte)
        }
        return Data(body)
    }

    /// Runs `body`, a transfer's stream: what it throws stops the transfer as `Stop.refused`.
    private static func refusing(_ body: () throws -> Void) throws {
        do {
            try body()
        } catch {
            throw _HTTPTransfer.Stop.refused(error)
        }
    }

    /// One request's task delegate: declines every redirect (the transfer follows it or not), and
    /// with `authorities` trusts a server's certificate only when it chains to one of them.
    private final class TaskDelegate: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
        // Safe: `authorities` is immutable; `refused` is behind its lock.
        let authorities: HTTPSource.CertificateAuthorities?
        private let refused = _Locked(false)

        init(authorities: HTTPSource.CertificateAuthorities?) {
            self.authorities = authorities
        }

        /// Whether a server's certificate was refused.
        var refusedTrust: Bool { refused.withLock { $0 } }

        func urlSession(
            _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
            newRequest request: URLRequest
        ) async -> URLRequest? {
            nil
        }

        func urlSession(
            _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge
        ) async -> (URLSession.AuthChallengeDisposition, URLCredential?) {
            guard let authorities, challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodServerTrust,
                let trust = challenge.protectionSpace.serverTrust
            else { return (.performDefaultHandling, nil) }
            let anchors = authorities.der.compactMap { SecCertificateCreateWithData(nil, Data($0) as CFData) }
            guard SecTrustSetAnchorCertificates(trust, anchors as CFArray) == errSecSuccess,
                SecTrustSetAnchorCertificatesOnly(trust, true) == errSecSuccess,
                SecTrustEvaluateWithError(trust, nil)
            else {
                refused.withLock { $0 = true }
                return (.cancelAuthenticationChallenge, nil)
            }
            return (.useCredential, URLCredential(trust: trust))
        }
    }
}
#endif
