import Foundation
import ListStoreCore
import ListStoreTestSupport
@testable import ListStoreServer
import Testing

/// Page reads take turns: at most `maximum` run, the others wait in order; one cancelled while it
/// waits leaves the queue and frees nothing it did not hold.
struct PageReadTurnsTests {
    @Test func atMostTheMaximumRunAndTheOthersWaitTheirTurn() async throws {
        let turns = PageReadTurns(maximum: 2)
        let gates = (0..<5).map { _ in AsyncStream.makeStream(of: Void.self) }
        let order = _Locked<[Int]>([])
        let reads = (0..<5).map { k in
            Task {
                try await turns.taking {
                    order.withLock { $0.append(k) }
                    for await _ in gates[k].stream { break }
                }
            }
        }
        try await waitUntil("two run, three wait") { turns.counts == (2, 3) }
        // One that waits is cancelled: it leaves the queue.
        reads[4].cancel()
        try await waitUntil("the cancelled read left") { turns.counts == (2, 2) }
        await #expect(throws: CancellationError.self) { try await reads[4].value }
        for gate in gates { gate.continuation.finish() }
        for read in reads.prefix(4) { try await read.value }
        #expect(turns.counts == (0, 0))
        #expect(Set(order.withLock { $0 }) == [0, 1, 2, 3])
    }
}
