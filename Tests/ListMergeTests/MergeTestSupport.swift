import ListDiff
import ListDiffTestSupport
import ListJSON
import ListMerge
import Testing

/// Snapshots written the short way: `"s: a b={\"k\":1} | r"` is section `s` holding `a` (content null)
/// and `b` (content `{"k":1}`), then an empty section `r`. A section's content goes after `=` too
/// (`"s={\"t\":1}: a"`). Contents hold no spaces and no `|`.
func snap(_ text: String) -> [JSONSection] {
    func item(_ token: Substring) -> JSONItem {
        guard let equals = token.firstIndex(of: "=") else { return JSONItem(id: String(token)) }
        let content = try! JSONValue(parsing: String(token[token.index(after: equals)...]))
        return JSONItem(id: String(token[..<equals]), content: content)
    }
    let trimmed = text.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
    guard !trimmed.isEmpty else { return [] }
    return trimmed.split(separator: "|").map { part in
        let part = part.split(separator: " ")
        var head = part.first!
        if head.hasSuffix(":") { head = head.dropLast() }
        return ArraySection(model: item(head), elements: part.dropFirst().map(item))
    }
}

/// The short form of a snapshot (the inverse of `snap`).
func describe(_ snapshot: [JSONSection]) -> String {
    func item(_ item: JSONItem) -> String {
        item.content.isNull ? item.id : "\(item.id)=\(item.content.serialized())"
    }
    return snapshot.map { section in
        ([item(section.model) + (section.elements.isEmpty ? "" : ":")] + section.elements.map(item))
            .joined(separator: " ")
    }.joined(separator: " | ")
}

/// Rebases mine's changes since `base` onto `theirs`.
func merge(base: String, mine: String, theirs: String) -> Rebase<JSONItem> {
    Rebase(Intent.changes(from: snap(base), to: snap(mine)), onto: snap(theirs))
}

/// Random JSON snapshots for the property tests, from `RandomSnapshots`' `TestItem` snapshots.
///
/// An item's integer content `c` becomes a JSON value: a number when `c` is a multiple of 7, else the
/// object `{"a": c % 10, "b": c / 10}`. `RandomSnapshots.edit` changes contents by +1 (key `a`,
/// sometimes `b` too); `theirsChanges` turns each of theirs' content changes into +10 (key `b`), so
/// that concurrent changes merge cleanly key by key, clash, or clash whole.
enum RandomMerge {
    static func json(_ content: Int) -> JSONValue {
        content % 7 == 0 ? JSONValue(content) : ["a": JSONValue(content % 10), "b": JSONValue(content / 10)]
    }

    static func json(_ snapshot: TestSnapshot) -> [JSONSection] {
        snapshot.map { section in
            ArraySection(
                model: JSONItem(id: section.model.id, content: json(section.model.content)),
                elements: section.elements.map { JSONItem(id: $0.id, content: json($0.content)) })
        }
    }

    /// `theirs` with every content that differs from the base item of the same id replaced by the
    /// base content + 10.
    static func theirsChanges(_ theirs: TestSnapshot, base: TestSnapshot) -> TestSnapshot {
        var sections: [String: Int] = [:]
        var elements: [String: Int] = [:]
        for section in base {
            sections[section.model.id] = sections[section.model.id] ?? section.model.content
            for element in section.elements { elements[element.id] = elements[element.id] ?? element.content }
        }
        return theirs.map { section in
            var section = section
            if let old = sections[section.model.id], old != section.model.content { section.model.content = old + 10 }
            for e in section.elements.indices {
                if let old = elements[section.elements[e].id], old != section.elements[e].content {
                    section.elements[e].content = old + 10
                }
            }
            return section
        }
    }

    /// Base, mine and theirs from one seed: mine and theirs are independent edits of the base, made
    /// with the same id counter, so both sides sometimes create the same ids.
    static func triple(seed: UInt64, duplicates: Bool, intensity: Double) -> (base: [JSONSection], mine: [JSONSection], theirs: [JSONSection]) {
        var random = RandomSnapshots(seed: seed, duplicates: duplicates)
        let base = random.snapshot(maxSections: 5, maxElements: 7)
        var other = random
        other.rng = SplitMix64(seed: seed ^ 0x5EED_7E1F_0000_0000)
        let mine = random.edit(base, intensity: intensity)
        let theirs = theirsChanges(other.edit(base, intensity: intensity), base: base)
        return (json(base), json(mine), json(theirs))
    }
}

/// How many times each id occurs among the sections, and among the elements.
func idCounts(_ snapshot: [JSONSection]) -> (sections: [ExactString: Int], elements: [ExactString: Int]) {
    var sections: [ExactString: Int] = [:]
    var elements: [ExactString: Int] = [:]
    for section in snapshot {
        sections[ExactString(section.model.id), default: 0] += 1
        for element in section.elements { elements[ExactString(element.id), default: 0] += 1 }
    }
    return (sections, elements)
}
