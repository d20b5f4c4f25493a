import ListDiff

/// What one commit changes in a store's tables, computed without a database or the list's contents
/// (the head holds ids, content hashes and positions; the plan, the contents it brings): the section and
/// element rows deleted, inserted, moved and updated (with their positions), the new head, the
/// journal entry and the digest. An engine only writes these rows; the commit logic is here, once.
///
/// It comes in two steps, so that an engine writes while the elements are still being diffed:
/// ``WholeSections`` (sections that leave or come whole, known from the section pairing alone), then
/// `CommitRows` itself, along the diff's pairing.
///
/// ```swift
/// let whole = CommitRows.WholeSections(head: head, target: plan.target, contents: plan.contents, sectionPairing: nil)
/// // the engine deletes whole.deletedSectionRows, reserves one row id per whole.insertedSections,
/// // and inserts their elements (whole.elements(ofInserted:))
/// let rows = try CommitRows(plan, whole: whole, reservedRows: ids, head: head, listName: "inbox",
///                           committedAt: now, author: nil, message: nil)
/// // then rows.deletedElements, rows.insertedSections, rows.updatedSections, rows.insertedElements,
/// // rows.updatedElements, rows.movedElements, the list row and rows.journal.
/// ```
///
/// Positions: an item that the changeset neither moves nor inserts keeps its row and position; placed
/// items get positions between their neighbours' (`_Positions`), and the rare neighbour that has to
/// make room is moved too.
///
/// Not API: package-visible for the engines.
package struct CommitRows: Sendable {
    /// An element row, addressed by its section row and its position in it.
    package struct Slot: Sendable, Hashable {
        package var section: Int64
        package var position: Int64
    }

    /// A target section written as a row: inserted (under a reserved id) or updated.
    package struct SectionRow: Sendable {
        /// Its index in the target.
        package var target: Int
        /// Its row id.
        package var row: Int64
        package var position: Int64
        /// For an update: whether the content changed (otherwise only the position is written).
        package var contentChanged: Bool
    }

    /// A target element written as a row.
    package struct ElementRow: Sendable {
        /// Its section in the target, its index there and its flat index.
        package var section: Int
        package var element: Int
        package var flat: Int
        /// Where it is written.
        package var slot: Slot
        /// For a move: where it was; `nil` for an insert or an update in place.
        package var from: Slot?
        /// For a move: whether its content changed too.
        package var contentChanged: Bool
    }

    /// The journal entry of the commit.
    package struct Journal: Sendable {
        package var list: String
        package var version: Int
        package var parentVersion: Int
        package var committedAt: String
        package var author: String?
        package var message: String?
        package var sectionCount: Int
        package var elementCount: Int
        let stages: _Background<[UInt8]>
        var digesting: _Background<(sections: [HeadSection], digest: ListDigest)>

        /// The staged changeset as the journal stores it (canonical JSON; waits for its writer).
        package var stagesJSON: [UInt8] { stages.wait() }
        /// The digest of the target (waits for its computation, which runs while rows are written).
        package var digest: ListDigest { digesting.wait().digest }
    }

    /// The target's ids, and its content hashes when `contents.hashed` (otherwise they are in
    /// `sectionHashes` and `elementHashes`).
    package let target: [HeadSection]
    /// The contents its new and changed items bring.
    package let contents: CommitContents
    /// Whether every target item brings its content (a snapshot's); otherwise only inserted and
    /// changed ones do (a replayed entry's).
    private let bringsAll: Bool
    /// The content hash of every target section, and of every target element (flat).
    package let sectionHashes: [ContentHash]
    /// `nil` when the target's items have their hashes (a replayed entry's, a hashed snapshot's).
    package let elementHashes: [ContentHash]?

    /// Element rows of paired sections without a partner in the target.
    package private(set) var deletedElements: [Slot] = []
    /// Sections without a partner in the head, under the row ids reserved for them.
    package private(set) var insertedSections: [SectionRow] = []
    /// Paired sections that moved or changed.
    package private(set) var updatedSections: [SectionRow] = []
    /// New elements of paired sections (those of inserted sections are in ``WholeSections``).
    package private(set) var insertedElements: [ElementRow] = []
    /// Elements that stay where they are and whose content changed.
    package private(set) var updatedElements: [ElementRow] = []
    /// Elements that change section or position (and perhaps content).
    package private(set) var movedElements: [ElementRow] = []
    /// The journal entry and the list's new head version and digest.
    package let journal: Journal
    /// The list's head once the rows are written (its list row id is the head's, or 0 for a new list).
    private let newHead: StoredHead

    /// The section rows whose elements this commit changes (deletes, inserts, updates or moves,
    /// from or to them), among those that stay.
    package var sectionsWithChangedElements: Set<Int64> {
        var rows = Set(deletedElements.map(\.section))
        for element in insertedElements + updatedElements + movedElements {
            rows.insert(element.slot.section)
            if let from = element.from { rows.insert(from.section) }
        }
        return rows
    }

    /// The new content of target element `row`; `nil` for a moved element whose content is the one
    /// in its row (the engine moves it with its row).
    package func content(of row: ElementRow) -> [UInt8]? {
        row.contentChanged || bringsAll ? contents[target[row.section].elements[row.element]] : nil
    }
    /// The identifier of target element `row`.
    package func identifier(of row: ElementRow) -> String { target[row.section].elements[row.element].id }
    /// The content hash of target element `row`.
    package func hash(of row: ElementRow) -> ContentHash {
        elementHashes?[row.flat] ?? target[row.section].elements[row.element].hash
    }
    /// The id of the target section of `row`, its new content (`nil` when its row holds it: a
    /// section that only moves) and its content hash.
    package func section(_ row: SectionRow) -> (id: String, content: [UInt8]?, hash: ContentHash) {
        let model = target[row.target].model
        return (model.id, row.contentChanged ? contents[model] : nil, sectionHashes[row.target])
    }

    /// The rows of a commit along the plan's pairing, after `whole` was written with section rows
    /// `reservedRows` (one per `whole.insertedSections`, in order).
    ///
    /// - Throws: `.invalidSnapshot` naming the first item, in document order (section contents first),
    ///   whose content is not canonical JSON.
    /// - Complexity: O(n) for n items, plus O(c log c) for c placed items.
    package init(
        _ plan: CommitPlan, whole: WholeSections, reservedRows: [Int64], head: StoredHead, list: String, committedAt: String,
        author: String?, message: String?
    ) throws {
        let pairing = plan.pairing
        let target = plan.target
        precondition(
            pairing.sectionTargetOf == whole.sectionPairing.targetOf && pairing.sectionSourceOf == whole.sectionPairing.sourceOf,
            "the plan pairs sections as the whole sections were")
        self.target = target
        contents = plan.contents
        bringsAll = plan.snapshot != nil
        // Inserted sections whose contents failed have no rows or element positions: their failure
        // (or an earlier one in document order) is thrown before anything is placed.
        if whole.failure != nil { _ = try whole.hashContents(pairing, head: head) }
        precondition(reservedRows.count == whole.insertedSections.count, "one row per inserted section")
        // The contents the target brings are checked and hashed (on other threads when there are
        // many), then the target's digest and the new head's items are made on another thread,
        // while the rows are placed (which needs neither) and written.
        let counts = plan.changeset.counts
        let hashing =
            counts.elementInserted + counts.elementUpdated + counts.elementMoved < _ContentChecks.parallelThreshold
            ? _Background(finished: Result { try whole.hashContents(pairing, head: head) })
            : _Background { Result { try whole.hashContents(pairing, head: head) } }
        let fingerprinted = plan.snapshot != nil || head.fingerprinted
        // A replayed target's items, and a hashed snapshot's, have their hashes (no element hashes
        // are made): they are the new head as they are. A snapshot compared by fingerprints gets them now.
        let digesting = _Background { () -> (sections: [HeadSection], digest: ListDigest) in
            // A target whose check fails is not committed: what is made here is never read.
            guard let (sectionHashes, elementHashes) = try? hashing.wait().get() else { return ([], ListDigest(hex: "")) }
            // The head's items name no place among this commit's contents (a later commit would read
            // another commit's contents there): sections whose items do are made again.
            guard let elementHashes else {
                let kept = target.map { section in
                    guard section.model.content >= 0 || section.elements.contains(where: { $0.content >= 0 }) else { return section }
                    return HeadSection(model: section.model.kept, elements: section.elements.map(\.kept))
                }
                return (kept, ListDigest(kept))
            }
            var flat = 0
            let sections = target.enumerated().map { t, section in
                var made = HeadSection(model: section.model.kept, elements: section.elements.map(\.kept))
                made.model.hash = sectionHashes[t]
                for e in made.elements.indices {
                    made.elements[e].hash = elementHashes[flat]
                    flat += 1
                }
                return made
            }
            return (sections, ListDigest(sections))
        }
        let targetStart = pairing.targetStart
        let version = head.version + 1

        var newHead = StoredHead.empty
        newHead.listID = head.listID
        newHead.version = version
        newHead.fingerprinted = fingerprinted
        newHead.elementIDHashes = plan.targetIDHashes
        // A head read in part moves no section: its target's sections are its own, in order.
        newHead.unloadedSections = head.unloadedSections

        // 1. Unpaired elements of paired sections (whole sections are in `whole`).
        for s in head.sections.indices where pairing.sectionTargetOf[s] >= 0 {
            for i in pairing.sourceStart[s]..<pairing.sourceStart[s + 1] where pairing.elementTargetOf[i] < 0 {
                deletedElements.append(Slot(section: head.sectionRows[s], position: head.elementPositions[i]))
            }
        }

        // 2. Sections: positions, new rows (under the reserved ids), moves and content.
        let sectionAnchors: [Int64?] = target.indices.map { t in
            let s = pairing.sectionSourceOf[t]
            return s >= 0 && !pairing.sectionPlaced[t] ? head.sectionPositions[s] : nil
        }
        let (sectionPositions, sectionDisplaced) = _Positions.assign(sectionAnchors, occupied: [])
        newHead.sectionPositions = sectionPositions
        var reserved = reservedRows.makeIterator()
        for t in target.indices {
            let s = pairing.sectionSourceOf[t]
            if s < 0 {
                let row = reserved.next()!
                insertedSections.append(SectionRow(target: t, row: row, position: sectionPositions[t], contentChanged: true))
                newHead.sectionRows.append(row)
                continue
            }
            let row = head.sectionRows[s]
            newHead.sectionRows.append(row)
            let moved = sectionAnchors[t] == nil || sectionDisplaced[t]
            if moved || pairing.sectionChanged[t] {
                updatedSections.append(
                    SectionRow(target: t, row: row, position: sectionPositions[t], contentChanged: pairing.sectionChanged[t]))
            }
        }

        // 3. Elements of paired sections, section by section.
        newHead.elementPositions.reserveCapacity(targetStart.last ?? 0)
        var isAnchor = [Bool](repeating: false, count: pairing.sourceElementCount)
        var k = 0
        for (t, section) in target.enumerated() {
            let s = pairing.sectionSourceOf[t]
            if s < 0 {
                newHead.elementPositions.append(contentsOf: whole.elementPositions(ofInserted: k))
                k += 1
                continue
            }
            let row = newHead.sectionRows[t]
            let start = targetStart[t]
            var anchors = [Int64?](repeating: nil, count: section.elements.count)
            for e in section.elements.indices {
                let source = Int(pairing.elementSourceOf[start + e])
                if source >= 0 && !pairing.elementPlaced[start + e] {
                    anchors[e] = head.elementPositions[source]
                    isAnchor[source] = true
                }
            }
            var occupied: [Int64] = []
            for i in pairing.sourceStart[s]..<pairing.sourceStart[s + 1] where !isAnchor[i] {
                occupied.append(head.elementPositions[i])
            }
            let (positions, displaced) = _Positions.assign(anchors, occupied: occupied)
            newHead.elementPositions.append(contentsOf: positions)
            for e in section.elements.indices {
                let flat = start + e
                let slot = Slot(section: row, position: positions[e])
                let source = Int(pairing.elementSourceOf[flat])
                if source < 0 {
                    insertedElements.append(
                        ElementRow(section: t, element: e, flat: flat, slot: slot, from: nil, contentChanged: true))
                    continue
                }
                let changed = pairing.elementChanged[flat]
                let oldPosition = head.elementPositions[source]
                if anchors[e] != nil && !displaced[e] {
                    guard changed else { continue }
                    updatedElements.append(
                        ElementRow(section: t, element: e, flat: flat, slot: slot, from: nil, contentChanged: true))
                    continue
                }
                let oldRow = head.sectionRows[pairing.sourceSection(containing: source)]
                movedElements.append(
                    ElementRow(
                        section: t, element: e, flat: flat, slot: slot, from: Slot(section: oldRow, position: oldPosition),
                        contentChanged: changed))
            }
        }

        (sectionHashes, elementHashes) = try hashing.wait().get()
        journal = Journal(
            list: list, version: version, parentVersion: head.version, committedAt: committedAt, author: author,
            message: message, sectionCount: target.count, elementCount: targetStart.last ?? 0, stages: plan.encodingStages(),
            digesting: digesting)
        self.newHead = newHead
    }

    /// The new head, with the list's row id (known once a new list's row is written).
    package func head(listID: Int64) -> StoredHead {
        var head = newHead
        head.listID = listID
        (head.sections, head.digest) = journal.digesting.wait()
        return head
    }
}
