import ListJSON

/// A version of a list: its sections and elements, with the version's number and digest.
public struct ListSnapshot: Sendable, Hashable {
    /// The list.
    public var list: String
    /// The version (0: the list before its first commit).
    public var version: Int
    /// The digest of `sections`.
    public var digest: ListDigest
    /// The sections, in order, each with its elements.
    public var sections: [ListSection]

    /// A version of a list.
    public init(list: String, version: Int, digest: ListDigest, sections: [ListSection]) {
        self.list = list
        self.version = version
        self.digest = digest
        self.sections = sections
    }

    /// The number of elements over all sections.
    public var elementCount: Int { sections.reduce(0) { $0 + $1.elements.count } }

    /// The snapshot document (the repository's `Docs/Formats.md`) with `digest`, `list`,
    /// `schemaVersion` and `version` added, as canonical JSON text (what `liststore show --json`
    /// prints; `commit` takes it back).
    ///
    /// ```swift
    /// let text = String(decoding: try store.snapshot(of: "inbox").documentJSON, as: UTF8.self)
    /// ```
    /// - Complexity: O(total size of ids and contents); contents are copied as stored.
    public var documentJSON: [UInt8] {
        var writer = JSONWriter(capacity: elementCount * 32 + 256)
        writer.object { w in
            w.member("digest", digest.hex)
            w.member("list", list)
            w.member("schemaVersion", 1)
            w.key("sections")
            w.sections(sections)
            w.member("version", version)
        }
        return writer.bytes
    }
}

/// A list of a store, as `Store.lists()` describes it.
public struct ListSummary: Sendable, Hashable {
    /// The list's name.
    public var name: String
    /// The head version.
    public var version: Int
    /// The digest of the head.
    public var digest: ListDigest
    /// The number of sections in the head.
    public var sectionCount: Int
    /// The number of elements in the head.
    public var elementCount: Int
    /// The oldest version whose snapshot can still be rebuilt (0 until the journal is pruned).
    public var baseVersion: Int
    /// The list's identity: made when the list is created and never reused, so that a new list of
    /// an old name (after the old one was deleted) has another one. A replica records the identity
    /// of the list it follows, and never takes the new list for the old. `nil` when the source does
    /// not tell (a server of an earlier release).
    public var id: String?

    /// A summary, as a store or a network source describes it.
    public init(
        name: String, version: Int, digest: ListDigest, sectionCount: Int, elementCount: Int, baseVersion: Int, id: String? = nil
    ) {
        self.id = id
        self.name = name
        self.version = version
        self.digest = digest
        self.sectionCount = sectionCount
        self.elementCount = elementCount
        self.baseVersion = baseVersion
    }
}
