/// How a follower waits between attempts while its source cannot be reached: exponentially longer
/// waits from `initialDelay`, capped at `maximumDelay`, each shortened by a random part of up to
/// `jitter` (so that many followers of a restarted server do not all come back at once).
///
/// ```swift
/// try await replica.follow(from: source, retrying: .standard) { print($0.version) }
/// RetryPolicy.standard.delay(afterFailures: 3)   // 2 s less up to 20%: 1.6…2 s
/// ```
public struct RetryPolicy: Sendable, Hashable {
    /// The wait after the first failure.
    public var initialDelay: Duration
    /// The longest wait.
    public var maximumDelay: Duration
    /// The largest part of a wait (0…1) taken off at random.
    public var jitter: Double

    /// A policy; `jitter` is clamped to 0…1.
    public init(initialDelay: Duration = .milliseconds(500), maximumDelay: Duration = .seconds(15), jitter: Double = 0.2) {
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
        self.jitter = min(1, max(0, jitter))
    }

    /// 0.5 s, doubling up to 15 s, less up to 20%.
    public static let standard = RetryPolicy()

    /// The wait after `failures` failed attempts in a row (1 for the first):
    /// min(`initialDelay` · 2^(failures − 1), `maximumDelay`), less a random part of up to `jitter`.
    /// - Complexity: O(1).
    public func delay(afterFailures failures: Int) -> Duration {
        var generator = SystemRandomNumberGenerator()
        return delay(afterFailures: failures, using: &generator)
    }

    /// `delay(afterFailures:)` drawing from `generator`.
    /// - Complexity: O(1).
    public func delay(afterFailures failures: Int, using generator: inout some RandomNumberGenerator) -> Duration {
        let doublings = min(max(failures, 1) - 1, 62)
        var base = initialDelay
        for _ in 0..<doublings where base < maximumDelay { base = base * 2 }
        base = min(base, maximumDelay)
        let cut = jitter > 0 ? Double.random(in: 0...jitter, using: &generator) : 0
        return base * (1 - cut)
    }
}
