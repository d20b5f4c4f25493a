import ListDiff
import ListJSON

/// The list being rebased: sections in a doubly linked list, each section's elements in a doubly
/// linked list, and an index from reference to node, so that finding, removing and placing an item
/// cost O(1) whatever the list's length; the snapshot is materialized once at the end.
///
/// Node indices are `Int32`; a removed node stays in the arrays, out of the lists and the indexes.
@usableFromInline
struct _MergeState<Item: MergeableItem> {
    // Sections.
    @usableFromInline var sectionItems: [Item] = []
    @usableFromInline var sectionOrdinals: [Int] = []
    @usableFromInline var sectionPrevious: [Int32] = []
    @usableFromInline var sectionNext: [Int32] = []
    @usableFromInline var firstElement: [Int32] = []
    @usableFromInline var lastElement: [Int32] = []
    @usableFromInline var firstSection: Int32 = -1
    @usableFromInline var lastSection: Int32 = -1
    @usableFromInline var sectionIndex = _RefIndex(expected: 0)
    @usableFromInline var liveSections = 0

    // Elements.
    @usableFromInline var elementItems: [Item] = []
    @usableFromInline var elementOrdinals: [Int] = []
    @usableFromInline var elementPrevious: [Int32] = []
    @usableFromInline var elementNext: [Int32] = []
    /// The section holding each element, -1 once removed.
    @usableFromInline var elementSection: [Int32] = []
    @usableFromInline var elementIndex = _RefIndex(expected: 0)

    // Contents read (parsed once) or merged, by node; an item is rebuilt from its merged content only
    // in `snapshot()`, once, however many intents merged into it.
    @usableFromInline var sectionContents: [Int32: _MergedContent] = [:]
    @usableFromInline var elementContents: [Int32: _MergedContent] = [:]

    /// The state of `snapshot`, every item named by its ordinal among the items with its id in
    /// document order (sections and elements counted apart).
    /// - Complexity: O(n), one hash per identifier (two for a repeated one).
    @inlinable init(_ snapshot: [ArraySection<Item, Item>]) {
        precondition(snapshot.count < Int(Int32.max), "a snapshot holds fewer than 2^31 sections")
        var elementCount = 0
        for section in snapshot { elementCount += section.elements.count }
        precondition(elementCount < Int(Int32.max), "a snapshot holds fewer than 2^31 elements")
        let sectionCount = snapshot.count
        // The arrays are filled in bulk: sections and elements linked in document order.
        sectionItems.reserveCapacity(sectionCount)
        sectionOrdinals = Array(repeating: 0, count: sectionCount)
        sectionPrevious = (0..<Int32(truncatingIfNeeded: sectionCount)).map { $0 - 1 }
        sectionNext = (0..<Int32(truncatingIfNeeded: sectionCount)).map { $0 + 1 }
        if sectionCount > 0 {
            sectionNext[sectionCount - 1] = -1
            firstSection = 0
            lastSection = Int32(truncatingIfNeeded: sectionCount - 1)
        }
        liveSections = sectionCount
        firstElement.reserveCapacity(sectionCount)
        lastElement.reserveCapacity(sectionCount)
        elementItems.reserveCapacity(elementCount)
        elementOrdinals = Array(repeating: 0, count: elementCount)
        elementPrevious.reserveCapacity(elementCount)
        elementNext.reserveCapacity(elementCount)
        elementSection.reserveCapacity(elementCount)
        var e: Int32 = 0
        for (k, section) in snapshot.enumerated() {
            let s = Int32(truncatingIfNeeded: k)
            sectionItems.append(section.model)
            let elements = section.elements
            guard !elements.isEmpty else {
                firstElement.append(-1)
                lastElement.append(-1)
                continue
            }
            let first = e
            let last = e + Int32(truncatingIfNeeded: elements.count) - 1
            firstElement.append(first)
            lastElement.append(last)
            elementItems.append(contentsOf: elements)
            for _ in elements.indices {
                elementPrevious.append(e == first ? -1 : e - 1)
                elementNext.append(e == last ? -1 : e + 1)
                elementSection.append(s)
                e += 1
            }
        }
        Self.index(sectionItems, into: &sectionIndex, ordinals: &sectionOrdinals)
        Self.index(elementItems, into: &elementIndex, ordinals: &elementOrdinals)
    }

