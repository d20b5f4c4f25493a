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

    /// A replay's result (package-visible: the engines make theirs through `_JournalReplayCheck`).
    package init(name: String, baseVersion: Int, headVersion: Int, versionsVerified: Int, firstDivergentVersion: Int?, problem: String?) {
        self.name = name
        self.baseVersion = baseVersion
        self.headVersion = headVersion
        self.versionsVerified = versionsVerified
        self.firstDivergentVersion = firstDivergentVersion
        self.problem = problem
    }

    /// The result for a list whose row cannot be read (`error` says why): it diverges from
    /// version 1, and nothing was verified. Every engine reports such a list this way, and goes on
    /// with the others.
    /// - Throws: `error` itself when it says the store could not be reached rather than that the
    ///   list is damaged: cancellation, or `StoreError` `.io` (the engines rethrow their own
    ///   connection failures before calling this).
    package static func unreadable(_ name: String, _ error: any Error) throws -> ListVerification {
        if error is CancellationError || (error as? StoreError)?.code == .io { throw error }
        return ListVerification(name: name, baseVersion: 0, headVersion: 0, versionsVerified: 0, firstDivergentVersion: 1, problem: "\(error)")
    }
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
