/// A pattern over list names, whose segments are split by `/`: what an access rule grants (a
/// journal server's `--auth` file) and which lists a replica set or the store feed follows.
///
/// - `*` is any one segment, or within a segment any run of its characters (`draft-*`);
/// - `**`, a whole segment, is any number of segments, none included (`users/ana/**` matches
///   `users/ana` and `users/ana/inbox/2026`);
/// - `{name}`, a whole segment, is one of the values of claim `name` (a token's `sub`, or any claim
///   whose value is a string or an array of strings), matched literally. A value that is empty or
///   holds `/`, `*`, `{`, `}` or a control character stands for nothing, so no one widens what a
///   pattern matches by choosing a name; a claim with no value leaves the pattern matching nothing;
/// - anything else is matched byte for byte (the UTF-8 of the names, without Unicode
///   normalization: two lists whose names differ in their bytes are two lists).
///
/// Patterns and names are bounded, so that matching one costs little whoever writes them (a
/// follower of the store feed chooses its pattern): a pattern has at most `maximumBytes` (1,024)
/// bytes of UTF-8, `maximumSegments` (32) segments and `maximumAnySegments` (4) `**` segments;
/// a new list's name at most 1,024 bytes and `maximumNameSegments` (64) segments (a store refuses
/// a longer one with `StoreError.Code.invalidListName`). Matching a pattern of P segments against
/// a name of N segments compares at most (P + 1) × (N + 1) pairs of segments, each at the cost of
/// their bytes.
///
/// ```swift
/// let pattern = try ListPattern("users/{sub}/**")
/// pattern.matches("users/ana/inbox", claims: ["sub": ["ana"]])   // true
/// pattern.matches("users/bob/inbox", claims: ["sub": ["ana"]])   // false
/// pattern.matches("users/ana/inbox", claims: ["sub": ["*"]])     // false: a value is literal
/// ```
public struct ListPattern: Sendable, Hashable, CustomStringConvertible {
    /// The most bytes (UTF-8) of a pattern.
    public static let maximumBytes = 1024
    /// The most segments of a pattern.
    public static let maximumSegments = 32
    /// The most `**` segments of a pattern.
    public static let maximumAnySegments = 4
    /// The most segments of a new list's name (its bytes are at most 1,024): a store refuses a
    /// list with more (`StoreError.Code.invalidListName`); lists named before keep their names.
    public static let maximumNameSegments = 64

    /// The pattern as written.
    public let description: String
    private let segments: [Segment]

    private enum Segment: Hashable {
        /// These bytes exactly.
        case literal([UInt8])
        /// The parts between its `*`s, in order (at least two).
        case glob([[UInt8]])
        /// One value of the claim.
        case claim(String)
        /// Any number of segments.
        case anySegments
    }

