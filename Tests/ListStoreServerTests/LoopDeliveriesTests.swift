import Dispatch
import ListDiffTestSupport
import ListStoreCore
@testable import ListStoreServer
import NIOCore
import NIOEmbedded
import NIOPosix
import Testing

/// `LoopDeliveries`: what is posted runs exactly once, on its loop, in the order posted, whether a
/// read's end runs it or the task posted with it.
@Suite(.timeLimit(.minutes(1))) struct LoopDeliveriesTests {
    /// Random interleavings of posts, runs (a read's end) and the loop's tasks, 2,000 sequences
    /// (seeded; a failure names its sequence): every item runs once, in order, and none is left
    /// once the loop's tasks ran. (An embedded loop is always "in" itself: that the work runs on
    /// its loop is the test with threads below.)
    @Test func everyItemRunsOnceInOrderHoweverRunsAndTasksInterleave() {
        for sequence in 0..<2_000 {
            var random = SplitMix64(seed: UInt64(sequence))
            let loop = EmbeddedEventLoop()
            let deliveries = LoopDeliveries(loop: loop)
            let ran = _Locked([Int]())
            var posted = 0
            for _ in 0..<Int.random(in: 1...40, using: &random) {
                switch Int.random(in: 0..<4, using: &random) {
                case 0, 1:
                    let item = posted
                    posted += 1
                    deliveries.post { ran.withLock { $0.append(item) } }
                case 2:
                    deliveries.run()
                default:
                    loop.run()
                }
                // Nothing runs twice, and what ran is a prefix of what was posted, in order.
                let soFar = ran.withLock { $0 }
                #expect(soFar == Array(0..<soFar.count), "sequence \(sequence)")
            }
            loop.run()
            #expect(ran.withLock { $0 } == Array(0..<posted), "sequence \(sequence)")
            try? loop.syncShutdownGracefully()
        }
    }

    /// Work posted while `run` runs waits for the next run (or its task): a run never loops on
    /// what its own items post.
    @Test func workPostedWhileRunningWaitsForTheNextRun() {
        let loop = EmbeddedEventLoop()
        let deliveries = LoopDeliveries(loop: loop)
        let ran = _Locked([String]())
        deliveries.post {
            ran.withLock { $0.append("first") }
            deliveries.post { ran.withLock { $0.append("second") } }
        }
        deliveries.run()
        #expect(ran.withLock { $0 } == ["first"])
        deliveries.run()
        #expect(ran.withLock { $0 } == ["first", "second"])
        loop.run()
        #expect(ran.withLock { $0 } == ["first", "second"])
        try? loop.syncShutdownGracefully()
    }

    /// Four threads post 2,500 items each to a real event loop while the loop runs the deliveries
    /// from tasks of its own too: every item runs once, on the loop, each thread's in its order.
    @Test func postsFromManyThreadsRunOnceOnTheLoopInEachThreadsOrder() async throws {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let deliveries = LoopDeliveries(loop: loop)
        let (threads, each) = (4, 2_500)
        let ran = _Locked([[Int]](repeating: [], count: threads))
        let offLoop = _Locked(0)
        let done = loop.makePromise(of: Void.self)
        let total = threads * each
        let count = _Locked(0)
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for item in 0..<each {
                deliveries.post {
                    if !loop.inEventLoop { offLoop.withLock { $0 += 1 } }
                    ran.withLock { $0[thread].append(item) }
                    if count.withLock({ $0 += 1; return $0 }) == total { done.succeed() }
                }
                // A read's end on the loop, now and then, as connections' reads end.
                if item % 100 == 0 { loop.execute { deliveries.run() } }
            }
        }
        try await done.futureResult.get()
        #expect(offLoop.withLock { $0 } == 0)
        for thread in 0..<threads {
            #expect(ran.withLock { $0[thread] } == Array(0..<each))
        }
    }
}
