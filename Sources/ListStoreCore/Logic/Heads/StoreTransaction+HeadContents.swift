import ListJSON
import ListMerge

/// The items whose contents a change reads: a merge's intents name them.
///
/// Not API: package-visible for the engines.
package struct TouchedItems: Sendable {
    /// Ids of elements and sections whose contents are read.
    package var elements: Set<ExactString> = []
    package var sections: Set<ExactString> = []
    /// Ids of sections all of whose elements' contents are read (a section delete reports the
    /// elements it removes).
    package var emptied: Set<ExactString> = []

    /// What `intents` read when rebased: the items they name, and the elements of the sections they
    /// delete.
    /// - Complexity: O(intents).
    package init(_ intents: [Intent]) {
        for intent in intents {
            switch intent {
            case .deleteSection(let ref, let elements):
                sections.insert(ExactString(ref.id))
                emptied.insert(ExactString(ref.id))
                for element in elements { self.elements.insert(ExactString(element.id)) }
            case .insertSection(let ref, _, let elements, _, _):
                sections.insert(ExactString(ref.id))
                for element in elements { self.elements.insert(ExactString(element.ref.id)) }
            case .moveSection(let ref, _, _), .updateSection(let ref, _, _):
                sections.insert(ExactString(ref.id))
            case .deleteElement(let ref), .insertElement(let ref, _, _, _, _), .moveElement(let ref, _, _, _),
                .updateElement(let ref, _, _, _):
                elements.insert(ExactString(ref.id))
            }
        }
    }
}

extension StoreTransaction {
    /// The sections of `head`, the list's head in this transaction, with the contents of the items
    /// `touched` names read from their rows, and for every other item a stand-in
    /// (`CommitContents.standIn(for:)`) that keeps its hash and fingerprint.
    /// - Throws: `.damaged` when a row the head names is missing.
    /// - Complexity: O(n) for the head's n items, plus one read of the touched rows.
    package func sections(of head: StoredHead, readingContentsOf touched: TouchedItems) throws -> [ListSection] {
        var slots: [CommitRows.Slot] = []
        var sectionRows: [Int64] = []
        var flat = 0
        for (s, section) in head.sections.enumerated() {
            let id = ExactString(section.model.id)
            if touched.sections.contains(id) { sectionRows.append(head.sectionRows[s]) }
            let all = touched.emptied.contains(id)
            for element in section.elements {
                if all || touched.elements.contains(ExactString(element.id)) {
                    slots.append(CommitRows.Slot(section: head.sectionRows[s], position: head.elementPositions[flat]))
                }
                flat += 1
            }
        }
        let read = try contents(ofElements: slots, sections: sectionRows)
        guard read.elements.count == slots.count, read.sections.count == sectionRows.count else {
            throw StoreError(.damaged, "rows of the head of list row \(head.listID) are missing")
        }
        flat = 0
        return head.sections.enumerated().map { s, section in
            let row = head.sectionRows[s]
            let model = ListItem(id: section.model.id, content: read.sections[row] ?? CommitContents.standIn(for: section.model))
            let elements = section.elements.map { element in
                defer { flat += 1 }
                let slot = CommitRows.Slot(section: row, position: head.elementPositions[flat])
                return ListItem(id: element.id, content: read.elements[slot] ?? CommitContents.standIn(for: element))
            }
            return ListSection(model: model, elements: elements)
        }
    }
}
