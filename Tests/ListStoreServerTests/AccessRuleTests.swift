import Foundation
import ListDiffTestSupport
@testable import ListStoreCore
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

    /// Random patterns of up to 4 `**` among up to 10 segments against names of up to 12
    /// segments, built from few letters so that they often nearly match: `ListPattern.matches`
    /// answers as a naive matcher that tries every way (`naive(_:_:_:)`). A failure names its seed.
    @Test(arguments: 0..<8) func randomPatternsMatchAsANaiveMatcher(seed: UInt64) throws {
        var random = SplitMix64(seed: 0x5E6_0000 + seed)
        let patternSegments = ["a", "b", "ab", "*", "a*", "*b", "a*b", "*a*", "**", "**", "**", "{sub}", "", "b*a*b"]
        let nameSegments = ["a", "b", "ab", "aab", "ba", "abab", "", "bab", "{sub}"]
        for round in 0..<2_000 {
            var segments = (0...Int.random(in: 0...9, using: &random)).map { _ in patternSegments.randomElement(using: &random)! }
            while segments.filter({ $0 == "**" }).count > 4 { segments.remove(at: segments.firstIndex(of: "**")!) }
            if segments.isEmpty || segments == [""] { segments = ["**"] }
            let pattern = segments.joined(separator: "/")
            let name = (0...Int.random(in: 0...11, using: &random)).map { _ in nameSegments.randomElement(using: &random)! }
                .joined(separator: "/")
            let claims = Int.random(in: 0...1, using: &random) == 0 ? ["sub": ["ab"]] : [:]
            let expected = Self.naive(pattern.components(separatedBy: "/")[...], name.components(separatedBy: "/")[...], claims)
            #expect(
                try ListPattern(pattern).matches(name, claims: claims) == expected,
                "seed \(seed), round \(round): \(pattern) ~ \(name) with \(claims) should be \(expected)")
        }
    }

    /// The naive matcher: every way of matching, segment by segment (`**` tries every count), and
    /// within a segment byte by byte (`*` tries every length).
    static func naive(_ pattern: ArraySlice<String>, _ name: ArraySlice<String>, _ claims: [String: [String]]) -> Bool {
        guard let first = pattern.first else { return name.isEmpty }
        if first == "**" {
            return (0...name.count).contains { naive(pattern.dropFirst(), name.dropFirst($0), claims) }
        }
        guard let segment = name.first else { return false }
        let matched: Bool
        if first.hasPrefix("{"), first.hasSuffix("}") {
            matched = (claims[String(first.dropFirst().dropLast())] ?? []).contains { ListPattern.canStandForASegment($0) && $0 == segment }
        } else {
            matched = naiveGlob(Array(first.utf8)[...], Array(segment.utf8)[...])
        }
        return matched && naive(pattern.dropFirst(), name.dropFirst(), claims)
    }

    static func naiveGlob(_ pattern: ArraySlice<UInt8>, _ bytes: ArraySlice<UInt8>) -> Bool {
        guard let first = pattern.first else { return bytes.isEmpty }
        if first == UInt8(ascii: "*") {
            return (0...bytes.count).contains { naiveGlob(pattern.dropFirst(), bytes.dropFirst($0)) }
        }
        return bytes.first == first && naiveGlob(pattern.dropFirst(), bytes.dropFirst())
    }

    /// The worst patterns within the bounds (32 segments, 4 `**`, 1,024 bytes) against the worst
    /// names within them (64 segments, 1,024 bytes), chosen to nearly match, and random ones:
    /// matching compares at most (P + 1) × (N + 1) pairs of segments, and looks at no more bytes
    /// than 5 × (pattern's bytes + P) × (name's bytes + N) (each pair at most once before the first
    /// `**` and once for each). Steps are counted, not time.
    @Test func matchingWithinTheBoundsTakesBoundedSteps() throws {
        let (maxP, maxN) = (ListPattern.maximumSegments, ListPattern.maximumNameSegments)
        func joined(_ parts: [String]) -> String { parts.joined(separator: "/") }
        let anyThenA = Array(repeating: ["**", "a"], count: 4).flatMap { $0 }
        let patterns = [
            joined(anyThenA + Array(repeating: "a", count: maxP - anyThenA.count - 1) + ["c"]),
            joined(Array(repeating: "**", count: 4) + Array(repeating: "*", count: maxP - 5) + ["c"]),
            joined(Array(repeating: ["*", "**"], count: 4).flatMap { $0 } + Array(repeating: "a*", count: maxP - 9) + ["*c"]),
            joined(["**", "*a*a*a*a*a*a*a*b", "**", "a*a", "**", String(repeating: "a", count: 15), "**", "x"]),
            "**/*" + String(repeating: "a", count: 500) + "b*/**",
            "**/" + Array(repeating: "a", count: 250).joined(separator: "*") + "b",
        ]
        let names = [
            "a/aa/a",
            joined(Array(repeating: "a", count: maxN)),
            joined(Array(repeating: String(repeating: "a", count: 15), count: maxN)),
            String(repeating: "a", count: 1024),
            joined(Array(repeating: "a", count: maxN - 1) + ["b"]),
        ]
        var cases = patterns.flatMap { pattern in names.map { (pattern, $0) } }
        var random = SplitMix64(seed: 0xB0_0DED)
        let pieces = ["a", "aa", "*", "a*", "*a", "*a*", "**", "b"]
        for _ in 0..<2_000 {
            var segments = (0..<Int.random(in: 1...maxP, using: &random)).map { _ in pieces.randomElement(using: &random)! }
            while segments.filter({ $0 == "**" }).count > ListPattern.maximumAnySegments { segments.remove(at: segments.firstIndex(of: "**")!) }
            cases.append((joined(segments + ["b"]).suffix(ListPattern.maximumBytes).description, names.randomElement(using: &random)!))
        }
        var most = ListPattern.Steps()
        for (text, name) in cases {
            guard let pattern = try? ListPattern(text) else { continue }
            let (p, n) = (text.split(separator: "/", omittingEmptySubsequences: false).count, name.split(separator: "/", omittingEmptySubsequences: false).count)
            #expect(p <= maxP && n <= maxN && text.utf8.count <= 1024 && name.utf8.count <= 1024)
            var steps = ListPattern.Steps()
            let matched = pattern.matches(name, claims: [:], counting: &steps)
            // The naive matcher tries every way: only for short names.
            if n <= 4 && name.utf8.count <= 16 {
                #expect(matched == Self.naive(text.components(separatedBy: "/")[...], name.components(separatedBy: "/")[...], [:]), "\(text) ~ \(name.prefix(40))")
            }
            #expect(steps.segments <= (p + 1) * (n + 1), "\(text) ~ \(name.prefix(40)): \(steps.segments) pairs of segments")
            #expect(steps.bytes <= 5 * (text.utf8.count + p) * (name.utf8.count + n), "\(text) ~ \(name.prefix(40)): \(steps.bytes) bytes")
            most.segments = max(most.segments, steps.segments)
            most.bytes = max(most.bytes, steps.bytes)
        }
        // At worst some two thousand pairs of segments, and some 260,000 bytes (a piece of 500
        // bytes sought at each place of a segment of 1,024).
        #expect(most.segments <= (maxP + 1) * (maxN + 1), "\(most.segments)")
        #expect(most.bytes <= 300_000, "\(most.bytes)")
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