    /// Indexes `items`, node `n` being `items[n]`, and sets their ordinals: the first occurrence of
    /// an id keeps ordinal 0, the next ones count on.
    /// - Complexity: O(n), one hash per identifier (two for a repeated one).
    @inlinable static func index(_ items: [Item], into index: inout _RefIndex, ordinals: inout [Int]) {
        index = _RefIndex(expected: items.count)
        var repeats: [ExactString: Int] = [:]
        for n in items.indices {
            let id = items[n].documentID
            let node = Int32(truncatingIfNeeded: n)
            let key = { (m: Int32) in Self.ref(m, items, ordinals) }
            guard index.insert(node, for: ItemRef(id), key: key) != nil else { continue }
            let counted = ExactString(id)
            let ordinal = repeats[counted, default: 1]
            repeats[counted] = ordinal + 1
            ordinals[n] = ordinal
            _ = index.insert(node, for: ItemRef(id, ordinal: ordinal), key: key)
        }
    }

    // MARK: Reading

    /// The live section named `ref`, if any.
    @inlinable func section(_ ref: ItemRef) -> Int32? { sectionIndex.node(for: ref) { sectionRef($0) } }

    /// The live element named `ref`, if any.
    @inlinable func element(_ ref: ItemRef) -> Int32? { elementIndex.node(for: ref) { elementRef($0) } }

    /// The reference of a section node.
    @inlinable func sectionRef(_ s: Int32) -> ItemRef { Self.ref(s, sectionItems, sectionOrdinals) }

    /// The reference of an element node.
    @inlinable func elementRef(_ e: Int32) -> ItemRef { Self.ref(e, elementItems, elementOrdinals) }

    /// The reference of node `n` of `items`, whose ordinals are `ordinals`.
    @inlinable static func ref(_ n: Int32, _ items: [Item], _ ordinals: [Int]) -> ItemRef {
        ItemRef(items[Int(n)].documentID, ordinal: ordinals[Int(n)])
    }

    /// The elements of a section, in order.
    /// - Complexity: O(elements of the section).
    @inlinable func elements(of s: Int32) -> [Int32] {
        var result: [Int32] = []
        var e = firstElement[Int(s)]
        while e >= 0 {
            result.append(e)
            e = elementNext[Int(e)]
        }
        return result
    }

    /// The snapshot the state holds.
    /// - Complexity: O(n).
    @inlinable func snapshot() -> [ArraySection<Item, Item>] {
        var result: [ArraySection<Item, Item>] = []
        result.reserveCapacity(liveSections)
        var s = firstSection
        while s >= 0 {
            var elements: [Item] = []
            var e = firstElement[Int(s)]
            while e >= 0 {
                elements.append(item(e, elementItems, elementContents))
                e = elementNext[Int(e)]
            }
            result.append(ArraySection(model: item(s, sectionItems, sectionContents), elements: elements))
            s = sectionNext[Int(s)]
        }
        return result
    }

    // MARK: Changing items

    /// A new section node, in no list yet.
    @inlinable mutating func newSection(_ item: Item, ordinal: Int) -> Int32 {
        let s = Int32(truncatingIfNeeded: sectionItems.count)
        sectionItems.append(item)
        sectionOrdinals.append(ordinal)
        sectionPrevious.append(-1)
        sectionNext.append(-1)
        firstElement.append(-1)
        lastElement.append(-1)
        return s
    }

