import ListJSON
import ListMerge

/// A merge's conflict report for people: one indented line per conflict, naming the item
/// and its section by id (as JSON strings, so empty ids and control characters stay visible), the
/// key both sides changed, and both values, shortened.
///
/// ```
///   contentConflict  "m1" in section "today", key "text": mine "hi!", theirs "hello"
///   deleted          "m4" in section "today" (theirs deleted it): mine [1,2]
/// ```
enum ConflictSummary {
    /// The lines of `conflicts`, each ending in a newline; empty for none.
    static func lines(_ conflicts: [Conflict]) -> String {
        let width = conflicts.map(\.kind.rawValue.count).max() ?? 0
        return conflicts.map { conflict in
            let kind = conflict.kind.rawValue
            var line = "  " + kind + String(repeating: " ", count: width - kind.count) + "  " + ref(conflict.item)
            if let section = conflict.section { line += " in section " + ref(section) }
            switch conflict.kind {
            case .deleted: line += " (theirs deleted it)"
            case .sectionDeleted: line += " (theirs deleted the section)"
            case .removedWithSection: line += " (mine deleted its section)"
            case .contentConflict: break
            case .listDeleted: line += " (theirs deleted the list)"
            case .unknownSection: line += conflict.section == nil ? " (the list never had it)" : " (the list never had the section)"
            }
            if let key = conflict.key { line += ", key " + StageSummary.id(key) }
            let values = [("mine", conflict.mine), ("theirs", conflict.theirs)].compactMap { name, value in
                value.map { "\(name) \(StageSummary.content($0.serialized()))" }
            }
            if !values.isEmpty { line += ": " + values.joined(separator: ", ") }
            return Output.printable(line) + "\n"
        }.joined()
    }

    /// `"m1"`, or `"m1"#2` for the third occurrence of a repeated id.
    private static func ref(_ ref: ItemRef) -> String {
        StageSummary.id(ref.id) + (ref.ordinal > 0 ? "#\(ref.ordinal)" : "")
    }
}
