import Foundation
import ListJSON
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
    /// `rebasedAhead` is the push rebased before this transaction (`rebaseAhead`): it is taken when
    /// the head is still the one it was made on, and the push rebased again otherwise.
    ///
    /// - Throws: `StoreError` `.invalidArgument` (an id no push may carry), `.listNotFound` (also for a push made for a list deleted since),
    ///   `.pushMismatch` or `.pushOutOfOrder` (by `PushRule`), `.damaged`; what `commit` throws;
    ///   `CancellationError` once `isStopped` says so.
    /// - Complexity: that of `Rebase` for the push's intents (none with a usable `rebasedAhead`),
    ///   plus that of `commit`.
    package func merge(
        _ push: Push, into list: String, authoredBy author: String?? = nil, rebasedAhead: RebasedPush? = nil,
        stoppingWhen isStopped: @escaping () -> Bool = { false }
    ) throws -> PushAnswer {
        let id = push.id
        if let problem = PushRule.problem(with: id) { throw StoreError(.invalidArgument, problem) }
        // The fingerprint (a hash of the push's JSON) is made beside the rebase: it is needed to
        // tell a retry apart, and to record the push once it is merged.
        let fingerprint = _Background { push.fingerprint }
        var answer: PushAnswer?
        _ = try commit(
            to: list, expectedVersion: nil, author: author ?? push.author, message: push.message,
            target: .rebase { head, sections in
                guard head.listID != 0 else { throw StoreError.listNotFound(list, in: location) }
                if let made = push.listID, try listRow(list, locking: false).uid != made {
                    throw StoreError(
                        .listNotFound,
                        "list '\(list)' is not the list this change was made for: that list was deleted, and a new list took its name")
                }
                let recorded = try recordedPushes(listID: head.listID, list: list, client: id.client, seqs: id.seq...id.seq).first
                let latest = try latestPushSeq(listID: head.listID, client: id.client)
                let verdict = try PushRule.verdict(
                    for: push, fingerprint: fingerprint.wait(), recorded: (recorded != nil, recorded?.fingerprint), latestSeq: latest)
                if verdict == .answerFromRecord, var recorded {
                    recorded.duplicate = true
                    answer = recorded
                    return nil
                }
                var rebase: Rebase<_MergeItem>
                if let rebasedAhead, rebasedAhead.isOnto(head) {
                    rebase = rebasedAhead.rebase
                } else {
                    rebase = try Rebase(push.intents, onto: try sections(TouchedItems(push.intents)), stoppingWhen: isStopped)
                }
                rebase.conflicts = try reportingUnknownSections(in: rebase.conflicts, of: push, onto: head)
                return rebase
            },
            alsoWrite: { listID, result in
                guard answer == nil, let conflicts = result.mergeConflicts else { return }
                let report = Array(Conflict.jsonValue(conflicts).serialized().utf8)
                try insertPush(
                    listID: listID, id: id, version: result.version, conflictsJSON: report, pushedAt: _Time.iso8601(Date()),
                    fingerprint: fingerprint.wait())
                if result.changed {
                    try markJournal(listID: listID, version: result.version, pushedAs: id, conflictsJSON: conflicts.isEmpty ? nil : report)
                }
                answer = PushAnswer(
                    list: list, version: result.version, seq: id.seq, duplicate: false, conflicts: conflicts, fingerprint: fingerprint.wait())
            })
        guard let answer else { throw StoreError(.damaged, "the push \(id) to list '\(list)' was neither merged nor recorded") }
        return answer
    }

    /// `conflicts` with those that blame a missing section on theirs (`sectionDeleted`, and
    /// `deleted` for a section) made `unknownSection` when the list never had a section of that id:
    /// none in `head`, none inserted by the push, none among the sections the list deleted (when it
    /// keeps them: `deletedSections`; otherwise `conflicts` as they are).
    /// - Complexity: O(sections of the head + intents), and one read of the deleted sections per
    ///   256 candidates, only when a conflict names a missing section.
    private func reportingUnknownSections(in conflicts: [Conflict], of push: Push, onto head: StoredHead) throws -> [Conflict] {
        func missingSection(_ conflict: Conflict) -> ExactString? {
            switch conflict.kind {
            case .sectionDeleted: conflict.section.map { ExactString($0.id) }
            case .deleted where conflict.section == nil: ExactString(conflict.item.id)
            default: nil
            }
        }
        var candidates = Set(conflicts.compactMap(missingSection))
        guard !candidates.isEmpty else { return conflicts }
        for section in head.sections { candidates.remove(ExactString(section.model.id)) }
        for case .insertSection(let ref, _, _, _, _) in push.intents { candidates.remove(ExactString(ref.id)) }
        guard !candidates.isEmpty, let deleted = try deletedSections(listID: head.listID, among: candidates) else { return conflicts }
        let never = candidates.subtracting(deleted)
        return conflicts.map { conflict in
            guard let id = missingSection(conflict), never.contains(id) else { return conflict }
            var unknown = conflict
            unknown.kind = .unknownSection
            return unknown
        }
    }

    /// Rebases `push` onto the head of `list` as this (read) transaction sees it, so that a large
    /// push's merge is made before the write that commits it and the writers of other lists do not
    /// wait on it; `nil` when the push carries an id no push may carry or the list already recorded
    /// it (the write answers those).
    /// - Throws: `StoreError` `.listNotFound`, `.damaged`; `CancellationError` once `isStopped` says so.
    /// - Complexity: O(n) to read the head's n items, plus that of `Rebase`.
    package func rebaseAhead(_ push: Push, into list: String, stoppingWhen isStopped: () -> Bool) throws -> RebasedPush? {
        guard PushRule.problem(with: push.id) == nil else { return nil }
        let info = try listRow(list, locking: false)
        let recorded = try recordedPushes(listID: info.id, list: list, client: push.id.client, seqs: push.id.seq...push.id.seq)
        guard recorded.isEmpty else { return nil }
        return RebasedPush(
            listID: info.id, version: info.headVersion, digest: info.headDigest,
            rebase: try Rebase(push.intents, onto: [_MergeSection](try headSections(listID: info.id)), stoppingWhen: isStopped))
    }
}

