import ListDiff
import ListDiffTestSupport
import ListJSON
import ListMerge

/// Theirs' side of property (b): random edits of the base that touch nothing mine's intents name, and
/// the check that a rebase kept both sides' changes. Ids are unique.
///
/// Theirs never deletes, moves or updates a section an intent names (as the item, an anchor or an
/// element's section), never deletes, moves or updates an element an intent names (as the item, an
/// anchor, or an element of a section mine deletes), and never inserts into a section mine deletes.
/// It does everything else: deletes, moves (also across sections) and updates other items, inserts new
/// sections and elements anywhere, next to mine's anchors included.
enum UntouchedEdit {
    struct Touched {
        var sections = Set<String>()
        var elements = Set<String>()
        var deletedSections = Set<String>()

        init(_ intents: [Intent]) {
            for intent in intents {
                switch intent {
                case .deleteSection(let ref, let known):
                    sections.insert(ref.id)
                    deletedSections.insert(ref.id)
                    for element in known { elements.insert(element.id) }
                case .insertSection(let ref, _, let members, let after, let before):
                    sections.formUnion([ref, after, before].compactMap { $0?.id })
                    for member in members { elements.insert(member.ref.id) }
                case .moveSection(let ref, let after, let before):
                    sections.formUnion([ref, after, before].compactMap { $0?.id })
                case .updateSection(let ref, _, _):
                    sections.insert(ref.id)
                case .deleteElement(let ref):
                    elements.insert(ref.id)
                case .insertElement(let ref, _, let section, let after, let before),
                    .moveElement(let ref, let section, let after, let before):
                    elements.formUnion([ref, after, before].compactMap { $0?.id })
                    sections.insert(section.id)
                case .updateElement(let ref, let section, _, _):
                    elements.insert(ref.id)
                    sections.insert(section.id)
                }
            }
        }
    }

