import ListDiff

extension Store {
    /// Changes a copy of the head of `list` and commits it, atomically: `body` runs inside the write
    /// transaction, so no other writer can commit in between (keep it short).
    ///
    /// ```swift
    /// try store.edit("inbox", author: "ana") { draft in
    ///     try draft.moveSection(ExactString("done"), to: 0)
    /// }
    /// ```
    /// - Throws: what `body` throws (nothing is written), and what `commit` throws.
    /// - Complexity: that of `commit`.
    @discardableResult
    public func edit(
        _ list: String, expectedVersion: Int? = nil, author: String? = nil, message: String? = nil,
        _ body: (inout ListDraft<ListItem, ListItem>) throws -> Void
    ) throws -> CommitResult {
        try commit(to: list, expectedVersion: expectedVersion, author: author, message: message) { head in
            var draft = ListDraft(sections: head)
            try body(&draft)
            return draft.sections
        }
    }
}
