import ListJSON

/// The three-way merge of one item's content (rule 4 of <doc:OfflineWritesAndConflicts>).
///
/// A side whose content equals the base yields to the other. When both changed it: if mine and theirs
/// are JSON objects and the base is one too (or there is no base, when both sides created the item,
/// which counts as an empty object), they are merged key by key the same way, and a key both changed to
/// different values takes mine's value and is reported; otherwise mine wins and the whole content is
/// reported. Only top-level keys are merged; values under a key are compared whole.
///
/// ```swift
/// let merge = ContentMerge(base: ["a": 1, "b": 1], mine: ["a": 2, "b": 1], theirs: ["a": 1, "b": 3])
/// merge.value       // {"a":2,"b":3}
/// merge.clashes     // []
/// ```
public struct ContentMerge: Hashable, Sendable {
    /// A place where both sides changed the content differently.
    public struct Clash: Hashable, Sendable {
        /// The object key both changed, or `nil` when the whole contents clash.
        public var key: String?
        /// Mine's value (`nil` when mine removed the key).
        public var mine: JSONValue?
        /// Theirs' value (`nil` when theirs removed the key).
        public var theirs: JSONValue?

        /// Creates a clash.
        public init(key: String?, mine: JSONValue?, theirs: JSONValue?) {
            self.key = key
            self.mine = mine
            self.theirs = theirs
        }
    }

    /// The merged content.
    public var value: JSONValue
    /// Where both sides changed the content differently, keys in code point order; mine's value was
    /// kept at each.
    public var clashes: [Clash]

    /// Merges `mine` and `theirs`, both changed from `base` (`nil` when both sides created the item).
    /// - Complexity: O(size of `mine` and `base`, plus log of theirs' keys for each of their keys,
    ///   plus a shift of theirs' keys for each key added or removed); the keys only theirs holds are
    ///   not otherwise visited.
    public init(base: JSONValue?, mine: JSONValue, theirs: JSONValue) {
        value = theirs
        clashes = Self.merge(base: base, mine: mine, into: &value).clashes
    }

    /// Merges `mine` into `theirs` in place (see the type), and says whether theirs changed and where
    /// both sides clashed. `theirs` is changed where it is stored when nothing else holds it, so that a
    /// large content takes a few keys of mine in time proportional to those keys.
    /// - Complexity: as `init(base:mine:theirs:)`.
    @usableFromInline
    static func merge(base: JSONValue?, mine: JSONValue, into theirs: inout JSONValue) -> (changed: Bool, clashes: [Clash]) {
        if mine == theirs { return (false, []) }
        if let base {
            if theirs == base {
                theirs = mine
                return (true, [])
            }
            if mine == base { return (false, []) }
        }
        guard case .object(let mineObject) = mine, case .object(var object) = theirs else {
            let clash = Clash(key: nil, mine: mine, theirs: theirs)
            theirs = mine
            return (true, [clash])
        }
        let baseObject: JSONObject
        switch base {
        case nil: baseObject = JSONObject()
        case .object(let object)?: baseObject = object
        default:
            let clash = Clash(key: nil, mine: mine, theirs: theirs)
            theirs = mine
            return (true, [clash])
        }
        // Theirs' object alone holds its members from here on, so that setting a key does not copy them.
        theirs = .null
        var changed = false
        var clashes: [Clash] = []
        // A key neither mine nor the base holds is theirs alone, and stays as it is.
        func mergeKey(_ key: String, mine m: JSONValue?, base b: JSONValue?) {
            let t = object[key]
            let kept: JSONValue?
            if m == t || t == b {
                kept = m
            } else if m == b {
                kept = t
            } else {
                kept = m
                clashes.append(Clash(key: key, mine: m, theirs: t))
            }
            if kept != t {
                object[key] = kept
                changed = true
            }
        }
        for (key, m) in mineObject { mergeKey(key, mine: m, base: baseObject[key]) }
        for (key, b) in baseObject where mineObject[key] == nil { mergeKey(key, mine: nil, base: b) }
        clashes.sort { ExactString($0.key ?? "") < ExactString($1.key ?? "") }
        theirs = .object(object)
        return (changed, clashes)
    }
}
