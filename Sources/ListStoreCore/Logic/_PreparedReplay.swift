/// The plan of a replica's next journal entry, made on another thread while the entry before it is
/// written and flushed: a pull applies one entry per transaction, and each transaction's flush
/// leaves a core idle that the next entry's replay can use. A plan is kept for the head it was made
/// on (store, list row, version and digest: equal digests mean equal sections, so the plan is the
/// same) and the stages it replays, and taken only by a commit that replays those stages on such a
/// head; any other commit replays its stages itself.
///
/// One plan is kept (`shared`, for the whole process): a pull takes each with its next commit and
/// prepares none for the last entry it has, so a plan outlives its pull only when the pull stopped
/// midway (cancelled, refused), and then until the next plan replaces it. A replay nobody takes
/// still runs to its end on its thread.
///
/// ```swift
/// _PreparedReplay.shared.prepare(next.stagesJSON, on: newHead, at: location)   // before the flush
/// let plan = _PreparedReplay.shared.take(json, on: head, at: location)         // the next transaction
///     ?? (try CommitPlan.replaying(json, on: head) { what })
/// ```
///
/// Not API.
package final class _PreparedReplay: Sendable {
    /// What a plan was made for.
    struct Key: Equatable {
        var location: String
        var listID: Int64
        var version: Int
        var digest: ListDigest
        var stagesJSON: [UInt8]
    }

    /// The plans of the process's replica commits.
    package static let shared = _PreparedReplay()

    /// The plan being made or kept.
    private let slot = _Locked<(key: Key, plan: _Background<CommitPlan?>)?>(nil)

    /// A place for one plan (tests make their own).
    package init() {}

    /// Starts making the plan of `stagesJSON` on `head`, in place of the plan kept.
    /// - Complexity: O(1) here; the replay's on another thread.
    package func prepare(_ stagesJSON: [UInt8], on head: StoredHead, at location: String) {
        let key = Key(location: location, listID: head.listID, version: head.version, digest: head.digest, stagesJSON: stagesJSON)
        let plan = _Background { (try? CommitPlan.replaying(stagesJSON, on: head, describedAs: { "" }, reading: nil)) ?? nil }
        let replaced = slot.withLock { slot in
            defer { slot = (key, plan) }
            return slot
        }
        // Let go of outside the lock (a plan holds a whole snapshot).
        withExtendedLifetime(replaced) {}
    }

    /// The plan of `stagesJSON` on `head` when one was prepared for them (waiting for it if it is
    /// still being made), else `nil`; the plan is given once.
    /// - Complexity: O(size of the stages) to compare them, plus the wait.
    package func take(_ stagesJSON: [UInt8], on head: StoredHead, at location: String) -> CommitPlan? {
        let key = Key(location: location, listID: head.listID, version: head.version, digest: head.digest, stagesJSON: stagesJSON)
        let plan = slot.withLock { slot -> _Background<CommitPlan?>? in
            guard let kept = slot, kept.key == key else { return nil }
            slot = nil
            return kept.plan
        }
        return plan?.wait()
    }
}
