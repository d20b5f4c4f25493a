/// The cursor of a long poll that ends without a commit (`X-ListStore-Cursor`): what lets a cache
/// keep that empty answer for the followers behind it and still send them on to one new request
/// (DeployingBehindACache.md, “What the server says about caching”). It is past the cursor the
/// request was sent with, so a follower is never handed the answer it asks after, and otherwise
/// the number of `wait`-second stretches since 1970, so that groups of followers meet on one URL.
///
/// ```swift
/// LongPollCursor.next(after: nil, wait: 30, now: 1_764_590_400)   // 58_819_680
/// LongPollCursor.next(after: 58_819_680, wait: 30, now: 1_764_590_400)   // 58_819_681
/// ```
enum LongPollCursor {
    /// The largest cursor a request may send (2^53 − 1, exact in every JSON and JavaScript number).
    static let max = (1 << 53) - 1

    /// The cursor of an empty answer of a `wait`-second long poll sent with `cursor`, at `now`
    /// (seconds since 1970).
    /// - Complexity: O(1).
    static func next(after cursor: Int?, wait: Int, now: Double) -> Int {
        let stretch = now > 0 ? Int(now / Double(Swift.max(1, wait))) : 0
        // At the largest a request may send, the clock's stretch (far below it): another URL all the same.
        guard let cursor, cursor < max else { return stretch }
        return Swift.max(cursor + 1, stretch)
    }
}
