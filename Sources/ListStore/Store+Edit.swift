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

    /// `edit(_:expectedVersion:author:message:_:)` off the cooperative thread pool (GRDB's async
    /// access): `body` runs on the store's writer inside the write transaction, so no other writer
    /// can commit in between (keep it short, and do not wait in it for other tasks).
    @discardableResult
    public func edit(
        _ list: String, expectedVersion: Int? = nil, author: String? = nil, message: String? = nil,
        _ body: @Sendable (inout ListDraft<ListItem, ListItem>) throws -> Void
    ) async throws -> CommitResult {
        try Store.validateListName(list)
        return try await writing(creating: true) { transaction in
            try withoutActuallyEscaping(body) { body in
                try transaction.commit(
                    to: list, expectedVersion: expectedVersion, author: author, message: message,
                    target: .snapshot { head in
                        var draft = ListDraft(sections: head)
                        try body(&draft)
                        return draft.sections
                    })
            }
        }
    }
}