    /// Reads `text` as a pattern.
    ///
    /// ```swift
    /// let teams = try ListPattern("teams/{teams}/*")
    /// ```
    /// - Throws: `ListPattern.Problem` naming what is wrong: an empty pattern, one beyond the
    ///   bounds (bytes, segments, `**` segments), a control character, `**` or a `{claim}` that is
    ///   not a whole segment, a brace that does not close a claim name.
    /// - Complexity: O(length of `text`).
    public init(_ text: String) throws {
        guard !text.isEmpty else { throw Problem("a list pattern must not be empty") }
        guard text.utf8.count <= Self.maximumBytes else {
            throw Problem("a list pattern has at most \(Self.maximumBytes) bytes, not \(text.utf8.count)")
        }
        if text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw Problem("a list pattern must not hold control characters")
        }
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= Self.maximumSegments else {
            throw Problem("a list pattern has at most \(Self.maximumSegments) segments, not \(parts.count)")
        }
        description = text
        segments = try parts.map { part in
            if part == "**" { return .anySegments }
            if part.hasPrefix("{") && part.hasSuffix("}") && part.count > 2 {
                let name = String(part.dropFirst().dropLast())
                guard !name.contains(where: { "{}*".contains($0) }) else {
                    throw Problem("'\(part)' is not a claim: a claim's name holds no '{', '}' or '*'")
                }
                return .claim(name)
            }
            if part.contains("{") || part.contains("}") {
                throw Problem("'\(part)' mixes a claim with other text: a {claim} must be a whole segment")
            }
            if part.contains("**") { throw Problem("'\(part)': '**' must be a whole segment") }
            let pieces = part.split(separator: "*", omittingEmptySubsequences: false).map { Array($0.utf8) }
            return pieces.count == 1 ? .literal(pieces[0]) : .glob(pieces)
        }
        let anySegments = segments.count { $0 == .anySegments }
        guard anySegments <= Self.maximumAnySegments else {
            throw Problem("a list pattern has at most \(Self.maximumAnySegments) '**' segments, not \(anySegments)")
        }
    }

    /// The claims the pattern names, as `{name}` segments.
    /// - Complexity: O(segments).
    public var claimNames: Set<String> {
        Set(segments.compactMap { if case .claim(let name) = $0 { name } else { nil } })
    }

    /// Whether the list named `name` matches, with `claims` giving each claim's values.
    ///
    /// ```swift
    /// try ListPattern("public/*").matches("public/news")   // true
    /// ```
    /// - Complexity: O(segments × name's segments) comparisons of segments, each O(its bytes)
    ///   (see the type's overview); a pattern without `**` is one pass.
    public func matches(_ name: String, claims: [String: [String]] = [:]) -> Bool {
        var steps = Steps()
        return matches(name, claims: claims, counting: &steps)
    }

    /// What a match cost: the pairs of segments compared, and the bytes looked at in them.
    struct Steps {
        var segments = 0
        var bytes = 0
    }

    /// `matches(_:claims:)`, adding what it cost to `steps`.
    ///
    /// The classic matching of a wildcard with backtracking to the last one alone: segments other
    /// than `**` are taken one for one; at a mismatch, the last `**` seen takes one more segment
    /// and the segments after it are matched again from there. (Taking more for an earlier `**`
    /// never helps: whatever the later `**` would match then, it can match as well.) Each `**`
    /// resumes at most once per name segment, so at most (P + 1) × (N + 1) pairs are compared.
    func matches(_ name: String, claims: [String: [String]], counting steps: inout Steps) -> Bool {
        let bytes = Array(name.utf8)
        var parts = [Range<Int>]()
        var start = 0
        for (index, byte) in bytes.enumerated() where byte == UInt8(ascii: "/") {
            parts.append(start..<index)
            start = index + 1
        }
        parts.append(start..<bytes.count)
        // The claims' values that may stand for a segment, as bytes.
        var values: [String: Set<[UInt8]>] = [:]
        for case .claim(let claim) in segments where values[claim] == nil {
            values[claim] = Set((claims[claim] ?? []).filter(Self.canStandForASegment).map { Array($0.utf8) })
        }
        var p = 0
        var n = 0
        // The last `**` seen, and the name segment from which its followers are matched now.
        var lastAny: Int?
        var resume = 0
        while n < parts.count {
            if p < segments.count {
                if case .anySegments = segments[p] {
                    lastAny = p
                    resume = n
                    p += 1
                    continue
                }
                steps.segments += 1
                if Self.segment(segments[p], matches: bytes[parts[n]], values: values, steps: &steps.bytes) {
                    p += 1
                    n += 1
                    continue
                }
            }
            guard let lastAny else { return false }
            p = lastAny + 1
            resume += 1
            n = resume
        }
        while p < segments.count, case .anySegments = segments[p] { p += 1 }
        return p == segments.count
    }

    /// Whether `segment`, not `**`, matches the name segment `part`; adds the bytes looked at to `steps`.
    private static func segment(_ segment: Segment, matches part: ArraySlice<UInt8>, values: [String: Set<[UInt8]>], steps: inout Int) -> Bool {
        switch segment {
        case .literal(let literal):
            guard literal.count == part.count else { return false }
            steps += literal.count
            return literal.elementsEqual(part)
        case .glob(let pieces):
            return glob(pieces, matches: part, steps: &steps)
        case .claim(let claim):
            steps += part.count
            return values[claim, default: []].contains(Array(part))
        case .anySegments:
            return true
        }
    }

    /// Whether a claim's value may stand for a segment: not empty, and without `/`, `*`, `{`, `}`
    /// or a control character.
    /// - Complexity: O(length of `value`).
    public static func canStandForASegment(_ value: String) -> Bool {
        !value.isEmpty
            && !value.unicodeScalars.contains { "/*{}".unicodeScalars.contains($0) || $0.properties.generalCategory == .control }
    }

    /// Whether `bytes` is the pieces in order with anything between them (a segment's `*`s).
    private static func glob(_ pieces: [[UInt8]], matches bytes: ArraySlice<UInt8>, steps: inout Int) -> Bool {
        guard let first = pieces.first, let last = pieces.last, bytes.count >= first.count + last.count else { return false }
        steps += first.count + last.count
        guard bytes.starts(with: first), bytes.suffix(last.count).elementsEqual(last) else { return false }
        // Each middle piece at its first place after the previous one (greedy is exact here).
        var at = bytes.startIndex + first.count
        let end = bytes.endIndex - last.count
        for piece in pieces.dropFirst().dropLast() {
            guard let found = find(piece, in: bytes, from: at, before: end, steps: &steps) else { return false }
            at = found + piece.count
        }
        return at <= end
    }

    private static func find(_ piece: [UInt8], in bytes: ArraySlice<UInt8>, from start: Int, before end: Int, steps: inout Int) -> Int? {
        guard !piece.isEmpty else { return start }
        var i = start
        while i + piece.count <= end {
            steps += piece.count
            if bytes[i..<(i + piece.count)].elementsEqual(piece) { return i }
            i += 1
        }
        return nil
    }

    /// What is wrong with a pattern, in one line.
    public struct Problem: Error, Sendable, CustomStringConvertible {
        /// The line.
        public let description: String
        init(_ description: String) { self.description = description }
    }
}
