import ListJSON
import ListMerge

/// Property (d): whether an intent was honoured by a rebase, or else reported. Ids are unique.
enum Honoured {
    /// Why `intent` (one of the changes from some base to `mine`) is neither honoured in `result` nor
    /// reported, or `nil`.
    ///
    /// Honoured: a delete leaves no such item; an insert or move puts the item into its container,
    /// right after its neighbour in mine when that is there (first when it has none); an update or
    /// insert shows mine's content, or for objects mine's value on each key mine changed.
    static func problem(_ intent: Intent, in result: Rebase<JSONItem>, mine: [JSONSection]) -> String? {
        let snapshot = result.snapshot
        func reported(_ kinds: Conflict.Kind...) -> Bool {
            result.conflicts.contains { kinds.contains($0.kind) && $0.item == intent.ref }
        }
        func section(_ ref: ItemRef) -> Int? { snapshot.firstIndex { $0.model.id == ref.id } }
        func element(_ ref: ItemRef) -> (section: Int, index: Int)? {
            for (s, section) in snapshot.enumerated() {
                if let e = section.elements.firstIndex(where: { $0.id == ref.id }) { return (s, e) }
            }
            return nil
        }
        /// Mine's content, or for objects each key mine changed from `base`.
        func honoured(_ content: JSONValue, base: JSONValue?, shown: JSONValue) -> Bool {
            if shown == content { return true }
            guard case .object(let mine) = content, case .object(let merged) = shown else { return false }
            let old: JSONObject
            switch base {
            case nil: old = JSONObject()
            case .object(let object)?: old = object
            default: return false
            }
            return Set(mine.keys + old.keys).allSatisfy { key in mine[key] == old[key] || merged[key] == mine[key] }
        }
        /// Right after `after` when it is in the container, first when `after` is nil.
        func placed(_ ids: [String], at index: Int, after: ItemRef?) -> Bool {
            guard let after else { return index == 0 }
            guard let a = ids.firstIndex(of: after.id) else { return true }
            return a + 1 == index
        }
        let sectionIDs = snapshot.map(\.model.id)

        switch intent {
        case .deleteSection(let ref, _):
            return section(ref) == nil ? nil : "section still there"
        case .deleteElement(let ref):
            return element(ref) == nil ? nil : "element still there"
        case .insertSection(let ref, let content, let elements, let after, _):
            guard let s = section(ref) else { return "section missing" }
            guard honoured(content, base: nil, shown: snapshot[s].model.content) else { return "content" }
            guard placed(sectionIDs, at: s, after: after) else { return "placement" }
            let ids = snapshot[s].elements.map(\.id)
            // Between the elements of an inserted section mine may move others: the anchor of each is
            // its neighbour in mine.
            guard let mineSection = mine.first(where: { $0.model.id == ref.id }) else { return "not in mine" }
            for member in elements {
                guard let e = ids.firstIndex(of: member.ref.id) else { return "element \(member.ref) missing" }
                guard honoured(member.content, base: nil, shown: snapshot[s].elements[e].content) else {
                    return "content of \(member.ref)"
                }
                let m = mineSection.elements.firstIndex { $0.id == member.ref.id }!
                let after = m > 0 ? ItemRef(mineSection.elements[m - 1].id) : nil
                guard placed(ids, at: e, after: after) else { return "placement of \(member.ref)" }
            }
            return nil
        case .moveSection(let ref, let after, _):
            if let s = section(ref) { return placed(sectionIDs, at: s, after: after) ? nil : "placement" }
            return reported(.deleted) ? nil : "section missing, not reported"
        case .updateSection(let ref, let base, let content):
            if let s = section(ref) { return honoured(content, base: base, shown: snapshot[s].model.content) ? nil : "content" }
            return reported(.deleted) ? nil : "section missing, not reported"
        case .insertElement(let ref, let content, let target, let after, _):
            guard let (s, e) = element(ref), snapshot[s].model.id == target.id else {
                return reported(.sectionDeleted) ? nil : "element not in its section, not reported"
            }
            guard honoured(content, base: nil, shown: snapshot[s].elements[e].content) else { return "content" }
            return placed(snapshot[s].elements.map(\.id), at: e, after: after) ? nil : "placement"
        case .moveElement(let ref, let target, let after, _):
            guard let (s, e) = element(ref), snapshot[s].model.id == target.id else {
                return reported(.deleted, .sectionDeleted) ? nil : "element not in its section, not reported"
            }
            return placed(snapshot[s].elements.map(\.id), at: e, after: after) ? nil : "placement"
        case .updateElement(let ref, _, let base, let content):
            guard let (s, e) = element(ref) else { return reported(.deleted) ? nil : "element missing, not reported" }
            return honoured(content, base: base, shown: snapshot[s].elements[e].content) ? nil : "content"
        }
    }
}
