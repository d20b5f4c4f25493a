import Foundation
import ListDiffTestSupport
import ListStoreCore
import ListStoreServer
import Testing

/// List patterns and access rules: named cases, claims that try to widen access, and random
/// patterns, names and claims against a reference built from regular expressions.
@Suite struct AccessRuleTests {
    @Test func patternsMatchWhatTheirSegmentsSay() throws {
        let ana = ["sub": ["ana"], "teams": ["red", "blue"]]
        let cases: [(String, String, Bool)] = [
            ("users/{sub}/**", "users/ana", true),
            ("users/{sub}/**", "users/ana/inbox/2026", true),
            ("users/{sub}/**", "users/bob/inbox", false),
            ("users/{sub}/**", "users", false),
            ("users/{sub}/*", "users/ana", false),
            ("users/{sub}/*", "users/ana/inbox", true),
            ("teams/{teams}/*", "teams/blue/plan", true),
            ("teams/{teams}/*", "teams/green/plan", false),
            ("public/*", "public/news", true),
            ("public/*", "public/news/old", false),
            ("public/*", "public/", true),
            ("drafts/draft-*", "drafts/draft-1", true),
            ("drafts/draft-*", "drafts/draft-", true),
            ("drafts/draft-*", "drafts/dra", false),
            ("a/*b*c", "a/xbyc", true),
            ("a/*b*c", "a/xcyb", false),
            ("**", "anything/at/all", true),
            ("**/inbox", "inbox", true),
            ("**/inbox", "users/ana/inbox", true),
            ("a/**/b", "a/b", true),
            ("a/**/b", "a/x/y/b", true),
            ("a/**/b", "a/x/y/c", false),
            ("café", "cafe\u{301}", false),  // bytes, not canonical equivalence
            ("café", "café", true),
        ]
        for (pattern, name, expected) in cases {
            #expect(try ListPattern(pattern).matches(name, claims: ana) == expected, "\(pattern) ~ \(name)")
        }
    }

    @Test func aClaimValueNeverWidensAccess() throws {
        let personal = try ListPattern("users/{sub}/**")
        for bad in ["", "*", "**", "ana/bob", "{sub}", "a}", "{", "ana\u{0}", "ana\n", "x\u{7F}"] {
            for name in ["users/*/inbox", "users/**", "users/ana/bob/inbox", "users/{sub}/inbox", "users//inbox", "users/ana/inbox"] {
                #expect(!personal.matches(name, claims: ["sub": [bad]]), "sub \(bad.debugDescription) reads \(name)")
            }
        }
        // Other values of the same claim still count; a missing claim grants nothing.
        let teams = try ListPattern("teams/{teams}/*")
        #expect(teams.matches("teams/red/plan", claims: ["teams": ["*", "red", "a/b"]]))
        #expect(!teams.matches("teams/red/plan", claims: ["sub": ["red"]]))
        #expect(!teams.matches("teams/red/plan", claims: ["teams": []]))
    }

    @Test func badPatternsAreRefusedWithWhatIsWrong() {
        let bad: [(String, String)] = [
            ("", "empty"), ("a/**x", "'**'"), ("a/x**", "'**'"), ("a/{sub", "claim"), ("a/x{sub}", "whole segment"),
            ("a/{sub}x", "whole segment"), ("a/}", "claim"), ("{a*}", "claim's name"), ("a/\u{1}", "control"),
        ]
        for (pattern, problem) in bad {
            #expect(throws: ListPattern.Problem.self, "\(pattern.debugDescription)") { try ListPattern(pattern) }
            do {
                _ = try ListPattern(pattern)
            } catch {
                #expect("\(error)".contains(problem), "\(pattern.debugDescription): \(error)")
            }
        }
    }

