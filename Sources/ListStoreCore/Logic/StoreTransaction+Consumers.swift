import Foundation

extension StoreTransaction {
    /// Registers consumer `name` of `list` at `version` (default: the list's base), or, with
    /// `registering` false, moves the registered consumer to `version` (an acknowledgement); returns
    /// the consumer as written. A consumer may stand below the base (pruning was forced past it),
    /// never above the head.
    ///
    /// - Throws: `StoreError` `.invalidArgument` (a name no consumer may take, or no such consumer to
    ///   acknowledge), `.listNotFound`, `.versionNotFound`.
    /// - Complexity: O(c log c) for the list's c consumers.
    package func setConsumer(
        _ name: String, of list: String, version: Int?, registering: Bool
    ) throws
        -> ConsumerInfo
    {
        if let problem = registering
            ? _Names.problem(withNew: name, "consumer") : _Names.problem(with: name, "consumer")
        {
            throw StoreError(.invalidArgument, problem)
        }
        let info = try listRow(list, locking: true)
        let version = version ?? info.baseVersion
        guard version >= 0, version <= info.headVersion else {
            throw StoreError(
                .versionNotFound,
                "version \(version) of list '\(list)' is not in its history (versions \(info.baseVersion) to \(info.headVersion))"
            )
        }
        let now = _Time.iso8601(Date())
        if registering {
            try insertConsumer(name, listID: info.id, version: version, at: now)
        } else if try !updateConsumer(name, listID: info.id, version: version, at: now) {
            throw StoreError(
                .invalidArgument, "no consumer named '\(name)' is registered on list '\(list)'")
        }
        guard let written = try consumers(of: info).first(where: { $0.name == name }) else {
            throw StoreError(
                .damaged, "consumer '\(name)' of list '\(list)' vanished while it was written")
        }
        return written
    }

    /// Removes consumer `name` of `list`; whether there was one.
    /// - Throws: `StoreError` `.listNotFound`.
    package func unregisterConsumer(_ name: String, of list: String) throws -> Bool {
        try deleteConsumer(name, listID: try listRow(list, locking: true).id)
    }

    /// Drops the journal of `list` up to the base `rule` picks (held back by its consumers unless
    /// `force`): the snapshot at the new base is kept in the list's row, checked against its
    /// journal digest first, and the stored snapshots up to it go. The record of pushes merged up
    /// to the base is folded, client by client, into one row per run (`foldPushRecords`). The blobs
    /// only the dropped versions referred to are released (`releasePrunedBlobs`), and the list's
    /// uploads that sent nothing for a week are given up (`giveUpIdleBlobUploads`), whether or not
    /// the base moves.
    ///
    /// - Throws: `StoreError` `.listNotFound`, `.invalidArgument` (by `PruneRule`), `.damaged`.
    /// - Complexity: O(n) to rebuild the snapshot at the new base, plus the entries removed.
    package func prune(_ list: String, _ rule: PruneRule, force: Bool) throws -> PruneResult {
        let info = try listRow(list, locking: true)
        let (base, heldBy) = try rule.base(for: info, consumers: try consumers(of: info), force: force)
        var result = PruneResult(
            list: list, previousBase: info.baseVersion, base: base, head: info.headVersion,
            removedEntries: 0, heldBy: heldBy)
        result.abandonedUploads = try giveUpIdleBlobUploads(listID: info.id)
        guard base > info.baseVersion else { return result }
        let snapshot = try self.snapshot(of: info, at: base).snapshot
        try snapshot.checkDigest()
        let document = snapshot.documentJSON
        result.releasedBlobs = try releasePrunedBlobs(of: info, through: base, baseDocument: document)
        result.removedEntries = try deleteJournal(listID: info.id, through: base)
        try forgetFeed(listID: info.id, through: base)
        result.removedPushRecords = try foldPushRecords(listID: info.id, through: base)
        try setBase(listID: info.id, version: base, snapshot: document)
        // The base is now the newest stored point at or before itself: stored snapshots up to it
        // go; the list keeps counting from its newest stored point.
        try dropStoredSnapshots(listID: info.id, through: base)
        // Readers that keep what they read per commit generation (the servers' pages) read anew.
        try announce(nil, of: list)
        return result
    }
}
