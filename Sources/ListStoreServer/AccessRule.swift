import ListStoreCore

/// One rule of a journal server's access: the lists a pattern matches, with a token's claims,
/// get `grant`. A token's access to a list is the highest grant among the rules that match it;
/// none matching, it has none.
///
/// ```swift
/// let rules = [AccessRule(lists: try ListPattern("users/{sub}/**"), grant: .write),
///              AccessRule(lists: try ListPattern("public/*"), grant: .read)]
/// AccessRule.grant(rules, for: "users/ana/inbox", claims: ["sub": ["ana"]])   // .write
/// ```
public struct AccessRule: Sendable, Hashable {
    /// The lists the rule is about.
    public var lists: ListPattern
    /// What it grants on them.
    public var grant: AccessGrant

    /// A rule. - Complexity: O(1).
    public init(lists: ListPattern, grant: AccessGrant) {
        self.lists = lists
        self.grant = grant
    }

    /// The highest grant of `rules` on the list `name` for a token with `claims` (each claim's
    /// string values); `nil`: no access.
    /// - Complexity: O(rules × the cost of `ListPattern.matches`), stopping at the first `admin`.
    public static func grant(_ rules: [AccessRule], for name: String, claims: [String: [String]]) -> AccessGrant? {
        var best: AccessGrant?
        for rule in rules where best.map({ rule.grant > $0 }) ?? true {
            if rule.lists.matches(name, claims: claims) {
                best = rule.grant
                if best == .admin { break }
            }
        }
        return best
    }
}
