import Foundation
import ListMerge

extension StoreTransaction {
    /// Commits a replica list's new head from its source (`target`: the source's journal entry
    /// `entry` replayed, or its snapshot) with `source` as the list's position, in this transaction,
    /// as a pull does: refused (`.versionConflict`) when the list has local changes (the pull must
    /// rebase them) or, for an entry, when another pull moved the list's position meanwhile. The
    /// change is not a local change; a source entry that merged a push keeps that push's id and
    /// conflicts in this journal too. `check` runs with the result before anything else is
    /// written for the position, and may throw to write nothing; `then` writes last, in the same
    /// transaction (a replica set's cursor). `replayNext`: see `commit`.
    ///
    /// - Throws: `StoreError` `.versionConflict`, `.invalidListName`, `.invalidEdit`; what `commit`
    ///   and `check` throw.
    /// - Complexity: that of `commit`.
    package func commitReplica(
        to list: String, source: ReplicaSource, author: String?, message: String?, entry: JournalEntry?,
        target: CommitTarget,
        check: (CommitResult) throws -> Void, then: () throws -> Void = {}, replayNext: [UInt8]? = nil
    ) throws -> CommitResult {
        try withoutActuallyEscaping(check) { check in try withoutActuallyEscaping(then) { then in
            try commit(
                to: list, expectedVersion: nil, author: author, message: message, target: target,
                queueLocalChange: false, recordedDigest: entry?.digest, checksBlobs: false,
                checkFirst: { head in
                    guard head.listID != 0 else { return }
                    let state = try replicaState(listID: head.listID)
                    if state.hasLocalChanges {
                        // A local change landed since the replica looked: the pull must rebase it instead.
                        throw StoreError(
                            .versionConflict,
                            "list '\(list)' has local changes: a pull rebases them onto the source's head",
                            expectedVersion: head.version, currentVersion: head.version)
                    }
                    // The source's entry applies to the version it follows: another pull of this
                    // replica may have applied it meanwhile.
                    if let entry, state.sourceVersion != entry.parentVersion {
                        let recorded = state.sourceVersion ?? 0
                        throw StoreError(
                            .versionConflict,
                            "the replica list '\(list)' is at source version \(recorded), not \(entry.parentVersion): another pull moved it",
                            expectedVersion: entry.parentVersion, currentVersion: recorded)
                    }
                },
                alsoWrite: { listID, result in
                    try check(result)
                    if let entry, result.changed, entry.pushID != nil || !entry.conflicts.isEmpty {
                        // The source's entry names the push that made it: keep that, as author and message.
                        try markJournal(
                            listID: listID, version: result.version, pushedAs: entry.pushID,
                            conflictsJSON: entry.conflicts.isEmpty
                                ? nil : Array(Conflict.jsonValue(entry.conflicts).serialized().utf8))
                    }
                    let now = _Time.iso8601(Date())
                    var listID = listID
                    if listID == 0 {
                        // An empty source list: the replica list exists, without a version.
                        if let problem = _Names.problem(withNew: list, "list") {
                            throw StoreError(.invalidListName, problem)
                        }
                        listID = try insertList(list, createdAt: now, keepsDeletedSections: false)
                        _ = try setHead(listID: listID, version: 0, digest: result.digest, journalBytes: 0)
                    }
                    try setReplicaSource(source, listID: listID, updatedAt: now)
                    try then()
                }, replayNext: replayNext, replica: true)
        } }
    }

    /// Commits a pull of a replica list with local changes, in this transaction: `merged` (the
    /// remaining outbox rebased onto `confirmed`) becomes the head unless the head moved past
    /// `expectedVersion` (`.versionConflict`: a local change landed meanwhile) or another pull moved
    /// the list's position from `previous`; `position` becomes the confirmed source version, the
    /// outbox loses the entries `confirmedSeqs` and the others get the source version their push was
    /// recorded as (or none: pushed again), and the confirmed state is kept while entries remain.
    /// Non-empty `conflicts` (of answers learned late) become the last push's conflicts. `check`
    /// runs with the result before the outbox changes, and may throw to write nothing.
    ///
    /// - Throws: `StoreError` `.versionConflict`; what `commit` and `check` throw.
    /// - Complexity: that of `commit`, plus the outbox's entries.
    package func commitPull(
        _ merged: [ListSection], to list: String, expectedVersion: Int, position: ReplicaSource,
        previous: ReplicaSource,
        confirmed: [ListSection], confirmedSeqs: [Int], remaining: [(seq: Int, pushedVersion: Int?)],
        conflicts: [Conflict], message: String, check: (CommitResult) throws -> Void
    ) throws -> CommitResult {
        try withoutActuallyEscaping(check) { check in
            try commit(
                to: list, expectedVersion: expectedVersion, author: nil, message: message,
                target: .snapshot(merged),
                queueLocalChange: false, checksBlobs: false,
                alsoWrite: { listID, result in
                    guard try replicaSource(listID: listID) == previous else {
                        throw StoreError(
                            .versionConflict, "list '\(list)' was pulled meanwhile: its source position moved")
                    }
                    try check(result)
                    try deleteOutbox(listID: listID, seqs: confirmedSeqs)
                    for entry in remaining {
                        try setPushedVersion(entry.pushedVersion, listID: listID, seq: entry.seq, ifClient: nil)
                    }
                    // Kept while local changes remain.
                    let document =
                        try outboxCount(listID: listID) == 0
                        ? nil
                        : ListSnapshot(
                            list: list, version: position.version, digest: position.digest, sections: confirmed
                        ).documentJSON
                    try moveReplicaSource(
                        listID: listID, to: position, confirmed: document,
                        lastConflicts: conflicts.isEmpty
                            ? nil : Array(Conflict.jsonValue(conflicts).serialized().utf8),
                        updatedAt: _Time.iso8601(Date()))
                })
        }
    }
}
