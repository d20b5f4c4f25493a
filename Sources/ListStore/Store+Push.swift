import ListMerge

extension Store {
    /// Merges a replica's local change into `list`: rebases the push's intents onto the
    /// head with the rules of `Rebase` and commits the result as an ordinary version, in one
    /// transaction that also records the push's id and the conflict report. A push whose id is
    /// already recorded is answered from the record (`duplicate`) and applies nothing, so a replica
    /// may send a push again whenever it did not hear the answer.
    ///
    /// When `list` is itself a replica, the merged change is one of its local changes: it is queued in
    /// its outbox too, and reaches its own source with its next push.
    ///
    /// ```swift
    /// let answer = try store.merge(push, into: "inbox")
    /// answer.version        // the version that holds the change
    /// answer.conflicts      // what could not be honoured as written
    /// ```
    ///
    /// - Returns: the version holding the change (the head when the merge changed nothing), and the
    ///   conflicts.
    /// The push's id is checked first by `PushRule`: the same id recorded with other content (see
    /// `Push.fingerprint`) is refused with `.pushMismatch`, and a sequence number that is not the
    /// client's next on the list with `.pushOutOfOrder`; neither applies or records anything.
    ///
    /// - Throws: `StoreError` `.listNotFound`, `.invalidSnapshot` (a change that would make the list
    ///   invalid, such as content nested too deep), `.invalidArgument` (a client id that is empty,
    ///   longer than 1,024 bytes or holds control characters; a sequence number below 1),
    ///   `.pushMismatch`, `.pushOutOfOrder`, `.io`, `.damaged`.
    /// - Complexity: O(n + m) for n items and m intents (see `Rebase`), plus the commit's diff.
    public func merge(_ push: Push, into list: String) throws -> PushAnswer {
        try writing { transaction in try transaction.merge(push, into: list) }
    }

    /// The pushes of `client` with a sequence number in `seqs` that `list` recorded, in order, each
    /// with the version that holds it, its conflicts and its fingerprint (`duplicate` is false). At most 1,000 are
    /// returned; ask again from after the last one for more.
    ///
    /// A replica asks this to tell which of its changes the source holds when it never heard the
    /// answer of their push, and to learn their conflicts.
    ///
    /// ```swift
    /// let recorded = try source.pushes(from: try replica.clientID(), to: "inbox", seqs: 4...9)
    /// ```
    /// - Throws: `StoreError` `.storeNotFound`, `.listNotFound`, `.damaged`, `.io`.
    /// - Complexity: O(log p + k) for p recorded pushes and k returned (plus their reports).
    public func pushes(from client: String, to list: String, seqs: ClosedRange<Int>) throws -> [PushAnswer] {
        try reading { try $0.pushes(from: client, to: list, seqs: seqs) }
    }

    /// `merge(_:into:)`, written off the cooperative thread pool (GRDB's async access).
    public func merge(_ push: Push, into list: String) async throws -> PushAnswer {
        try await writing { try $0.merge(push, into: list) }
    }

    /// `pushes(from:to:seqs:)`, read off the cooperative thread pool.
    public func pushes(from client: String, to list: String, seqs: ClosedRange<Int>) async throws -> [PushAnswer] {
        try await reading { try $0.pushes(from: client, to: list, seqs: seqs) }
    }
}
