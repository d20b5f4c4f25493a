/// The cursor of each list's last long poll that ended without a commit, at the version and wait it
/// was asked with: `HTTPSource` sends it with the next long poll of that list at that version and
/// wait, so that a cache in front of the server, which may keep the empty answer for the followers
/// who waited behind it, sends that poll on to the server (see
/// `HTTPSource.waitForCommit(to:after:timeout:)`).
///
/// ```swift
/// let cursors = LongPollCursors()
/// let key = LongPollCursors.Key(list: "inbox", version: 41, wait: 30)
/// await cursors.note(58_819_680, at: key)
/// await cursors.cursor(at: key)   // 58_819_680
/// await cursors.cursor(at: LongPollCursors.Key(list: "inbox", version: 42, wait: 30))   // nil
/// ```
actor LongPollCursors {
    /// A long poll's list, the version it waits after, and its wait in seconds.
    struct Key: Hashable, Sendable {
        var list: String
        var version: Int
        var wait: Int
    }

    /// The most lists whose cursors are kept; past it, all are forgotten at once (a forgotten
    /// cursor costs one request that a cache answers).
    static let maxLists = 1024

    private var cursors: [String: (key: Key, cursor: Int)] = [:]

    /// The cursor to send with a long poll of `key`, if the last one of its list was `key` and
    /// ended empty.
    func cursor(at key: Key) -> Int? {
        guard let kept = cursors[key.list], kept.key == key else { return nil }
        return kept.cursor
    }

    /// Notes the cursor of a long poll of `key` that ended empty (`nil`: it did not, or carried
    /// none, and the next one starts again from 0).
    func note(_ cursor: Int?, at key: Key) {
        guard let cursor else {
            cursors[key.list] = nil
            return
        }
        if cursors[key.list] == nil, cursors.count >= Self.maxLists { cursors.removeAll(keepingCapacity: true) }
        cursors[key.list] = (key, cursor)
    }
}
