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
    /// The sections of `head`, the list's head in this transaction, as a merge sees them: the items
    /// `touched` names with their contents read from their rows, the others as the head keeps them
    /// (a rebase that reads one of those is noted in `merge`).
    /// - Throws: `.damaged` when a row the head names is missing.
    /// - Complexity: O(n) for the head's n items, plus one read of the touched rows.
    package func mergeSections(of head: StoredHead, readingContentsOf touched: TouchedItems, in merge: _MergeContext) throws
        -> [_MergeSection]
    {
        var slots: [CommitRows.Slot] = []
        var read: [(section: Int, element: Int)] = []
        var sectionRows: [Int64] = []
        // The head's elements are sieved by their identifiers' pairing hashes (which the head
        // keeps): only those whose hash the touched ids' take are looked up among them.
        let sieve = _HashSieve(touched.elements.map { HeadItem.pairingHash(of: $0, seed: .process) })
        let hashes = head.elementIDHashes ?? _IdentifierHashes.of(head.sections)
        var flat = 0
        for (s, section) in head.sections.enumerated() {
            let id = ExactString(section.model.id)
            if touched.sections.contains(id) { sectionRows.append(head.sectionRows[s]) }
            let all = touched.emptied.contains(id)
            for (e, element) in section.elements.enumerated() {
                if all || (sieve.mayHold(hashes[flat]) && touched.elements.contains(ExactString(element.id))) {
                    slots.append(CommitRows.Slot(section: head.sectionRows[s], position: head.elementPositions[flat]))
                    read.append((s, e))
                }
                flat += 1
            }
        }
        let found = try contents(ofElements: slots, sections: sectionRows)
        guard found.elements.count == slots.count, found.sections.count == sectionRows.count else {
            throw StoreError(.damaged, "rows of the head of list row \(head.listID) are missing")
        }
        var sections = head.sections.enumerated().map { s, section in
            _MergeSection(
                model: found.sections[head.sectionRows[s]].map { _MergeItem(id: section.model.id, content: $0) }
                    ?? _MergeItem(id: section.model.id, keptAt: (s, -1), of: merge),
                elements: section.elements.enumerated().map { e, element in _MergeItem(id: element.id, keptAt: (s, e), of: merge) })
        }
        for (k, place) in read.enumerated() {
            sections[place.section].elements[place.element] = _MergeItem(
                id: head.sections[place.section].elements[place.element].id, content: found.elements[slots[k]]!)
        }
        return sections
    }
}
