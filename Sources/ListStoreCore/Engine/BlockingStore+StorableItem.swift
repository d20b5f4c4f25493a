import Foundation
import ListDiff

extension BlockingStore {
    /// Commits typed sections: each model and element is stored with its `storedID` and its
    /// canonical JSON encoding; otherwise as `commit(_:to:expectedVersion:author:message:)`.
    ///
    /// - Throws: `.invalidSnapshot` when a value does not encode, and what the untyped commit throws.
    /// - Complexity: that of the untyped commit plus encoding every value.
    @available(*, noasync, message: "blocks its thread; in async code, call the async method of the same name with try await")
    @discardableResult
    public func commit<Model: StorableItem, Element: StorableItem>(
        _ sections: [ArraySection<Model, Element>], to list: String, expectedVersion: Int? = nil, author: String? = nil,
        message: String? = nil
    ) throws -> CommitResult {
        try commit(try _CanonicalJSON.sections(sections), to: list, expectedVersion: expectedVersion, author: author, message: message)
    }

    /// A version of `list` decoded into typed sections.
    ///
    /// - Throws: `.invalidSnapshot` when a stored content does not decode as the type, and what
    ///   `snapshot(of:at:)` throws.
    @available(*, noasync, message: "blocks its thread; in async code, call the async method of the same name with try await")
    public func snapshot<Model: StorableItem, Element: StorableItem>(
        of list: String, at version: Int? = nil, as type: ArraySection<Model, Element>.Type
    ) throws -> [ArraySection<Model, Element>] {
        try _CanonicalJSON.typedSections(try snapshot(of: list, at: version).sections)
    }

    /// Changes a typed copy of the head of `list` and commits it atomically, as `edit(_:_:)`.
    @available(*, noasync, message: "blocks its thread; in async code, call the async method of the same name with try await")
    @discardableResult
    public func edit<Model: StorableItem, Element: StorableItem>(
        _ list: String, as type: ArraySection<Model, Element>.Type, expectedVersion: Int? = nil, author: String? = nil,
        message: String? = nil, _ body: (inout ListDraft<Model, Element>) throws -> Void
    ) throws -> CommitResult {
        try commit(to: list, expectedVersion: expectedVersion, author: author, message: message) { head in
            var draft = ListDraft(sections: try _CanonicalJSON.typedSections(head) as [ArraySection<Model, Element>])
            try body(&draft)
            return try _CanonicalJSON.sections(draft.sections)
        }
    }
}

extension _CanonicalJSON {
    /// Typed sections as stored sections: each value's `storedID` and canonical JSON.
    package static func sections<Model: StorableItem, Element: StorableItem>(_ sections: [ArraySection<Model, Element>]) throws
        -> [ListSection]
    {
        try sections.map { section in
            ListSection(model: try _CanonicalJSON.item(section.model), elements: try section.elements.map(_CanonicalJSON.item))
        }
    }

    /// Stored sections decoded as typed sections.
    package static func typedSections<Model: StorableItem, Element: StorableItem>(_ sections: [ListSection]) throws
        -> [ArraySection<Model, Element>]
    {
        try sections.enumerated().map { s, section in
            ArraySection(
                model: try _CanonicalJSON.decode(Model.self, from: section.model.content, what: "section \(s)"),
                elements: try section.elements.enumerated().map { e, element in
                    try _CanonicalJSON.decode(Element.self, from: element.content, what: "element \(e) of section \(s)")
                })
        }
    }
}
