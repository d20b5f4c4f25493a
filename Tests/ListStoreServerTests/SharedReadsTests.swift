import ListStore
import ListStoreTestSupport
import Testing

@testable import ListStoreServer

@Suite struct SharedReadsTests {
    /// Callers of one key that come while it is read get that read's value, and the read runs once.
    /// The read ends only once all of them joined it (a busy machine may start them late).
    @Test func concurrentCallersShareOneRead() async throws {
        let reads = SharedReads<Int, Int>()
        let count = _Locked(0)
        let (started, gate) = AsyncStream.makeStream(of: Void.self)
        let first = Task {
            try await reads.value(for: 7) {
                count.withLock { $0 += 1 }
                gate.yield()
                try await LimitTests.waitUntil { reads.waitingCount(for: 7) == 10 }
                return 42
            }
        }
        for await _ in started { break }
        let others = (0..<10).map { _ in
            Task { try await reads.value(for: 7) { count.withLock { $0 += 1 }; return 0 } }
        }
        #expect(try await first.value == 42)
        for other in others { #expect(try await other.value == 42) }
        #expect(count.withLock { $0 } == 1)
    }

    /// When the caller that reads is cancelled, and its read fails for it (as a cancelled read on
    /// PostgreSQL does, with `.io`), the callers that shared it read again instead of failing.
    @Test func callersOfACancelledReadReadAgain() async throws {
        let reads = SharedReads<Int, Int>()
        let (started, gate) = AsyncStream.makeStream(of: Void.self)
        let first = Task {
            try await reads.value(for: 1) { () async throws -> Int in
                gate.yield()
                await untilCancelled()
                throw StoreError(.io, "a statement was cancelled")
            }
        }
        for await _ in started { break }
        let other = Task { try await reads.value(for: 1) { 5 } }
        try await LimitTests.waitUntil { reads.waitingCount(for: 1) == 1 }
        first.cancel()
        #expect(try await other.value == 5)
        await #expect(throws: StoreError.self) { try await first.value }
    }

    /// A value `keep` accepts is answered to the callers that come after its read with the same
    /// generation, for its age and while it is among the last `capacity` kept; others read again.
    @Test func keptValuesAnswerLaterCallersOfTheirGenerationForTheirAge() async throws {
        // Kept for an hour, which no test outlasts (a busy machine cannot age them), and then the
        // same for a tenth of a second, waited out.
        var reads = SharedReads<Int, Int>(keeping: 2, for: .seconds(3600)) { $0 > 0 }
        let count = _Locked(0)
        func read(_ key: Int, _ value: Int, generation: UInt64? = 1) async throws -> Int {
            try await reads.value(for: key, generation: generation) {
                count.withLock { $0 += 1 }
                return value
            }
        }
        #expect(try await read(9, 90, generation: nil) == 90)
        #expect(try await read(9, 91, generation: nil) == 91)  // no generation: nothing kept or used
        #expect(try await read(9, 92, generation: 1) == 92)
        #expect(try await read(9, 93, generation: 2) == 93)  // another generation
        #expect(try await read(9, 94, generation: 2) == 93)
        count.withLock { $0 = 0 }
        #expect(try await read(1, 10) == 10)
        #expect(try await read(1, 11) == 10)  // kept
        #expect(try await read(2, 0) == 0)
        #expect(try await read(2, 20) == 20)  // 0 was not kept
        #expect(count.withLock { $0 } == 3)
        #expect(try await read(3, 30) == 30)  // keeps 2 and 3: 1 is dropped
        #expect(try await read(1, 12) == 12)
        #expect(count.withLock { $0 } == 5)

        let age = Duration.milliseconds(100)
        reads = SharedReads<Int, Int>(keeping: 2, for: age) { $0 > 0 }
        #expect(try await read(1, 10) == 10)
        // The value is kept at the end of its read, before this instant: it is as old as its age once
        // the clock passes this instant plus the age.
        let readEnded = ContinuousClock.now
        try await Task.sleep(until: readEnded + age, clock: .continuous)
        #expect(try await read(1, 13) == 13)  // too old
        #expect(count.withLock { $0 } == 7)
    }
}
