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
    /// - Parameter progress: called after each replayed entry.
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
                    report.lists.append(verifyList(db, name: name, progress: progress))
                }
                return report
            }
        }
    }

    private func verifyList(_ db: Database, name: String, progress: ((VerificationProgress) -> Void)?) -> ListVerification {
        var result = ListVerification(
            name: name, baseVersion: 0, headVersion: 0, versionsVerified: 0, firstDivergentVersion: nil, problem: nil)
        var version = 0
        do {
            let info = try listInfo(db, list: name)
            result.baseVersion = info.baseVersion
            result.headVersion = info.headVersion
            version = info.baseVersion
            var state = try info.baseSections()
            var digest = ListDigest.of(state)
            let total = info.headVersion - info.baseVersion
            while version < info.headVersion {
                let page = try entries(db, info: info, after: version, through: info.headVersion, limit: 256)
                guard !page.isEmpty else {
                    return diverged(&result, at: version + 1, "journal entry \(version + 1) is missing")
                }
                for entry in page {
                    guard entry.version == version + 1 else {
                        return diverged(&result, at: version + 1, "journal entry \(version + 1) is missing")
                    }
                    guard entry.parentVersion == version else {
                        return diverged(
                            &result, at: entry.version, "version \(entry.version) names parent \(entry.parentVersion), not \(version)")
                    }
                    do {
                        state = try entry.changeset(applyingTo: state).result
                    } catch {
                        return diverged(&result, at: entry.version, "\(error)")
                    }
                    digest = ListDigest.of(state)
                    guard digest == entry.digest else {
                        return diverged(
                            &result, at: entry.version,
                            "replaying version \(entry.version) gives digest \(digest.hex), the journal says \(entry.digest.hex)")
                    }
                    let elements = state.reduce(0) { $0 + $1.elements.count }
                    guard entry.sectionCount == state.count, entry.elementCount == elements else {
                        return diverged(
                            &result, at: entry.version,
                            "version \(entry.version) records \(entry.sectionCount) sections and \(entry.elementCount) elements, the replay has \(state.count) and \(elements)")
                    }
                    version = entry.version
                    result.versionsVerified += 1
                    progress?(VerificationProgress(list: name, completed: result.versionsVerified, total: total))
                }
            }
            // The head rows must be the replayed snapshot, with correct hashes.
            guard info.headDigest == digest else {
                return diverged(
                    &result, at: info.headVersion,
                    "the head digest \(info.headDigest.hex) is not the replayed digest \(digest.hex)")
            }
            let head = try loadHead(db, listID: info.id, version: info.headVersion, digest: info.headDigest)
            guard head.sections == state else {
                return diverged(&result, at: info.headVersion, "the head rows differ from the replayed snapshot")
            }
            var flat = 0
            for (s, section) in head.sections.enumerated() {
                guard head.sectionHashes[s] == ContentHash(of: section.model.content) else {
                    return diverged(&result, at: info.headVersion, "section \(s) of the head has a wrong content hash")
                }
                for (e, element) in section.elements.enumerated() {
                    guard head.elementHashes[flat] == ContentHash(of: element.content) else {
                        return diverged(
                            &result, at: info.headVersion, "element \(e) of section \(s) of the head has a wrong content hash")
                    }
                    flat += 1
                }
            }
            // A replica list: its head is its outbox rebased onto its confirmed state (DESIGN §8).
            if let pending = try pendingState(db, info: info) {
                guard ListDigest.of(pending.confirmed) == pending.position.digest else {
                    return diverged(
                        &result, at: info.headVersion,
                        "the confirmed state is not source version \(pending.position.version) (its digest differs)")
                }
                let rebased = pending.outbox.reduce(pending.confirmed) { Rebase($1.intents, onto: $0).snapshot }
                guard rebased == head.sections else {
                    return diverged(
                        &result, at: info.headVersion,
                        "the head is not the \(pending.outbox.count) local changes rebased onto the confirmed state")
                }
            }
        } catch {
            return diverged(&result, at: version + 1, "\(error)")
        }
        return result
    }

    private func diverged(_ result: inout ListVerification, at version: Int, _ problem: String) -> ListVerification {
        result.firstDivergentVersion = version
        result.problem = problem
        return result
    }
}
