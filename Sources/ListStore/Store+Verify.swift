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
        try reading { try $0.verify(list: list, progress: progress) }
    }

    /// `verify(list:progress:)`, read off the cooperative thread pool (GRDB's async access);
    /// `progress` is called on the thread that reads the store.
    public func verify(
        list: String? = nil, progress: (@Sendable (VerificationProgress) -> Void)? = nil
    ) async throws -> VerificationReport {
        try await reading { try $0.verify(list: list, progress: progress) }
    }
}
