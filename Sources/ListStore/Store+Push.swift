import Foundation
import GRDB
import ListJSON
import ListMerge

extension Store {
    /// Merges a replica's local change into `list`: rebases the push's intents onto the
    /// head with the rules of `Rebase` and commits the result as an ordinary version, in one
    /// transaction that also records the push's id and the conflict report. A push whose id is
    /// already recorded is answered from the record (`duplicate`) and applies nothing, so a replica
    /// may send a push again whenever it did not hear the answer.
    ///
    /// When `list` is itself a replica, the merged change is one of its local changes: it is queued in
    /// its outbox too, and reaches its own source with its next push.
    ///
    /// ```swift
    /// let answer = try store.merge(push, into: "inbox")
    /// answer.version        // the version that holds the change
    /// answer.conflicts      // what could not be honoured as written
    /// ```
    ///
    /// - Returns: the version holding the change (the head when the merge changed nothing), and the
    ///   conflicts.
    /// The push's id is checked first by `PushRule`: the same id recorded with other content (see
    /// `Push.fingerprint`) is refused with `.pushMismatch`, and a sequence number that is not the
    /// client's next on the list with `.pushOutOfOrder`; neither applies or records anything.
    ///
    /// - Throws: `StoreError` `.listNotFound`, `.invalidSnapshot` (a change that would make the list
    ///   invalid, such as content nested too deep), `.invalidArgument` (a client id that is empty,
    ///   longer than 1,024 bytes or holds control characters; a sequence number below 1),
    ///   `.pushMismatch`, `.pushOutOfOrder`, `.io`, `.damaged`.
    /// - Complexity: O(n + m) for n items and m intents (see `Rebase`), plus the commit's diff.
    public func merge(_ push: Push, into list: String) throws -> PushAnswer {
        try writing { transaction in try transaction.merge(push, into: list) }
    }

    /// The pushes of `client` with a sequence number in `seqs` that `list` recorded, in order, each
    /// with the version that holds it, its conflicts and its fingerprint (`duplicate` is false). At most 1,000 are
    /// returned; ask again from after the last one for more.
    ///
    /// A replica asks this to tell which of its changes the source holds when it never heard the
    /// answer of their push, and to learn their conflicts.
    ///
    /// ```swift
    /// let recorded = try source.pushes(from: try replica.clientID(), to: "inbox", seqs: 4...9)
    /// ```
    /// - Throws: `StoreError` `.storeNotFound`, `.listNotFound`, `.damaged`, `.io`.
    /// - Complexity: O(log p + k) for p recorded pushes and k returned (plus their reports).
    public func pushes(from client: String, to list: String, seqs: ClosedRange<Int>) throws -> [PushAnswer] {
        let pool = try existingPool()
        // A client id no push may carry was never recorded.
        guard PushRule.problem(with: PushID(client: client, seq: 1)) == nil else { return [] }
        return try Store.mapErrors(path: path) {
            try pool.read { db in
                try Self.recordedPushes(db, listID: try listInfo(db, list: list).id, client: client, seqs: seqs, list: list)
            }
        }
    }

    /// The recorded pushes of `client` with a sequence number in `seqs`, in order, at most 1,000.
    static func recordedPushes(
        _ db: Database, listID: Int64, client: String, seqs: ClosedRange<Int>, list: String
    ) throws -> [PushAnswer] {
        try Row.fetchAll(
            db,
            sql: """
                SELECT seq, version, conflicts, fingerprint FROM push
                WHERE list_id = ? AND client_id = ? AND seq BETWEEN ? AND ? ORDER BY seq LIMIT 1000
                """,
            arguments: [listID, client, seqs.lowerBound, seqs.upperBound]
        ).map { row in
            let seq: Int = row[0]
            let report: String = row[2]
            return PushAnswer(
                list: list, version: row[1], seq: seq, duplicate: false,
                conflicts: try Conflict.storedReport(Array(report.utf8), of: "push \(PushID(client: client, seq: seq)) of list '\(list)'"),
                fingerprint: row[3])
        }
    }

    /// Decodes a stored conflict report.
    /// - Throws: `StoreError.damaged`.
}
