/// The cursor of a long poll that ends without a commit: what lets a cache in front of the server
/// keep that empty answer while the followers who asked the same thing get it, and still send each
/// of them to the server when they ask again (see <doc:DeployingBehindACache>).
///
/// An empty answer of `GET /v1/lists/{list}/journal?since=V&wait=S` carries
/// `X-ListStore-Cursor: C`. When the request carried a cursor itself (`cursor=0` for a follower's
/// first long poll at `V`), such a cache may keep the answer for `S` seconds (`X-Accel-Expires`):
/// the followers waiting behind it on the cache get it from there, and ask again with `cursor=C`, a
/// URL the kept answer does not answer, so one of them waits at the server for all of them. A
/// request without a cursor comes from a client that would ask the same URL again: its empty answer
/// is not kept. `C` is past the cursor the request was sent with, so a follower is never handed the
/// answer it asks after, and it is the number of `S`-second stretches since 1970 whenever that is
/// larger: followers who began waiting at different times (each group behind one request to the
/// server) meet on one URL as soon as two of their answers fall in one stretch. Electric's long polls
/// do the same for the same reason.
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
