import Foundation
@testable import ListStore
@testable import ListStoreCore
import Testing

/// The stores' own threads for blocking work.
@Suite(.serialized) struct BlockingThreadsTests {
    /// Jobs at the limit that wait for work they submitted beyond it all finish: that work neither
    /// waits for a free thread nor queues behind the waiting jobs.
    @Test(.timeLimit(.minutes(1))) func jobsWaitingForWorkBeyondTheLimitFinish() async throws {
        let threads = _BlockingThreads(maxThreads: 2, idleTime: 0.2)
        let finished = _Locked(0)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for k in 0..<16 {
                group.addTask {
                    let value = try await threads.run { () -> Int in
                        let done = DispatchSemaphore(value: 0)
                        let result = _Locked(0)
                        threads.submit(beyondLimit: true) {
                            result.withLock { $0 = k * k }
                            done.signal()
                        }
                        done.wait()
                        return result.withLock { $0 }
                    }
                    #expect(value == k * k)
                    finished.withLock { $0 += 1 }
                }
            }
            try await group.waitForAll()
        }
        #expect(finished.withLock { $0 } == 16)
    }

    /// Jobs run in the order they came once every thread is busy, and all of them run.
    @Test func everyJobRuns() async throws {
        let threads = _BlockingThreads(maxThreads: 3, idleTime: 0.05)
        let ran = _Locked([Int]())
        for round in 0..<3 {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for k in 0..<40 {
                    group.addTask { try await threads.run { ran.withLock { $0.append(round * 1000 + k) } } }
                }
                try await group.waitForAll()
            }
            try await Task.sleep(for: .milliseconds(100))  // past the idle time: threads end and start again
        }
        let expected: [Int] = (0..<3).flatMap { round -> [Int] in (0..<40).map { round * 1000 + $0 } }
        let all: [Int] = ran.withLock { $0 }.sorted()
        #expect(all == expected)
    }
}
