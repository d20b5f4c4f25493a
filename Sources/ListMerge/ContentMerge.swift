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
    /// - Complexity: O(size of the three contents), plus O(k log k) for k keys when merging objects.
    public init(base: JSONValue?, mine: JSONValue, theirs: JSONValue) {
        clashes = []
        if mine == theirs {
            value = mine
            return
        }
        if let base {
            if theirs == base {
                value = mine
                return
            }
            if mine == base {
                value = theirs
                return
            }
        }
        guard case .object(let mineObject) = mine, case .object(let theirsObject) = theirs else {
            value = mine
            clashes = [Clash(key: nil, mine: mine, theirs: theirs)]
            return
        }
        let baseObject: JSONObject
        switch base {
        case nil: baseObject = JSONObject()
        case .object(let object)?: baseObject = object
        default:
            value = mine
            clashes = [Clash(key: nil, mine: mine, theirs: theirs)]
            return
        }
        var merged: [(String, JSONValue)] = []
        var seen = Set<ExactString>()
        for key in mineObject.keys + theirsObject.keys + baseObject.keys where seen.insert(ExactString(key)).inserted {
            let (b, m, t) = (baseObject[key], mineObject[key], theirsObject[key])
            let kept: JSONValue?
            if m == t || t == b {
                kept = m
            } else if m == b {
                kept = t
            } else {
                kept = m
                clashes.append(Clash(key: key, mine: m, theirs: t))
            }
            if let kept { merged.append((key, kept)) }
        }
        clashes.sort { ExactString($0.key ?? "") < ExactString($1.key ?? "") }
        value = .object(JSONObject(uniqueKeysWithValues: merged))
    }
}
