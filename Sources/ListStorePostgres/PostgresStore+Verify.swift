@_spi(Replication) import ListStoreCore
import PostgresNIO

extension PostgresStore {
    /// Checks the store as `Store.verify(list:progress:)` does: for every list (or only `list`), a
    /// replay of the journal from the base snapshot that must reproduce every stored digest and
    /// count, and at the end the head rows, their content hashes and the head digest. Everything is
    /// read in one consistent (repeatable read) transaction; the replay runs on the stores' own
    /// threads. PostgreSQL checks its own pages, so `integrityProblems` stays empty.
    ///
    /// ```swift
    /// let report = try await store.verify()
    /// for list in report.lists where !list.isValid {
    ///     print(list.name, "diverges at version", list.firstDivergentVersion ?? -1, list.problem ?? "")
    /// }
    /// ```
    /// - Parameter progress: called after each replayed entry.
    /// - Throws: `StoreError` `.listNotFound` (for `list`), `.io`; `CancellationError` when the task
    ///   is cancelled before the read starts. Damage gives a report, not an error.
    /// - Complexity: O(v × n) for v journal entries over lists of n items (a digest per version).
    public func verify(
        list: String? = nil, progress: (@Sendable (VerificationProgress) -> Void)? = nil
    ) async throws -> VerificationReport {
        try await transaction(.readOnly) { connection in
            var names: [String] = []
            if let list {
                names = [try await listInfo(connection, list: list).name]
            } else {
                for try await name in try await connection.query("SELECT name FROM list ORDER BY name COLLATE \"C\"", logger: logger).decode(String.self) {
                    names.append(name)
                }
            }
            var report = VerificationReport(integrityProblems: [], lists: [])
            for name in names {
                report.lists.append(try await verifyList(connection, name: name, progress: progress))
            }
            return report
        }
    }

    private func verifyList(
        _ connection: PostgresConnection, name: String, progress: (@Sendable (VerificationProgress) -> Void)?
    ) async throws -> ListVerification {
        let info: ListRow
        do {
            info = try await listInfo(connection, list: name)
        } catch let error as PSQLError {
            throw error  // the server failed the read: not damage
        } catch {
            return try .unreadable(name, error)
        }
        var versions: [Int] = []
        for try await version in try await connection.query(
            "SELECT version FROM stored_snapshot WHERE list_id = \(info.id) ORDER BY version", logger: logger
        ).decode(Int64.self) {
            versions.append(Int(version))
        }
        var check = _JournalReplayCheck(name: name, info: info, storedSnapshots: versions)
        do {
            while check.needsEntries {
                let page = try await entries(connection, info: info, after: check.version, through: info.headVersion, limit: 256)
                check = try await _BlockingThreads.shared.run { [check] in
                    var check = check
                    check.replay(page, progress: progress)
                    return check
                }
            }
            guard check.checkHeadDigest() else { return check.result }
            let head = try await PostgresTransaction.threads.runIfActive { [self] in
                try PostgresTransaction(self, connection).loadHead(
                    listID: info.id, version: info.headVersion, digestHex: info.headDigest.hex)
            }
            let pending = try await pendingState(connection, info: info)
            check = try await _BlockingThreads.shared.run { [check] in
                var check = check
                check.check(head: head)
                // A replica list: its head is its outbox rebased onto its confirmed state.
                if let pending { check.check(replica: pending, head: head) }
                return check
            }
            // Each stored snapshot must be the version it names (one read at a time).
            for version in versions where check.result.isValid {
                for try await document in try await connection.query(
                    "SELECT snapshot FROM stored_snapshot WHERE list_id = \(info.id) AND version = \(Int64(version))", logger: logger
                ).decode(ByteBuffer.self) {
                    let bytes = Array(document.readableBytesView)
                    check = try await _BlockingThreads.shared.run { [check] in
                        var check = check
                        check.check(storedSnapshot: version, document: bytes)
                        return check
                    }
                }
            }
        } catch let error as CancellationError {
            throw error
        } catch let error as PSQLError {
            // The server failed the read (a timeout, a lost connection): not damage.
            throw error
        } catch let error as StoreError where error.code == .io {
            throw error
        } catch {
            check.diverge(at: check.version + 1, "\(error)")
        }
        return check.result
    }
}
