import Foundation
import ListStore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One request of `HTTPSource` as URLSession carries it out, fed by `_HTTPSessionDelegate`: the
/// answer's body is collected up to `maxBytes` (past that the task is cancelled, so the rest is never
/// read), an overall deadline cancels the task however the answer trickles in, a redirect is
/// followed only within `origin` (so the token never leaves it), and cancelling the calling task
/// cancels the request. A streaming transfer (`stream`) hands a 2xx answer's body to `stream` as it
/// arrives instead of collecting it, and has no overall deadline (only the request's idle timeout).
///
/// URLSession is never left to follow a redirect itself: each one is declined, so that its task
/// completes, and the transfer sends the request URLSession proposed as a task of its own. Cancelling
/// a task while URLSession waits for the answer to a redirect breaks swift-corelibs-foundation's
/// bookkeeping (it traps), so a stop that comes then leaves the task to complete, which it does at
/// once.
final class _HTTPTransfer: @unchecked Sendable {
    // Safe: every mutable property is read and written only under `lock`; URLSession calls in on its
    // delegate queue, the deadline on a dispatch queue, cancellation from any thread.

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
        /// The calling task was cancelled.
        case cancelled
    }

    /// The only origin requests may go to.
    let origin: _HTTPOrigin
    /// The most answer bytes accepted.
    let maxBytes: Int
    /// The most redirects followed for one request.
    static let maxRedirects = 10
    /// Where the body of a 2xx answer goes as it arrives (`nil`: it is collected). Called on the
    /// session's delegate queue, one call at a time.
    let stream: (@Sendable (Data) -> Void)?

    private let lock = NSLock()
    private var body = Data()
    /// Whether the current answer's body goes to `stream`.
    private var streaming = false
    private var stop: Stop?
    private var task: URLSessionDataTask?
    private var deadline: DispatchWorkItem?
    private var continuation: CheckedContinuation<(HTTPURLResponse, Data), any Error>?
    /// The session and its delegate, for the requests of redirects.
    private var session: (URLSession, _HTTPSessionDelegate)?
    /// Whether URLSession has asked about a redirect of the current task, which then must not be
    /// cancelled (it completes by itself).
    private var redirecting = false
    /// The request of the redirect being followed, sent when the current task completes.
    private var redirect: URLRequest?
    private var redirects = 0
    /// Whether the caller has been resumed (a later stop then has nothing to stop).
    private var finished = false

    /// The threads that make, start and cancel tasks (each a synchronous wait for the session's
    /// queue): HTTP's own, so that a session slow to answer never holds the threads the stores'
    /// work runs on.
    private static let threads = _BlockingThreads(maxThreads: 16, idleTime: 10)

    init(origin: _HTTPOrigin, maxBytes: Int, stream: (@Sendable (Data) -> Void)? = nil) {
        self.origin = origin
        self.maxBytes = maxBytes
        self.stream = stream
    }

    /// Sends `request` through `session` (whose delegate is `router`) and returns the answer and its
    /// body (empty when it went to `stream`); `deadline` (none when `nil`) bounds the whole transfer.
    /// - Throws: `Stop`, or the `URLError` the session reports.
    func run(_ request: URLRequest, in session: URLSession, router: _HTTPSessionDelegate, deadline: Duration?) async throws
        -> (HTTPURLResponse, Data)
    {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                start(request, in: session, router: router, deadline: deadline, continuation: continuation)
            }
        } onCancel: {
            halt(.cancelled)
        }
    }

    private func start(
        _ request: URLRequest, in session: URLSession, router: _HTTPSessionDelegate, deadline: Duration?,
        continuation: CheckedContinuation<(HTTPURLResponse, Data), any Error>
    ) {
        let timer = DispatchWorkItem { [weak self] in self?.halt(.deadline) }
        lock.lock()
        if let stop {  // cancelled before it started
            lock.unlock()
            continuation.resume(throwing: stop)
            return
        }
        self.continuation = continuation
        self.session = (session, router)
        self.deadline = deadline == nil ? nil : timer
        lock.unlock()
        if let deadline {
            let seconds = Double(deadline.components.seconds) + Double(deadline.components.attoseconds) / 1e18
            DispatchQueue.global().asyncAfter(deadline: .now() + max(0, seconds), execute: timer)
        }
        // swift-corelibs-foundation makes and starts a task with a synchronous wait for the session's
        // own queue, which runs on dispatch's threads: on Linux the very threads that run tasks. Two
        // requests starting at once on two cores would hold them all, waiting for one another.
        Self.threads.submit { self.send(request) }
    }

    /// Sends `request` as a new task of the session, unless the transfer stopped meanwhile.
    private func send(_ request: URLRequest) {
        lock.lock()
        let current = stop == nil ? session : nil
        lock.unlock()
        guard let (session, router) = current else { return finish(response: nil, error: nil) }
        // Made outside the lock (a synchronous wait for the session's queue), and registered with
        // the router before a stop can see it.
        let task = session.dataTask(with: request)
        // Also the task's own delegate: swift-corelibs-foundation asks the task's delegate (not the
        // session's) whether to follow a redirect, and follows it with every header otherwise.
        task.delegate = router
        router.register(self, for: task)
        lock.lock()
        let stopped = stop != nil
        if !stopped {
            self.task = task
            redirecting = false
            streaming = false
            body = Data()
        }
        lock.unlock()
        if stopped {
            task.cancel()  // never started: cancelling ends it, and its completion finds no caller
            return finish(response: nil, error: nil)
        }
        task.resume()
    }

    /// Stops the transfer for `reason` (unless it already stopped or completed): the caller is
    /// resumed at once with `reason`, whether or not URLSession has started or ended the task, and
    /// the task is cancelled unless it is about to complete anyway (its completion then finds no
    /// caller). A deadline so holds even when URLSession is slow to start or to end a task.
    func halt(_ reason: Stop) {
        lock.lock()
        guard stop == nil, !finished else { return lock.unlock() }
        stop = reason
        let task = redirecting ? nil : task
        lock.unlock()
        if let task { Self.threads.submit { task.cancel() } }  // a synchronous wait too
        finish(response: nil, error: nil)
    }

    /// The answer's head arrived: one announcing more than `maxBytes` is refused before its body.
    func received(_ response: URLResponse) {
        if stream != nil, let http = response as? HTTPURLResponse, (200..<300).contains(http.statusCode) {
            lock.lock()
            streaming = true
            lock.unlock()
            return
        }
        if response.expectedContentLength > Int64(maxBytes) { halt(.tooLarge) }
    }

    /// Body bytes arrived.
    func received(_ data: Data) {
        lock.lock()
        guard stop == nil else { return lock.unlock() }
        if streaming, let stream {
            lock.unlock()
            return stream(data)
        }
        guard body.count + data.count <= maxBytes else {
            lock.unlock()
            return halt(.tooLarge)
        }
        body.append(data)
        lock.unlock()
    }

    /// URLSession proposes to follow a redirect with `proposed`: always declined (so the task
    /// completes); the transfer sends it itself when it stays within `origin` and carries no
    /// credentials in its URL, and otherwise fails saying so.
    func declineRedirect(to proposed: URLRequest) {
        lock.lock()
        redirecting = true
        lock.unlock()
        if let refusal = refusal(ofRedirectTo: proposed.url) { return halt(refusal) }
        lock.lock()
        redirects += 1
        if redirects > Self.maxRedirects {
            lock.unlock()
            return halt(.tooManyRedirects)
        }
        redirect = proposed
        lock.unlock()
    }

    /// Why a redirect to `url` is not followed, `nil` when it may be: it stays within `origin` and
    /// carries no credentials in its URL.
    func refusal(ofRedirectTo url: URL?) -> Stop? {
        if let url, _HTTPOrigin(url) == origin, url.user == nil, url.password == nil { return nil }
        return .redirectElsewhere(target: url.map { _HTTPOrigin($0)?.description ?? _HTTPOrigin.redacting($0.absoluteString) } ?? "nowhere")
    }

    /// The task ended, with `error` unless it completed: the transfer follows the redirect it
    /// declined, or ends.
    func complete(_ response: URLResponse?, error: (any Error)?) {
        lock.lock()
        let next = stop == nil && error == nil ? redirect : nil
        redirect = nil
        lock.unlock()
        // Not sent from here: this runs on the session's delegate queue, and making a task waits
        // for the session's own queue (see `start`), which would hold every task's events meanwhile.
        if let next { return Self.threads.submit { self.send(next) } }
        finish(response: response, error: error)
    }

    /// Resumes the caller with the answer, or with why there is none.
    private func finish(response: URLResponse?, error: (any Error)?) {
        lock.lock()
        let continuation = continuation
        self.continuation = nil
        if continuation != nil { finished = true }
        deadline?.cancel()
        deadline = nil
        session = nil
        let (stop, body) = (stop, body)
        self.body = Data()
        lock.unlock()
        guard let continuation else { return }
        if let stop {
            continuation.resume(throwing: stop)
        } else if let error {
            continuation.resume(throwing: error)
        } else if let response = response as? HTTPURLResponse {
            continuation.resume(returning: (response, body))
        } else {
            continuation.resume(throwing: URLError(.badServerResponse))
        }
    }
}
