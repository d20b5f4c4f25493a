import ListDiff
import ListJSON
import ListStore

/// An item the summary can name and show: JSON snapshot items and stored items.
protocol SummaryItem: JSONDocumentItem {
    /// The content as compact JSON text.
    var contentText: String { get }
}

extension JSONItem: SummaryItem {
    var contentText: String { content.serialized() }
}

extension ListItem: SummaryItem {
    var contentText: String { String(decoding: content, as: UTF8.self) }
}

/// A staged changeset described for people: a headline, then each stage with one aligned line per
/// operation, naming items by id (and showing new content, shortened).
struct StageSummary {
    let text: String

    /// Describes `changeset`, which applies to `source`.
    ///
    /// - Throws: `CommandFailure` (exit 1) if the changeset does not apply to `source`.
    init<Item: SummaryItem>(changeset: StagedChangeset<Item, Item>, source: [ArraySection<Item, Item>]) throws {
        var out = ""
        let counts = changeset.counts
        if changeset.isEmpty {
            text = "No changes: the snapshots are equal.\n"
            return
        }
        out += "\(Self.plural(changeset.count, "stage")), \(Self.plural(counts.total, "change")): \(Self.describe(counts))\n"
        var before = source
        for (index, stage) in changeset.enumerated() {
            let after: [ArraySection<Item, Item>]
            do {
                after = try stage.apply(to: before)
            } catch {
                throw CommandFailure("internal error: \(error)", status: ExitStatus.failure)
            }
            out += "\nStage \(index + 1) of \(changeset.count): \(Self.describe(stage.counts))\n"
            var rows: [(String, String, String)] = []
            for i in stage.sectionDeleted {
                rows.append(("delete section", "\(i)", Self.id(before[i].model.documentID)))
            }
            for move in stage.sectionMoved {
                rows.append(("move section", "\(move.from) → \(move.to)", Self.id(before[move.from].model.documentID)))
            }
            for insertion in stage.sectionInserted {
                let s = insertion.section
                rows.append(("insert section", "\(insertion.index)",
                             "\(Self.id(s.model.documentID)) with \(Self.plural(s.elements.count, "element"))  \(Self.content(s.model.contentText))"))
            }
            for update in stage.sectionUpdated {
                rows.append(("update section", "\(update.index)", "\(Self.id(after[update.index].model.documentID))  \(Self.content(update.model.contentText))"))
            }
            for path in stage.elementDeleted {
                rows.append(("delete element", "\(path)", Self.id(before[path.section].elements[path.element].documentID)))
            }
            for move in stage.elementMoved {
                rows.append(("move element", "\(move.from) → \(move.to)", Self.id(after[move.to.section].elements[move.to.element].documentID)))
            }
            for change in stage.elementInserted {
                rows.append(("insert element", "\(change.path)", "\(Self.id(change.element.documentID))  \(Self.content(change.element.contentText))"))
            }
            for change in stage.elementUpdated {
                rows.append(("update element", "\(change.path)", "\(Self.id(change.element.documentID))  \(Self.content(change.element.contentText))"))
            }
            let width = rows.map { $0.1.count }.max() ?? 0
            for (what, position, item) in rows {
                out += "  \(what.padding(14))  \(position.padding(width))  \(item)\n"
            }
            before = after
        }
        text = out
    }

    static func plural(_ count: Int, _ noun: String) -> String { "\(count) \(noun)\(count == 1 ? "" : "s")" }

    static func describe(_ counts: ChangeCounts) -> String {
        let parts: [(Int, String, String)] = [
            (counts.sectionDeleted, "section", "deleted"), (counts.sectionInserted, "section", "inserted"),
            (counts.sectionMoved, "section", "moved"), (counts.sectionUpdated, "section", "updated"),
            (counts.elementDeleted, "element", "deleted"), (counts.elementInserted, "element", "inserted"),
            (counts.elementMoved, "element", "moved"), (counts.elementUpdated, "element", "updated"),
        ]
        return parts.filter { $0.0 > 0 }.map { "\(plural($0.0, $0.1)) \($0.2)" }.joined(separator: ", ")
    }

    /// An id as a JSON string, so empty ids, spaces and control characters stay visible.
    static func id(_ id: String) -> String { JSONValue.string(id).serialized() }

    /// Content as compact JSON, shortened to keep one line readable.
    static func content(_ text: String) -> String {
        text.count <= 60 ? text : String(text.prefix(59)) + "…"
    }

}

extension String {
    fileprivate func padding(_ width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
