import Foundation

/// The rules for list and consumer names, written once for both.
///
/// Every name has 1 to 1,024 bytes of UTF-8 and no C0 control characters or DEL. A name given to a
/// new list or consumer must also hold no C1 control characters and look like itself alone: it is
/// in Unicode normalization form C (so "é" as one scalar and "e" + U+0301 cannot name two lists that
/// print the same), and it holds no invisible formatting characters (bidirectional controls that reorder what is shown, zero-width spaces, the
/// byte order mark; the zero-width joiner of emoji sequences is allowed). A new list's name has at
/// most `ListPattern.maximumNameSegments` (64) segments, the parts between its `/`s, so that
/// matching it against a pattern costs little. Names stored before these rules keep working.
///
/// Package-visible: ListStorePostgres validates names by the same rules.
package enum _Names {
    /// Why `name` cannot name anything, or `nil`.
    package static func problem(with name: String, _ what: String) -> String? {
        guard !name.isEmpty, name.utf8.count <= 1024 else {
            return "a \(what) name must have 1 to 1024 bytes, not \(name.utf8.count)"
        }
        guard !name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            return "a \(what) name must not contain control characters: \(name.debugDescription)"
        }
        return nil
    }

    /// The first character of the names of the store's own lists (U+0001, which no user's name
    /// holds): listings leave them out, and no read finds them by name.
    package static let ownPrefix = "\u{1}"

    /// The name of the list a paged sync of `list` lands its pages in (ListStoreCore's article
    /// "Lists of Any Size"): one of the store's own (`ownPrefix`).
    package static func staging(_ list: String) -> String { ownPrefix + "staging" + ownPrefix + list }

    /// Throws `.invalidListName` for a name no list can have (`problem(with:_:)`).
    package static func checkList(_ name: String) throws {
        if let problem = problem(with: name, "list") { throw StoreError(.invalidListName, problem) }
    }

    /// Throws `.listNotFound` for a name no list can have: a read does not look for it (PostgreSQL's
    /// text refuses U+0000).
    package static func checkFindable(_ name: String, in location: String) throws {
        if problem(with: name, "list") != nil { throw StoreError.listNotFound(name, in: location) }
    }

    /// Why `name` cannot name a new list or consumer, or `nil`.
    package static func problem(withNew name: String, _ what: String) -> String? {
        if let problem = problem(with: name, what) { return problem }
        if what == "list" {
            let segments = name.utf8.count { $0 == UInt8(ascii: "/") } + 1
            guard segments <= ListPattern.maximumNameSegments else {
                return "a list name must have at most \(ListPattern.maximumNameSegments) segments (the parts between its '/'), not \(segments)"
            }
        }
        guard !name.unicodeScalars.contains(where: { (0x80...0x9F).contains($0.value) }) else {
            return "a \(what) name must not contain control characters: \(name.debugDescription)"
        }
        if let format = name.unicodeScalars.first(where: isInvisibleFormat) {
            return "a \(what) name must not contain invisible formatting characters such as U+\(hex(format)): \(name.debugDescription)"
        }
        let composed = name.precomposedStringWithCanonicalMapping
        guard composed.unicodeScalars.elementsEqual(name.unicodeScalars) else {
            return "a \(what) name must be in Unicode normalization form C (NFC), as \(composed.debugDescription) is: \(escaped(name))"
        }
        return nil
    }

    /// Format characters (general category Cf: bidirectional controls, zero-width spaces, soft
    /// hyphen, byte order mark, …) but the zero-width joiner, and the line and paragraph separators.
    private static func isInvisibleFormat(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.value == 0x200D { return false }
        if scalar.value == 0x2028 || scalar.value == 0x2029 { return true }
        return scalar.properties.generalCategory == .format
    }

    private static func hex(_ scalar: Unicode.Scalar) -> String {
        let digits = String(scalar.value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    /// The name with every scalar outside ASCII written as `\u{…}`, so the two forms can be told apart.
    private static func escaped(_ name: String) -> String {
        name.unicodeScalars.map { $0.isASCII ? String($0) : "\\u{\(hex($0))}" }.joined()
    }
}
