import Foundation
import ListStore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The delegate of `HTTPSource`'s one URLSession: hands each task's events (answer head, body bytes,
/// redirect, completion) to the `_HTTPTransfer` registered for it.
final class _HTTPSessionDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // Safe: its only state is behind a lock.
    private let transfers = _Locked([Int: _HTTPTransfer]())

    /// Routes `task`'s events to `transfer` until it completes.
    func register(_ transfer: _HTTPTransfer, for task: URLSessionTask) {
        transfers.withLock { $0[task.taskIdentifier] = transfer }
    }

    private func transfer(of task: URLSessionTask, removing: Bool = false) -> _HTTPTransfer? {
        transfers.withLock { removing ? $0.removeValue(forKey: task.taskIdentifier) : $0[task.taskIdentifier] }
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        transfer(of: dataTask)?.received(response)
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        transfer(of: dataTask)?.received(data)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        // Never followed here: the transfer sends the redirect's request as a task of its own (and
        // a task without a transfer is not ours to send anywhere).
        transfer(of: task)?.declineRedirect(to: request)
        completionHandler(nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        transfer(of: task, removing: true)?.complete(task.response, error: error)
    }
}
