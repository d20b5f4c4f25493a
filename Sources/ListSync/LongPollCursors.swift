/// The cursor of each list's last long poll that ended without a commit, at the version it waited
/// after: `HTTPSource` sends it with the next long poll of that list at that version, so that a cache
/// in front of the server, which may keep the empty answer for the followers who waited behind it,
/// sends that poll on to the server (see `HTTPSource.waitForCommit(to:after:timeout:)`).
///
/// ```swift
/// let cursors = LongPollCursors()
/// await cursors.note(58_819_680, of: "inbox", at: 41)
/// await cursors.cursor(of: "inbox", at: 41)   // 58_819_680
/// await cursors.cursor(of: "inbox", at: 42)   // nil
/// ```
actor LongPollCursors {
    /// The most lists whose cursors are kept; past it, the older ones are forgotten (a forgotten
    /// cursor costs one request the cache answers).
    static let maxLists = 1024

    private var cursors: [String: (version: Int, cursor: Int)] = [:]

    /// The cursor to send with a long poll of `list` after `version`, if its last one there ended empty.
    func cursor(of list: String, at version: Int) -> Int? {
        guard let kept = cursors[list], kept.version == version else { return nil }
        return kept.cursor
    }

    /// Notes the cursor of a long poll of `list` after `version` that ended empty (`nil`: it did not,
    /// or carried none, and the next one is sent without).
    func note(_ cursor: Int?, of list: String, at version: Int) {
        guard let cursor else {
            cursors[list] = nil
            return
        }
        if cursors[list] == nil, cursors.count >= Self.maxLists { cursors.removeAll(keepingCapacity: true) }
        cursors[list] = (version, cursor)
    }
}
