/// The plan of a replica's next journal entry, made on another thread while the entry before it is
/// written and flushed: a pull applies one entry per transaction, and each transaction's flush
/// leaves a core idle that the next entry's replay can use. A plan is kept for the head it was made
/// on (store, list row, version and digest: equal digests mean equal sections, so the plan is the
/// same) and the stages it replays, and taken only by a commit that replays those stages on such a
/// head; any other commit replays its stages itself.
///
/// ```swift
/// _PreparedReplay.prepare(next.stagesJSON, on: newHead, at: location)   // before the flush
/// let plan = try _PreparedReplay.take(json, on: head, at: location)      // the next transaction
///     ?? CommitPlan.replaying(json, on: head) { what }
/// ```
///
/// Not API.
package enum _PreparedReplay {
    /// What a plan was made for.
    struct Key: Equatable {
        var location: String
        var listID: Int64
        var version: Int
        var digest: ListDigest
        var stagesJSON: [UInt8]
    }

    /// The plans being made or kept, oldest first: one per list of a store (a list's next one
    /// replaces it), the last `capacity` lists. A pull takes each plan with the next commit, and
    /// prepares none for the last entry it has, so plans stay only where a pull stopped midway.
    private static let kept = _Locked<[(key: Key, plan: _Background<CommitPlan?>)]>([])
    private static let capacity = 8

    /// Starts making the plan of `stagesJSON` on `head`, in place of the plan kept for the list.
    /// - Complexity: O(1) here; the replay's on another thread.
    package static func prepare(_ stagesJSON: [UInt8], on head: StoredHead, at location: String) {
        let key = Key(location: location, listID: head.listID, version: head.version, digest: head.digest, stagesJSON: stagesJSON)
        let plan = _Background { try? CommitPlan.replaying(stagesJSON, on: head) { "" } }
        kept.withLock { kept in
            kept.removeAll { $0.key.location == location && $0.key.listID == head.listID }
            kept.append((key, plan))
            if kept.count > capacity { kept.removeFirst(kept.count - capacity) }
        }
    }

    /// The plan of `stagesJSON` on `head` when one was prepared for them (waiting for it if it is
    /// still being made), else `nil`; the plan is given once.
    /// - Complexity: O(size of the stages) to compare them, plus the wait.
    package static func take(_ stagesJSON: [UInt8], on head: StoredHead, at location: String) -> CommitPlan? {
        let key = Key(location: location, listID: head.listID, version: head.version, digest: head.digest, stagesJSON: stagesJSON)
        let plan = kept.withLock { kept -> _Background<CommitPlan?>? in
            guard let k = kept.firstIndex(where: { $0.key == key }) else { return nil }
            return kept.remove(at: k).plan
        }
        return plan?.wait()
    }
}
