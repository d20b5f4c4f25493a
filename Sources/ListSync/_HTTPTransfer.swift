import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One request of `HTTPSource` as URLSession carries it out, fed by `_HTTPSessionDelegate`: the
/// answer's body is collected up to `maxBytes` (past that the task is cancelled, so the rest is never
/// read), an overall deadline cancels the task however the answer trickles in, a redirect is
/// followed only within `origin` (so the token never leaves it), and cancelling the calling task
/// cancels the request.
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
        /// The calling task was cancelled.
        case cancelled
    }

    /// The only origin requests may go to.
    let origin: _HTTPOrigin
    /// The most answer bytes accepted.
    let maxBytes: Int

    private let lock = NSLock()
    private var body = Data()
    private var stop: Stop?
    private var task: URLSessionDataTask?
    private var deadline: DispatchWorkItem?
    private var continuation: CheckedContinuation<(HTTPURLResponse, Data), any Error>?

    init(origin: _HTTPOrigin, maxBytes: Int) {
        self.origin = origin
        self.maxBytes = maxBytes
    }

    /// Sends `request` through `session` (whose delegate is `router`) and returns the answer and its
    /// body.
    /// - Throws: `Stop`, or the `URLError` the session reports.
    func run(_ request: URLRequest, in session: URLSession, router: _HTTPSessionDelegate, deadline: Duration) async throws
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
        _ request: URLRequest, in session: URLSession, router: _HTTPSessionDelegate, deadline: Duration,
        continuation: CheckedContinuation<(HTTPURLResponse, Data), any Error>
    ) {
        let task = session.dataTask(with: request)
        // Also the task's own delegate: swift-corelibs-foundation asks the task's delegate (not the
        // session's) whether to follow a redirect, and follows it with every header otherwise.
        task.delegate = router
        let timer = DispatchWorkItem { [weak self] in self?.halt(.deadline) }
        lock.lock()
        if let stop {  // cancelled before it started
            lock.unlock()
            continuation.resume(throwing: stop)
            return
        }
        self.continuation = continuation
        self.task = task
        self.deadline = timer
        lock.unlock()
        router.register(self, for: task)
        let seconds = Double(deadline.components.seconds) + Double(deadline.components.attoseconds) / 1e18
        DispatchQueue.global().asyncAfter(deadline: .now() + max(0, seconds), execute: timer)
        task.resume()
    }

    /// Stops the transfer for `reason` (unless it already stopped or completed), cancelling its task
    /// unless the task is about to complete anyway.
    func halt(_ reason: Stop, cancellingTask: Bool = true) {
        lock.lock()
        guard stop == nil else { return lock.unlock() }
        stop = reason
        let task = task
        lock.unlock()
        if cancellingTask { task?.cancel() }
    }

    /// The answer's head arrived: one announcing more than `maxBytes` is refused before its body.
    func received(_ response: URLResponse) {
        if response.expectedContentLength > Int64(maxBytes) { halt(.tooLarge) }
    }

    /// Body bytes arrived.
    func received(_ data: Data) {
        lock.lock()
        guard stop == nil else { return lock.unlock() }
        guard body.count + data.count <= maxBytes else {
            lock.unlock()
            return halt(.tooLarge)
        }
        body.append(data)
        lock.unlock()
    }

    /// The request `proposed` by a redirect, if it stays within `origin` and carries no credentials
    /// in its URL; otherwise `nil` (not followed, and the transfer fails saying so).
    func redirect(to proposed: URLRequest) -> URLRequest? {
        if let url = proposed.url, _HTTPOrigin(url) == origin, url.user == nil, url.password == nil {
            return proposed
        }
        let target = proposed.url.map { _HTTPOrigin($0)?.description ?? _HTTPOrigin.redacting($0.absoluteString) } ?? "nowhere"
        // Declining the redirect completes the task with the redirect itself; cancelling it while
        // URLSession waits for this answer would break the session's bookkeeping.
        halt(.redirectElsewhere(target: target), cancellingTask: false)
        return nil
    }

    /// The task ended, with `error` unless it completed.
    func complete(_ response: URLResponse?, error: (any Error)?) {
        lock.lock()
        let continuation = continuation
        self.continuation = nil
        deadline?.cancel()
        deadline = nil
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
