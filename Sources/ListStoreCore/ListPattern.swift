/// A pattern over list names, whose segments are split by `/`: what an access rule grants (a
/// journal server's `--auth` file) and, later, which lists a replica set follows.
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
/// ```swift
/// let pattern = try ListPattern("users/{sub}/**")
/// pattern.matches("users/ana/inbox", claims: ["sub": ["ana"]])   // true
/// pattern.matches("users/bob/inbox", claims: ["sub": ["ana"]])   // false
/// pattern.matches("users/ana/inbox", claims: ["sub": ["*"]])     // false: a value is literal
/// ```
public struct ListPattern: Sendable, Hashable, CustomStringConvertible {
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
    /// - Throws: `ListPattern.Problem` naming what is wrong: an empty pattern, a control character,
    ///   `**` or a `{claim}` that is not a whole segment, a brace that does not close a claim name.
    /// - Complexity: O(length of `text`).
    public init(_ text: String) throws {
        guard !text.isEmpty else { throw Problem("a list pattern must not be empty") }
        if text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw Problem("a list pattern must not hold control characters")
        }
        description = text
        segments = try text.split(separator: "/", omittingEmptySubsequences: false).map { part in
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
    /// - Complexity: O(segments × name's segments × segment length) at worst; a pattern without
    ///   `**` is one pass.
    public func matches(_ name: String, claims: [String: [String]] = [:]) -> Bool {
        let parts = name.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        // The claims' values that may stand for a segment, as bytes.
        var values: [String: Set<[UInt8]>] = [:]
        for case .claim(let claim) in segments where values[claim] == nil {
            values[claim] = Set((claims[claim] ?? []).filter(Self.canStandForASegment).map { Array($0.utf8) })
        }
        // failed[p * (parts + 1) + n]: pattern segments from p cannot match name segments from n.
        var failed = Set<Int>()
        func match(_ p: Int, _ n: Int) -> Bool {
            if p == segments.count { return n == parts.count }
            if failed.contains(p * (parts.count + 1) + n) { return false }
            let matched: Bool
            switch segments[p] {
            case .anySegments:
                matched = (n...parts.count).contains { match(p + 1, $0) }
            case .literal(let bytes):
                matched = n < parts.count && parts[n].elementsEqual(bytes) && match(p + 1, n + 1)
            case .glob(let pieces):
                matched = n < parts.count && Self.glob(pieces, matches: Array(parts[n])) && match(p + 1, n + 1)
            case .claim(let claim):
                matched = n < parts.count && values[claim, default: []].contains(Array(parts[n])) && match(p + 1, n + 1)
            }
            if !matched { failed.insert(p * (parts.count + 1) + n) }
            return matched
        }
        return match(0, 0)
    }

    /// Whether a claim's value may stand for a segment: not empty, and without `/`, `*`, `{`, `}`
    /// or a control character.
    /// - Complexity: O(length of `value`).
    public static func canStandForASegment(_ value: String) -> Bool {
        !value.isEmpty
            && !value.unicodeScalars.contains { "/*{}".unicodeScalars.contains($0) || $0.properties.generalCategory == .control }
    }

    /// Whether `bytes` is the pieces in order with anything between them (a segment's `*`s).
    private static func glob(_ pieces: [[UInt8]], matches bytes: [UInt8]) -> Bool {
        guard let first = pieces.first, let last = pieces.last, bytes.count >= first.count + last.count,
            bytes.starts(with: first), bytes.reversed().starts(with: last.reversed())
        else { return false }
        // Each middle piece at its first place after the previous one (greedy is exact here).
        var at = first.count
        let end = bytes.count - last.count
        for piece in pieces.dropFirst().dropLast() {
            guard let found = find(piece, in: bytes, from: at, before: end) else { return false }
            at = found + piece.count
        }
        return at <= end
    }

    private static func find(_ piece: [UInt8], in bytes: [UInt8], from start: Int, before end: Int) -> Int? {
        guard !piece.isEmpty else { return start }
        var i = start
        while i + piece.count <= end {
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
