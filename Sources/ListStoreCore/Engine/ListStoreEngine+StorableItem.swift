import ListDiff

extension ListStoreEngine {
    /// Commits typed sections: each model and element is stored with its `storedID` and its
    /// canonical JSON encoding; otherwise as `commit(_:to:expectedVersion:author:message:)`.
    ///
    /// ```swift
    /// try await store.commit([ArraySection(model: folder, elements: messages)], to: "mail")
    /// ```
    /// - Throws: `.invalidSnapshot` when a value does not encode, and what the untyped commit throws.
    /// - Complexity: that of the untyped commit plus encoding every value.
    @discardableResult
    public func commit<Model: StorableItem, Element: StorableItem>(
        _ sections: [ArraySection<Model, Element>], to list: String, expectedVersion: Int? = nil, author: String? = nil,
        message: String? = nil
    ) async throws -> CommitResult {
        try await commit(
            try _CanonicalJSON.sections(sections), to: list, expectedVersion: expectedVersion, author: author, message: message)
    }

    /// A version of `list` (the head by default) decoded into typed sections.
    ///
    /// ```swift
    /// let sections = try await store.snapshot(of: "mail", as: ArraySection<Folder, Message>.self)
    /// ```
    /// - Throws: `.invalidSnapshot` when a stored content does not decode as the type, and what
    ///   `snapshot(of:at:)` throws.
    public func snapshot<Model: StorableItem, Element: StorableItem>(
        of list: String, at version: Int? = nil, as type: ArraySection<Model, Element>.Type
    ) async throws -> [ArraySection<Model, Element>] {
        try _CanonicalJSON.typedSections(try await snapshot(of: list, at: version).sections)
    }

    /// Changes a typed copy of the head of `list` and commits it atomically, as
    /// `edit(_:expectedVersion:author:message:_:)`.
    ///
    /// ```swift
    /// try await store.edit("mail", as: ArraySection<Folder, Message>.self) { draft in try draft.removeElement(3) }
    /// ```
    /// - Throws: what `body` throws (nothing is written), `.invalidSnapshot` when the head does not
    ///   decode as the type, and what the untyped commit throws.
    @discardableResult
    public func edit<Model: StorableItem, Element: StorableItem>(
        _ list: String, as type: ArraySection<Model, Element>.Type, expectedVersion: Int? = nil, author: String? = nil,
        message: String? = nil, _ body: @escaping @Sendable (inout ListDraft<Model, Element>) throws -> Void
    ) async throws -> CommitResult {
        try await edit(list, expectedVersion: expectedVersion, author: author, message: message) { draft in
            var typed = ListDraft(sections: try _CanonicalJSON.typedSections(draft.sections) as [ArraySection<Model, Element>])
            try body(&typed)
            draft.sections = try _CanonicalJSON.sections(typed.sections)
        }
    }
}
