extension Store {
    /// The store's identity.
    ///
    /// ```swift
    /// let id = try store.identity()    // e.g. 1f0c…/1
    /// ```
    /// - Throws: `StoreError` `.storeNotFound`, `.damaged`, `.io`.
    /// - Complexity: O(1).
    public func identity() throws -> StoreIdentity {
        try reading { try $0.identity() }
    }

    /// Bumps the epoch, telling every consumer that this store's history may not be the one they
    /// followed: call it after restoring the file from a backup, or after rewriting history. Cursors
    /// of the old epoch then get "resync required" (epoch changed). The store also gets a new client
    /// id for its pushes, so that local changes made after a restore are never mistaken
    /// for ones a source already merged.
    ///
    /// ```swift
    /// let restored = try store.advanceEpoch()    // e.g. 1f0c…/2
    /// ```
    /// - Returns: the new identity.
    /// - Throws: `StoreError` `.storeNotFound`, `.damaged`, `.io`.
    /// - Complexity: O(1).
    @discardableResult
    public func advanceEpoch() throws -> StoreIdentity {
        try writing { try $0.advanceEpoch() }
    }

    /// `identity()`, read off the cooperative thread pool (GRDB's async access).
    public func identity() async throws -> StoreIdentity {
        try await reading { try $0.identity() }
    }

    /// `advanceEpoch()`, written off the cooperative thread pool.
    @discardableResult
    public func advanceEpoch() async throws -> StoreIdentity {
        try await writing { try $0.advanceEpoch() }
    }
}