    static func make(base: [JSONSection], sparing intents: [Intent], using rng: inout SplitMix64) -> [JSONSection] {
        let touched = Touched(intents)
        var fresh = 0
        func newID(_ prefix: String) -> String {
            fresh += 1
            return "\(prefix)\(fresh)"
        }
        func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &rng) < p }
        var theirs = base
        // Sections.
        theirs = theirs.filter { section in
            touched.sections.contains(section.model.id)
                || section.elements.contains { touched.elements.contains($0.id) } || !chance(0.15)
        }
        for s in theirs.indices where !touched.sections.contains(theirs[s].model.id) && chance(0.2) {
            theirs[s].model.content = .string("T-\(theirs[s].model.id)")
        }
        if chance(0.3), let s = theirs.indices.filter({ !touched.sections.contains(theirs[$0].model.id) }).randomElement(using: &rng) {
            let section = theirs.remove(at: s)
            theirs.insert(section, at: Int.random(in: 0...theirs.count, using: &rng))
        }
        if chance(0.3) {
            let elements = (0..<Int.random(in: 0...2, using: &rng)).map { _ in JSONItem(id: newID("t"), content: 1) }
            theirs.insert(
                ArraySection(model: JSONItem(id: newID("T"), content: 1), elements: elements),
                at: Int.random(in: 0...theirs.count, using: &rng))
        }
        // Elements, outside the sections mine deletes.
        let open = theirs.indices.filter { !touched.deletedSections.contains(theirs[$0].model.id) }
        for s in open {
            theirs[s].elements = theirs[s].elements.filter { touched.elements.contains($0.id) || !chance(0.1) }
            for e in theirs[s].elements.indices where !touched.elements.contains(theirs[s].elements[e].id) && chance(0.15) {
                theirs[s].elements[e].content = .string("t-\(theirs[s].elements[e].id)")
            }
            for _ in 0..<Int.random(in: 0...2, using: &rng) {
                theirs[s].elements.insert(
                    JSONItem(id: newID("t"), content: 2), at: Int.random(in: 0...theirs[s].elements.count, using: &rng))
            }
        }
        guard !open.isEmpty else { return theirs }
        for _ in 0..<Int.random(in: 0...2, using: &rng) {
            let s = open.randomElement(using: &rng)!
            let movable = theirs[s].elements.indices.filter { !touched.elements.contains(theirs[s].elements[$0].id) }
            guard let e = movable.randomElement(using: &rng) else { continue }
            let element = theirs[s].elements.remove(at: e)
            let d = open.randomElement(using: &rng)!
            theirs[d].elements.insert(element, at: Int.random(in: 0...theirs[d].elements.count, using: &rng))
        }
        return theirs
    }

    /// What the result misses of either side's changes, or `nil` when it has them all: mine's
    /// deletes, inserts, moves (right after their neighbour in mine, or first) and contents, theirs'
    /// deletes, inserts, moves (the section theirs put an element in, theirs' order among the items
    /// mine did not place) and contents.
    static func problem(
        base: [JSONSection], mine: [JSONSection], theirs: [JSONSection], intents: [Intent], result: [JSONSection]
    ) -> String? {
        // An element's neighbour before it in mine: its `after` anchor, also for elements of an inserted
        // section (between which mine may move others).
        var predecessor: [String: String?] = [:]
        for section in mine {
            for (e, element) in section.elements.enumerated() { predecessor[element.id] = e > 0 ? section.elements[e - 1].id : nil }
        }
        var deletedSections = Set<String>()
        var deletedElements = Set<String>()
        var placedSections: [String: String?] = [:]  // id → after
        var placedElements: [String: (section: String, after: String?)] = [:]
        var sectionContent: [String: JSONValue] = [:]
        var elementContent: [String: JSONValue] = [:]
        for intent in intents {
            switch intent {
            case .deleteSection(let ref, let known):
                deletedSections.insert(ref.id)
                for element in known { deletedElements.insert(element.id) }
            case .insertSection(let ref, let content, let members, let after, _):
                placedSections[ref.id] = .some(after?.id)
                sectionContent[ref.id] = content
                for member in members {
                    placedElements[member.ref.id] = (ref.id, predecessor[member.ref.id] ?? nil)
                    elementContent[member.ref.id] = member.content
                }
            case .moveSection(let ref, let after, _):
                placedSections[ref.id] = .some(after?.id)
            case .updateSection(let ref, _, let content):
                sectionContent[ref.id] = content
            case .deleteElement(let ref):
                deletedElements.insert(ref.id)
            case .insertElement(let ref, let content, let section, let after, _):
                placedElements[ref.id] = (section.id, after?.id)
                elementContent[ref.id] = content
            case .moveElement(let ref, let section, let after, _):
                placedElements[ref.id] = (section.id, after?.id)
            case .updateElement(let ref, _, _, let content):
                elementContent[ref.id] = content
            }
        }
        var theirsSection: [String: JSONSection] = [:]
        var theirsElement: [String: (section: String, item: JSONItem)] = [:]
        for section in theirs {
            theirsSection[section.model.id] = section
            for element in section.elements { theirsElement[element.id] = (section.model.id, element) }
        }

        // Sections: which, their contents, their order.
        let expectedSections = Set(theirs.map(\.model.id)).subtracting(deletedSections).union(placedSections.keys)
        guard Set(result.map(\.model.id)) == expectedSections, result.count == expectedSections.count else {
            return "sections \(result.map(\.model.id)), expected \(expectedSections.sorted())"
        }
        for (t, section) in result.enumerated() {
            let id = section.model.id
            let content = sectionContent[id] ?? theirsSection[id]!.model.content
            guard section.model.content == content else { return "section \(id) shows \(section.model.content), expected \(content)" }
            if let after = placedSections[id] {
                guard let after else {
                    if t != 0 { return "section \(id) is not first" }
                    continue
                }
                guard t > 0, result[t - 1].model.id == after else { return "section \(id) is not right after \(after)" }
            }
        }
        let keptOrder = theirs.map(\.model.id).filter { placedSections[$0] == nil && !deletedSections.contains($0) }
        guard result.map(\.model.id).filter({ placedSections[$0] == nil }) == keptOrder else {
            return "sections mine did not place are out of theirs' order"
        }

        // Elements: which, where, their contents, their order.
        var expectedElements = Set(theirsElement.keys).subtracting(deletedElements)
        for id in placedElements.keys { expectedElements.insert(id) }
        let resultElements = result.flatMap { $0.elements.map(\.id) }
        guard Set(resultElements) == expectedElements, resultElements.count == expectedElements.count else {
            return "elements \(resultElements.sorted()), expected \(expectedElements.sorted())"
        }
        for section in result {
            let sid = section.model.id
            for (j, element) in section.elements.enumerated() {
                let id = element.id
                let content = elementContent[id] ?? theirsElement[id]!.item.content
                guard element.content == content else { return "element \(id) shows \(element.content), expected \(content)" }
                let expectedSection = placedElements[id]?.section ?? theirsElement[id]!.section
                guard expectedSection == sid else { return "element \(id) is in \(sid), expected \(expectedSection)" }
                if let placed = placedElements[id] {
                    if let after = placed.after {
                        guard j > 0, section.elements[j - 1].id == after else { return "element \(id) is not right after \(after)" }
                    } else if j != 0 {
                        return "element \(id) is not first in \(sid)"
                    }
                }
            }
            let kept = (theirsSection[sid]?.elements ?? []).map(\.id).filter {
                placedElements[$0] == nil && !deletedElements.contains($0)
            }
            guard section.elements.map(\.id).filter({ placedElements[$0] == nil }) == kept else {
                return "elements of \(sid) mine did not place are out of theirs' order"
            }
        }
        return nil
    }
}