    @Test func theHighestMatchingGrantWins() throws {
        let rules = [
            AccessRule(lists: try ListPattern("users/{sub}/**"), grant: .write),
            AccessRule(lists: try ListPattern("teams/{teams}/**"), grant: .read),
            AccessRule(lists: try ListPattern("teams/{admin_of}/**"), grant: .admin),
            AccessRule(lists: try ListPattern("public/*"), grant: .read),
        ]
        let claims = ["sub": ["ana"], "teams": ["red", "blue"], "admin_of": ["blue"]]
        #expect(AccessRule.grant(rules, for: "users/ana/inbox", claims: claims) == .write)
        #expect(AccessRule.grant(rules, for: "teams/red/plan", claims: claims) == .read)
        #expect(AccessRule.grant(rules, for: "teams/blue/plan", claims: claims) == .admin)
        #expect(AccessRule.grant(rules, for: "public/news", claims: claims) == .read)
        #expect(AccessRule.grant(rules, for: "users/bob/inbox", claims: claims) == nil)
        #expect(AccessRule.grant([], for: "public/news", claims: claims) == nil)
        #expect(AccessGrant(name: "write") == .write && AccessGrant(name: "owner") == nil)
    }

    /// Random patterns, names and claims: `ListPattern.matches` answers as a regular expression
    /// over the name's UTF-16 built from the pattern with each claim's allowed values spelled out.
    @Test(arguments: 0..<4) func randomPatternsMatchAsTheReference(seed: UInt64) throws {
        var random = SplitMix64(seed: 0xACCE55 + seed)
        let patternSegments = ["a", "b", "ab", "*", "a*", "*b", "a*b", "*a*", "**", "{sub}", "{teams}", "é", "e\u{301}"]
        let nameSegments = ["a", "b", "ab", "aab", "ba", "", "é", "e\u{301}", "*", "{sub}", "a*b"]
        let values = ["a", "b", "ab", "*", "a/b", "", "{sub}", "é", "x\u{1}"]
        for _ in 0..<2_500 {
            let pattern = (0...Int.random(in: 0...3, using: &random)).map { _ in patternSegments.randomElement(using: &random)! }
                .joined(separator: "/")
            let name = (0...Int.random(in: 0...4, using: &random)).map { _ in nameSegments.randomElement(using: &random)! }
                .joined(separator: "/")
            var claims: [String: [String]] = [:]
            if Int.random(in: 0...3, using: &random) > 0 { claims["sub"] = [values.randomElement(using: &random)!] }
            if Int.random(in: 0...3, using: &random) > 0 {
                claims["teams"] = (0..<Int.random(in: 0...3, using: &random)).map { _ in values.randomElement(using: &random)! }
            }
            let expected = Self.reference(pattern, name, claims)
            #expect(try ListPattern(pattern).matches(name, claims: claims) == expected, "\(pattern) ~ \(name) with \(claims)")
        }
    }

    /// The reference: `/`-prefixed name against a regular expression of `/`-prefixed segments.
    static func reference(_ pattern: String, _ name: String, _ claims: [String: [String]]) -> Bool {
        var regex = "^"
        for segment in pattern.components(separatedBy: "/") {
            if segment == "**" {
                regex += "(?:/[^/]*)*"
            } else if segment.hasPrefix("{"), segment.hasSuffix("}") {
                let allowed = (claims[String(segment.dropFirst().dropLast())] ?? []).filter { value in
                    !value.isEmpty && !value.contains { "/*{}".contains($0) } && !value.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
                }
                guard !allowed.isEmpty else { return false }
                regex += "/(?:" + allowed.map { NSRegularExpression.escapedPattern(for: $0) }.joined(separator: "|") + ")"
            } else {
                regex += "/" + segment.components(separatedBy: "*").map { NSRegularExpression.escapedPattern(for: $0) }.joined(separator: "[^/]*")
            }
        }
        let expression = try! NSRegularExpression(pattern: regex + "$")
        let subject = "/" + name
        return expression.firstMatch(in: subject, range: NSRange(location: 0, length: (subject as NSString).length)) != nil
    }
}
