import ListStoreCore
import NIOCore

/// Work handed to one event loop from elsewhere (the answers of long polls `LongPollFanout` held:
/// woken by a page read or a commit, or ended by their time or a shutdown), run at the end of the
/// next read of one of that loop's plain HTTP/1.1 connections (those with a `LongPollHandler`), or
/// by a task on the loop, whichever comes first.
///
/// An event loop runs its tasks only after the whole batch of sockets one wait on `epoll` gave it:
/// under load that is thousands of sockets, and a task waits for all of them (tens of milliseconds
/// with 10,000 long polls on two cores). The loop's `LongPollHandler`s call `run()` at the end of
/// each read, so work posted meanwhile is done between two sockets of the batch. The first work
/// posted when none waits also posts a task, which runs whatever no read ran first. The loop must
/// not shut down while work may be posted: a task it drops would leave the work waiting for a read
/// that never comes.
///
/// ```swift
/// let deliveries = LoopDeliveries(loop: channel.eventLoop)
/// deliveries.post { write(answer) }   // from any thread
/// deliveries.run()                     // on the loop: runs what was posted, once
/// ```
///
/// Each posted closure runs exactly once, on `loop`, in the order posted.
///
/// Complexity: `post` is O(1) amortized; `run` is O(1) when nothing waits, and otherwise runs
/// what was posted.
final class LoopDeliveries: Sendable {
    let loop: any EventLoop
    private let posted = _Locked([@Sendable () -> Void]())

    init(loop: any EventLoop) {
        self.loop = loop
    }

    /// Hands `work` to the loop, from any thread.
    func post(_ work: @escaping @Sendable () -> Void) {
        let first = posted.withLock { posted in
            posted.append(work)
            return posted.count == 1
        }
        // One task for a batch of posts: it finds them run already when a read came first.
        if first { loop.execute { self.run() } }
    }

    /// Runs, on the loop, what was posted and not run yet (work posted while it runs waits for the
    /// next call or the task posted with it).
    func run() {
        loop.preconditionInEventLoop()
        let work = posted.withLock { posted -> [@Sendable () -> Void] in
            guard !posted.isEmpty else { return [] }
            defer { posted.removeAll() }
            return posted
        }
        for item in work { item() }
    }
}
