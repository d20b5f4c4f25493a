import GRDB
import ListMerge

extension Store {
    /// Checks the store: SQLite's integrity check, then, for every list (or only `list`), a replay of
    /// the journal from the base snapshot that must reproduce every stored digest and count, and at
    /// the end the head rows, their content hashes and the head digest.
    ///
    /// ```swift
    /// let report = try store.verify()
    /// for list in report.lists where !list.isValid {
    ///     print(list.name, "diverges at version", list.firstDivergentVersion ?? -1, list.problem ?? "")
    /// }
    /// ```
    /// A damaged or tampered store gives a report, not an error, whenever the damage lets the file
    /// be opened at all.
    ///
    /// - Parameters:
    ///   - list: the one list to replay (`nil`: every list).
    ///   - progress: called after each replayed entry.
    /// - Throws: `StoreError` `.storeNotFound`, `.listNotFound` (for `list`), `.notAStore`, `.damaged`
    ///   when the file cannot even be read, `.io`.
    /// - Complexity: O(v × n) for v journal entries over lists of n items (a digest per version).
    public func verify(list: String? = nil, progress: ((VerificationProgress) -> Void)? = nil) throws -> VerificationReport {
        let pool = try existingPool()
        return try Store.mapErrors(path: path) {
            try pool.read { db in
                var report = VerificationReport(integrityProblems: [], lists: [])
                do {
                    let rows = try String.fetchAll(db, sql: "PRAGMA integrity_check")
                    if rows != ["ok"] { report.integrityProblems = rows }
                } catch {
                    report.integrityProblems = ["integrity check failed: \(error)"]
                }
                let names: [String]
                if let list {
                    names = [try listInfo(db, list: list).name]
                } else {
                    do {
                        names = try String.fetchAll(db, sql: "SELECT name FROM list ORDER BY name")
                    } catch {
                        report.integrityProblems.append("the list table cannot be read: \(error)")
                        return report
                    }
                }
                for name in names {
                    report.lists.append(try verifyList(db, name: name, progress: progress))
                }
                return report
            }
        }
    }

    private func verifyList(_ db: Database, name: String, progress: ((VerificationProgress) -> Void)?) throws -> ListVerification {
        let info: ListRow
        do {
            info = try listInfo(db, list: name)
        } catch {
            return try .unreadable(name, error)
        }
        var check = _JournalReplayCheck(name: name, info: info)
        do {
            let versions = try Int.fetchAll(
                db, sql: "SELECT version FROM stored_snapshot WHERE list_id = ? ORDER BY version", arguments: [info.id])
            check = _JournalReplayCheck(name: name, info: info, storedSnapshots: versions)
            while check.needsEntries {
                check.replay(try entries(db, info: info, after: check.version, through: info.headVersion, limit: 256), progress: progress)
            }
            guard check.checkHeadDigest() else { return check.result }
            let head = try loadHead(db, listID: info.id, version: info.headVersion, digest: info.headDigest)
            check.check(head: head)
            guard check.result.isValid else { return check.result }
            if let pending = try pendingState(db, info: info) { check.check(replica: pending, head: head) }
            let stored = try _RawStatement(db, "SELECT version, snapshot FROM stored_snapshot WHERE list_id = ? ORDER BY version")
            stored.bind(1, info.id)
            defer { stored.reset() }
            while check.result.isValid, try stored.step() {
                check.check(storedSnapshot: Int(stored.int64(0)), document: stored.bytes(1))
            }
        } catch {
            check.diverge(at: check.version + 1, "\(error)")
        }
        return check.result
    }
}