extension StoreTransaction {
    /// What the record of pushes says of `client`'s pushes to the list with a sequence number in
    /// `seqs`, in order, at most 1,000 (`duplicate` false): each push recorded on its own with its
    /// version, report and fingerprint; each push of a run pruning folded with the run's version,
    /// its fingerprint and no report.
    /// - Throws: `StoreError` `.damaged`.
    /// - Complexity: O(answers), plus the engine's lookup.
    package func recordedPushes(listID: Int64, list: String, client: String, seqs: ClosedRange<Int>) throws -> [PushAnswer] {
        var answers: [PushAnswer] = []
        for record in try pushRecords(listID: listID, client: client, seqs: seqs) where answers.count < 1000 {
            answers += record.answers(for: seqs, list: list, limit: 1000 - answers.count)
        }
        return answers
    }

    /// Folds the list's record of pushes merged into versions up to `version` (the new base of a
    /// prune), client by client, by `PushRecord.fold(_:latestSeq:)`; how many rows it removed.
    /// - Throws: `StoreError` `.damaged`.
    /// - Complexity: O(r log r) for the r rows merged up to `version`, plus the pushes of the runs
    ///   rows join.
    package func foldPushRecords(listID: Int64, through version: Int) throws -> Int {
        var removed = 0
        // Client ids are told apart by their bytes, as the table's key does (Swift's `==` would
        // take two spellings of one character for one client).
        let byClient = Dictionary(grouping: try pushRecords(listID: listID, mergedThrough: version)) { Array($0.client.utf8) }
        for key in byClient.keys.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            let records = byClient[key]!
            guard let latest = try latestPushSeq(listID: listID, client: records[0].client),
                  let folded = try PushRecord.fold(records, latestSeq: latest)
            else { continue }
            try replacePushRecords(listID: listID, with: folded)
            removed += records.filter { $0.seq <= folded.seq }.count - 1
        }
        return removed
    }
}

/// A push rebased before the transaction that commits it, with the head it was made on.
///
/// Not API: package-visible for the store's logic.
package struct RebasedPush: Sendable {
    let listID: Int64
    let version: Int
    let digest: ListDigest
    let rebase: Rebase<_MergeItem>

    /// Whether `head` is the head the push was rebased onto.
    func isOnto(_ head: StoredHead) -> Bool {
        head.listID == listID && head.version == version && head.digest == digest
    }
}
