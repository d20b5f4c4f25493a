/// A wait that did not end within its bound, naming what it waited for.
public struct WaitTimedOut: Error, CustomStringConvertible {
    public let description: String

    public init(description: String) { self.description = description }
}

/// Waits until `condition` holds, checking it every `interval`: for a state that no event announces
/// (a server's count of waiting streams, a replica's version). Bounded by `limit` only so that a
/// hang fails the test with what it waited for, instead of running into its time limit; nothing is
/// assumed to have happened when the wait ends otherwise.
/// - Throws: `WaitTimedOut` naming `what` when `limit` passes first; what `condition` throws.
public func waitUntil(
    _ what: @autoclosure () -> String, within limit: Duration = .seconds(60), every interval: Duration = .milliseconds(10),
    _ condition: () async throws -> Bool
) async throws {
    let clock = ContinuousClock()
    let deadline = clock.now + limit
    while try await !condition() {
        guard clock.now < deadline else { throw WaitTimedOut(description: "waited \(limit) in vain until \(what())") }
        try await Task.sleep(for: interval)
    }
}

/// Returns once the task that calls it is cancelled: a read that stays under way until then.
public func untilCancelled() async {
    let (never, continuation) = AsyncStream.makeStream(of: Never.self)
    await withTaskCancellationHandler {
        for await _ in never {}
    } onCancel: {
        continuation.finish()
    }
}
