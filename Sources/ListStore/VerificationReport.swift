/// What `Store.verify` found.
public struct VerificationReport: Sendable, Hashable {
    /// What SQLite's integrity check reported (empty when it says "ok").
    public var integrityProblems: [String]
    /// One result per list checked.
    public var lists: [ListVerification]

    /// Whether nothing is wrong.
    public var isValid: Bool { integrityProblems.isEmpty && lists.allSatisfy(\.isValid) }

    /// A report (engines other than `Store` make theirs).
    ///
    /// ```swift
    /// let report = VerificationReport(integrityProblems: [], lists: [])
    /// ```
    public init(integrityProblems: [String], lists: [ListVerification]) {
        self.integrityProblems = integrityProblems
        self.lists = lists
    }
}

/// The result of replaying one list's journal.
public struct ListVerification: Sendable, Hashable {
    /// The list.
    public var name: String
    /// The version the replay started from.
    public var baseVersion: Int
    /// The head version in the list row.
    public var headVersion: Int
    /// How many journal entries replayed and matched their digests.
    public var versionsVerified: Int
    /// The first version whose replay does not match what is stored (the head counts as the version
    /// it claims to be), or `nil`.
    public var firstDivergentVersion: Int?
    /// What is wrong, or `nil`.
    public var problem: String?

    /// Whether the list replays to every stored digest and to its head.
    public var isValid: Bool { problem == nil }
}

/// How far `Store.verify` has got.
public struct VerificationProgress: Sendable {
    /// The list being replayed.
    public var list: String
    /// Journal entries of this list replayed so far.
    public var completed: Int
    /// Journal entries of this list in all.
    public var total: Int
}
