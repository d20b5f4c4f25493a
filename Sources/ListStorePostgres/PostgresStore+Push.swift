import Foundation
import ListJSON
import ListMerge
import ListStoreCore
import PostgresNIO

extension PostgresStore {
    /// Merges a replica's local change into `list`, as `Store.merge(_:into:)` does:
    /// rebases the push's intents onto the head with the rules of `Rebase` and commits the result as
    /// an ordinary version, in one transaction that also records the push's id and its conflict
    /// report. A push whose id is recorded is answered from the record (`duplicate`) and applies
    /// nothing, so a replica may send a push again whenever it did not hear the answer.
    ///
    /// ```swift
    /// let answer = try await store.merge(push, into: "inbox")
    /// answer.version        // the version that holds the change
    /// answer.conflicts      // what could not be honoured as written
    /// ```
    ///
    /// - Returns: the version holding the change (the head when the merge changed nothing), and the
    ///   conflicts.
    /// The push's id is checked first by the same rule (`PushRule`): the same id recorded with
    /// other content is refused with `.pushMismatch`, a sequence number that is not the client's
    /// next with `.pushOutOfOrder`.
    ///
    /// - Throws: `StoreError` `.listNotFound`, `.invalidSnapshot` (a change that would make the list
    ///   invalid), `.invalidArgument` (a client id that is empty, longer than 1,024 bytes or holds
    ///   control characters, a sequence number below 1, an author or message holding U+0000),
    ///   `.pushMismatch`, `.pushOutOfOrder`, `.io`, `.damaged`; `CancellationError` when the task is
    ///   cancelled before the transaction starts. Nothing is written when it throws.
    /// - Complexity: O(n + m) for n items and m intents (see `Rebase`), plus the commit's diff.
    public func merge(_ push: Push, into list: String) async throws -> PushAnswer {
        try await writing { transaction in try transaction.merge(push, into: list) }
    }

    /// The pushes of `client` with a sequence number in `seqs` that `list` recorded, in order, each
    /// with the version that holds it and its conflicts (`duplicate` is false); at most 1,000, as
    /// `Store.pushes(from:to:seqs:)`.
    ///
    /// ```swift
    /// let recorded = try await source.pushes(from: client, to: "inbox", seqs: 4...9)
    /// ```
    /// - Throws: `StoreError` `.listNotFound`, `.damaged`, `.io`; `CancellationError` when the task is
    ///   cancelled before the read starts.
    /// - Complexity: O(log p + k) for p recorded pushes and k returned (plus their reports).
    public func pushes(from client: String, to list: String, seqs: ClosedRange<Int>) async throws -> [PushAnswer] {
        try await writing(.readOnly) { try $0.pushes(from: client, to: list, seqs: seqs) }
    }
}
