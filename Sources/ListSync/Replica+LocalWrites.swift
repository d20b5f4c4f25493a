import ListDiff
import ListStore

extension Replica {
    /// The replica's head: the source's version it equals, with the local changes not yet
    /// confirmed on top.
    ///
    /// ```swift
    /// let head = try await replica.snapshot()      // head.sections, head.version
    /// ```
    /// - Throws: `StoreError` `.listNotFound` or `.storeNotFound` before the first pull, `.io`.
    /// - Complexity: O(n) for n items.
    public func snapshot() async throws -> ListSnapshot {
        try await store.snapshot(of: list, at: nil)
    }

    /// The replica's head decoded into typed sections (see `StorableItem`).
    ///
    /// ```swift
    /// let sections = try await replica.snapshot(as: ArraySection<Folder, Message>.self)
    /// ```
    /// - Throws: `.invalidSnapshot` when a content does not decode as the type, and what
    ///   `snapshot()` throws.
    public func snapshot<Model: StorableItem, Element: StorableItem>(as type: ArraySection<Model, Element>.Type) async throws
        -> [ArraySection<Model, Element>]
    {
        try await store.snapshot(of: list, at: nil, as: type)
    }

    /// Changes a copy of the replica's head and commits it at once, offline or not: the change is
    /// pending (`status()?.pending`) until a push or sync sends it.
    ///
    /// ```swift
    /// let result = try await replica.edit(author: "ana") { draft in try draft.removeElement("m3") }
    /// result.pendingSeq      // its place in the outbox
    /// ```
    /// - Throws: what `body` throws (nothing is written), `StoreError` `.listNotFound` before the
    ///   first pull, and what the store's `edit` throws.
    @discardableResult
    public func edit(
        author: String? = nil, message: String? = nil, _ body: @escaping @Sendable (inout ListDraft<ListItem, ListItem>) throws -> Void
    ) async throws -> CommitResult {
        try await checkPulled()
        return try await store.edit(list, expectedVersion: nil, author: author, message: message, body)
    }

    /// Changes a typed copy of the replica's head and commits it at once, as `edit(author:message:_:)`.
    ///
    /// ```swift
    /// try await replica.edit(as: ArraySection<Folder, Message>.self) { draft in try draft.removeElement(3) }
    /// ```
    /// - Throws: `.invalidSnapshot` when the head does not decode as the type, and what
    ///   `edit(author:message:_:)` throws.
    @discardableResult
    public func edit<Model: StorableItem, Element: StorableItem>(
        as type: ArraySection<Model, Element>.Type, author: String? = nil, message: String? = nil,
        _ body: @escaping @Sendable (inout ListDraft<Model, Element>) throws -> Void
    ) async throws -> CommitResult {
        try await checkPulled()
        return try await store.edit(list, as: type, expectedVersion: nil, author: author, message: message, body)
    }

    /// Throws `.listNotFound` unless the list is a replica (it has been pulled): an edit must not
    /// make a list of the same name that replicates nothing.
    private func checkPulled() async throws {
        guard try await position() != nil else {
            throw StoreError(.listNotFound, "'\(list)' is not a replica yet: pull it from its source first")
        }
    }
}