    /// A new section named `ref` (which no live section has), registered in the index, in no list yet.
    @inlinable mutating func addSection(_ ref: ItemRef, content: JSONValue) -> Int32 {
        let s = newSection(Item(documentID: ref.id, content: content), ordinal: ref.ordinal)
        let (items, ordinals) = (sectionItems, sectionOrdinals)
        let had = sectionIndex.insert(s, for: ref) { Self.ref($0, items, ordinals) }
        assert(had == nil, "addSection: \(ref) is indexed already")
        return s
    }

    /// A new element node, in no list yet.
    @inlinable mutating func newElement(_ item: Item, ordinal: Int) -> Int32 {
        let e = Int32(truncatingIfNeeded: elementItems.count)
        elementItems.append(item)
        elementOrdinals.append(ordinal)
        elementPrevious.append(-1)
        elementNext.append(-1)
        elementSection.append(-1)
        return e
    }

    /// A new element named `ref` (which no live element has), registered in the index, in no list yet.
    @inlinable mutating func addElement(_ ref: ItemRef, content: JSONValue) -> Int32 {
        let e = newElement(Item(documentID: ref.id, content: content), ordinal: ref.ordinal)
        let (items, ordinals) = (elementItems, elementOrdinals)
        let had = elementIndex.insert(e, for: ref) { Self.ref($0, items, ordinals) }
        assert(had == nil, "addElement: \(ref) is indexed already")
        return e
    }

    /// The item of node `n`, rebuilt when a merge changed its content.
    @inlinable func item(_ n: Int32, _ items: [Item], _ contents: [Int32: _MergedContent]) -> Item {
        guard let merged = contents[n], merged.changed else { return items[Int(n)] }
        return Item(documentID: items[Int(n)].documentID, content: merged.value)
    }

    /// A section's content as it stands.
    @inlinable func sectionContent(_ s: Int32) -> JSONValue {
        sectionContents[s]?.value ?? sectionItems[Int(s)].contentValue
    }

    /// An element's content as it stands.
    @inlinable func elementContent(_ e: Int32) -> JSONValue {
        elementContents[e]?.value ?? elementItems[Int(e)].contentValue
    }

    /// Merges into a section's content with `merge`, which changes it in place and says whether it did.
    /// - Complexity: O(1) plus `merge`'s (and, the first time, reading the item's content).
    @inlinable mutating func mergeSectionContent<T>(_ s: Int32, _ merge: (inout JSONValue) -> (changed: Bool, T)) -> T {
        Self.merge(into: s, of: &sectionContents, sectionItems, merge)
    }

    /// Merges into an element's content with `merge`, as `mergeSectionContent` does.
    @inlinable mutating func mergeElementContent<T>(_ e: Int32, _ merge: (inout JSONValue) -> (changed: Bool, T)) -> T {
        Self.merge(into: e, of: &elementContents, elementItems, merge)
    }

    /// Merges into node `n`'s content, taken out of `contents` (or read from its item the first time)
    /// so that nothing else holds it while `merge` changes it.
    @inlinable static func merge<T>(
        into n: Int32, of contents: inout [Int32: _MergedContent], _ items: [Item], _ merge: (inout JSONValue) -> (changed: Bool, T)
    ) -> T {
        var content = contents.removeValue(forKey: n) ?? _MergedContent(items[Int(n)].contentValue)
        let (changed, result) = merge(&content.value)
        content.changed = content.changed || changed
        contents[n] = content
        return result
    }

    /// Removes a section (not its elements) from the list and the index.
    @inlinable mutating func removeSection(_ s: Int32) {
        unlinkSection(s)
        let (items, ordinals) = (sectionItems, sectionOrdinals)
        sectionIndex.remove(sectionRef(s)) { Self.ref($0, items, ordinals) }
    }

    /// Removes an element from its section and the index.
    @inlinable mutating func removeElement(_ e: Int32) {
        unlinkElement(e)
        let (items, ordinals) = (elementItems, elementOrdinals)
        elementIndex.remove(elementRef(e)) { Self.ref($0, items, ordinals) }
    }

