import Foundation
import ListStore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The rules of one request of `HTTPSource`, whichever client carries it out (`_NIOHTTPClient`
/// off Apple platforms, `_URLSessionClient` on them): the answer's body is collected up to
/// `maxBytes` (an announced larger one is refused before its body; past it the request fails
/// without reading the rest), a 2xx answer's body goes to `stream` as it arrives when there is one,
/// a redirect is followed only within `origin` (so the token never leaves it) and at most
/// `maxRedirects` times. A `stream` that throws stops the transfer there (`Stop.refused`): the rest
/// of the answer is not read.
struct _HTTPTransfer: Sendable {
    /// Why a transfer stopped before its answer was complete.
    enum Stop: Error, Sendable {
        /// The answer was larger than `maxBytes`.
        case tooLarge
        /// The deadline passed.
        case deadline
        /// The server redirected to another origin (shown as `target`, without credentials).
        case redirectElsewhere(target: String)
        /// The server redirected more than `maxRedirects` times.
        case tooManyRedirects
        /// The `stream` refused the answer as it arrived, with this error.
        case refused(any Error)
    }

    /// The only origin requests may go to.
    let origin: _HTTPOrigin
    /// The most answer bytes accepted.
    let maxBytes: Int
    /// The most redirects followed for one request.
    static let maxRedirects = 10
    /// Where the body of a 2xx answer goes as it arrives (`nil`: it is collected), one piece at a
    /// time; when it throws, the transfer stops.
    let stream: (@Sendable (Data) throws -> Void)?
    /// Whether the answer is an event stream, open for as long as the client follows: it takes a
    /// connection of its own (see `_NIOHTTPClient`), not one that other requests share.
    let isEventStream: Bool

    init(origin: _HTTPOrigin, maxBytes: Int, isEventStream: Bool = true, stream: (@Sendable (Data) throws -> Void)? = nil) {
        self.origin = origin
        self.maxBytes = maxBytes
        self.isEventStream = stream != nil && isEventStream
        self.stream = stream
    }

    /// Whether an answer with `status` and a `Location` header is a redirect to follow.
    static func isRedirect(status: Int, location: String?) -> Bool {
        [301, 302, 303, 307, 308].contains(status) && location != nil
    }

    /// The request that follows `request`'s redirect answer `status` to `location`.
    /// - Throws: `Stop.redirectElsewhere` unless the target stays within `origin` and carries no
    ///   credentials in its URL.
    func following(_ request: URLRequest, status: Int, to location: String) throws -> URLRequest {
        let target = URL(string: location, relativeTo: request.url)?.absoluteURL
        if let refusal = refusal(ofRedirectTo: target) { throw refusal }
        var next = request
        next.url = target
        // As browsers do: a 303, and a 301 or 302 after a POST, ask with GET.
        if status == 303 || ([301, 302].contains(status) && request.httpMethod == "POST") {
            next.httpMethod = "GET"
            next.httpBody = nil
            next.setValue(nil, forHTTPHeaderField: "Content-Type")
        }
        return next
    }

    /// Why a redirect to `url` is not followed, `nil` when it may be: it stays within `origin` and
    /// carries no credentials in its URL.
    func refusal(ofRedirectTo url: URL?) -> Stop? {
        if let url, _HTTPOrigin(url) == origin, url.user == nil, url.password == nil { return nil }
        return .redirectElsewhere(target: url.map { _HTTPOrigin($0)?.description ?? _HTTPOrigin.redacting($0.absoluteString) } ?? "nowhere")
    }
}
