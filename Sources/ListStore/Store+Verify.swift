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
                    report.lists.append(try SQLiteTransaction(self, db).verifyList(name, progress: progress))
                }
                return report
            }
        }
    }
}
