import ListMerge
import ListStore

extension ReplicaPushResult {
    /// The result of a push whose changes the source answered with `answers`, in order: for a caller
    /// that hears the answers one by one (a following sync that reports its pushes), as `push(to:)`
    /// sums them up.
    ///
    /// ```swift
    /// let result = ReplicaPushResult(list: "inbox", answers: answers)
    /// result.pushed + result.duplicates == answers.count    // true
    /// ```
    /// - Complexity: O(answers and their conflicts).
    public init(list: String, answers: [PushAnswer]) {
        self.init(
            list: list, pushed: answers.count { !$0.duplicate }, duplicates: answers.count { $0.duplicate },
            version: answers.last?.version, conflicts: answers.flatMap(\.conflicts))
    }
}