    // MARK: Placement (rule 1 of `Rebase`)

    /// Puts an unlinked section right after `after` (the start when `nil`) if it is live; else right
    /// before `before` (the end when `nil`) if it is; else at the end.
    @inlinable mutating func placeSection(_ s: Int32, after: ItemRef?, before: ItemRef?) {
        guard let after else { return linkSection(s, after: -1) }
        if let a = section(after), a != s { return linkSection(s, after: a) }
        if let before, let b = section(before), b != s { return linkSection(s, after: sectionPrevious[Int(b)]) }
        linkSection(s, after: lastSection)
    }

    /// Puts an unlinked element into section `s`: right after `after` (the start when `nil`) if it is in
    /// `s`; else right before `before` (the end when `nil`) if it is; else at the end of `s`.
    @inlinable mutating func placeElement(_ e: Int32, in s: Int32, after: ItemRef?, before: ItemRef?) {
        guard let after else { return linkElement(e, in: s, after: -1) }
        if let a = element(after), a != e, elementSection[Int(a)] == s { return linkElement(e, in: s, after: a) }
        if let before, let b = element(before), b != e, elementSection[Int(b)] == s {
            return linkElement(e, in: s, after: elementPrevious[Int(b)])
        }
        linkElement(e, in: s, after: lastElement[Int(s)])
    }

    // MARK: Linked lists

    /// Links an unlinked section after `a` (-1: at the start).
    @inlinable mutating func linkSection(_ s: Int32, after a: Int32) {
        let n = a >= 0 ? sectionNext[Int(a)] : firstSection
        sectionPrevious[Int(s)] = a
        sectionNext[Int(s)] = n
        if a >= 0 { sectionNext[Int(a)] = s } else { firstSection = s }
        if n >= 0 { sectionPrevious[Int(n)] = s } else { lastSection = s }
        liveSections += 1
    }

    /// Takes a section out of the list (its elements stay with it).
    @inlinable mutating func unlinkSection(_ s: Int32) {
        let (p, n) = (sectionPrevious[Int(s)], sectionNext[Int(s)])
        if p >= 0 { sectionNext[Int(p)] = n } else { firstSection = n }
        if n >= 0 { sectionPrevious[Int(n)] = p } else { lastSection = p }
        sectionPrevious[Int(s)] = -1
        sectionNext[Int(s)] = -1
        liveSections -= 1
    }

    /// Links an unlinked element into section `s` after `a` (-1: at the start).
    @inlinable mutating func linkElement(_ e: Int32, in s: Int32, after a: Int32) {
        let n = a >= 0 ? elementNext[Int(a)] : firstElement[Int(s)]
        elementPrevious[Int(e)] = a
        elementNext[Int(e)] = n
        elementSection[Int(e)] = s
        if a >= 0 { elementNext[Int(a)] = e } else { firstElement[Int(s)] = e }
        if n >= 0 { elementPrevious[Int(n)] = e } else { lastElement[Int(s)] = e }
    }

    /// Takes an element out of its section.
    @inlinable mutating func unlinkElement(_ e: Int32) {
        let s = elementSection[Int(e)]
        let (p, n) = (elementPrevious[Int(e)], elementNext[Int(e)])
        if p >= 0 { elementNext[Int(p)] = n } else { firstElement[Int(s)] = n }
        if n >= 0 { elementPrevious[Int(n)] = p } else { lastElement[Int(s)] = p }
        elementPrevious[Int(e)] = -1
        elementNext[Int(e)] = -1
        elementSection[Int(e)] = -1
    }
}

/// A node's content during a merge: read from its item once, then merged in place.
@usableFromInline
struct _MergedContent {
    @usableFromInline var value: JSONValue
    /// Whether a merge changed it (the item is rebuilt from `value` then).
    @usableFromInline var changed = false

    @inlinable init(_ value: JSONValue) { self.value = value }
}
