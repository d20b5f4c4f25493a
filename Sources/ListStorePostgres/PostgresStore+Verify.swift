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
        try await writing(.readOnly) { try $0.verify(list: list, progress: progress) }
    }
}
