import Foundation
import ListMerge

extension StoreTransaction {
    /// Merges `push` into `list` exactly once, in this transaction: a push already recorded under
    /// its id is answered from the record (`duplicate` true) and changes nothing; otherwise its
    /// intents are rebased onto the locked head (ListMerge's rules), the result committed and the
    /// push recorded with the version that holds it and its conflicts, in the same transaction.
    /// `PushRule.verdict(for:fingerprint:recorded:latestSeq:)` decides which, and refuses a push
    /// whose id was taken by another push or is older than the client's latest.
    ///
    /// The journal records `author` (default: the push's own); the push is recorded, and known
    /// again, by its fingerprint as the client sent it.
    ///
    /// - Throws: `StoreError` `.invalidArgument` (an id no push may carry), `.listNotFound`,
    ///   `.pushMismatch` or `.pushOutOfOrder` (by `PushRule`), `.damaged`; what `commit` throws.
    /// - Complexity: that of `Rebase` for the push's intents, plus that of `commit`.
    package func merge(_ push: Push, into list: String, authoredBy author: String?? = nil) throws -> PushAnswer {
        let id = push.id
        if let problem = PushRule.problem(with: id) { throw StoreError(.invalidArgument, problem) }
        let fingerprint = push.fingerprint
        var answer: PushAnswer?
        _ = try commit(
            to: list, expectedVersion: nil, author: author ?? push.author, message: push.message,
            target: .rebase { head in
                guard head.listID != 0 else { throw StoreError.listNotFound(list, in: location) }
                let recorded = try recordedPushes(listID: head.listID, list: list, client: id.client, seqs: id.seq...id.seq).first
                let latest = try latestPushSeq(listID: head.listID, client: id.client)
                let verdict = try PushRule.verdict(
                    for: push, fingerprint: fingerprint, recorded: (recorded != nil, recorded?.fingerprint), latestSeq: latest)
                if verdict == .answerFromRecord, var recorded {
                    recorded.duplicate = true
                    answer = recorded
                    return nil
                }
                return Rebase(push.intents, onto: head.sections)
            },
            alsoWrite: { listID, result in
                guard answer == nil, let conflicts = result.mergeConflicts else { return }
                let report = Array(Conflict.jsonValue(conflicts).serialized().utf8)
                try insertPush(
                    listID: listID, id: id, version: result.version, conflictsJSON: report, pushedAt: _Time.iso8601(Date()),
                    fingerprint: fingerprint)
                if result.changed {
                    try markJournal(listID: listID, version: result.version, pushedAs: id, conflictsJSON: conflicts.isEmpty ? nil : report)
                }
                answer = PushAnswer(
                    list: list, version: result.version, seq: id.seq, duplicate: false, conflicts: conflicts, fingerprint: fingerprint)
            })
        guard let answer else { throw StoreError(.damaged, "the push \(id) to list '\(list)' was neither merged nor recorded") }
        return answer
    }
}
