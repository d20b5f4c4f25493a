import Dispatch
import GRDB
import ListDiff

/// Writes one commit inside the caller's transaction: the rows that changed between the head and the
/// target, the journal entry and the list row; and builds the new in-memory head.
///
/// It works in two steps so that SQLite and the diff run at the same time: sections that leave or
/// come whole (known from the section pairing alone) are written by `writeUnpairedSections()` while
/// the elements are being diffed on another thread; `write(_:list:…)` writes the rest along the
/// diff's pairing.
struct _CommitWriter {
    let db: Database
    let head: _Head
    let target: [ListSection]
    let path: String
    /// The section pairing, as the diff pairs sections (`_pairSections`).
    let sectionTargetOf: [Int]
    let sectionSourceOf: [Int]
    /// Flat start of each target section's elements, then the total.
    let targetStart: [Int]

    /// For each target section without a partner: its reserved row id, and where its elements'
    /// positions and hashes start in `insertedPositions` / `insertedHashes` (-1 for paired sections).
    private var insertedRow: [Int64]
    private var insertedOffset: [Int]
    private var insertedPositions: [Int64] = []
    private var insertedHashes: [ContentHash] = []
    /// The first content of an inserted section found not to be canonical JSON (flat index, error).
    private var insertedFailure: (index: Int, error: StoreError)?

    /// - Parameter sectionPairing: how the sections of the head and the target pair, when the caller
    ///   knows (a replayed changeset); otherwise they are paired as the diff pairs them.
    init(db: Database, head: _Head, target: [ListSection], path: String, sectionPairing: (targetOf: [Int], sourceOf: [Int])? = nil) {
        self.db = db
        self.head = head
        self.target = target
        self.path = path
        (sectionTargetOf, sectionSourceOf) =
            sectionPairing ?? ListChangeset._pairSections(source: head.sections, target: target)
        targetStart = _flatStarts(target)
        insertedRow = [Int64](repeating: -1, count: target.count)
        insertedOffset = [Int](repeating: -1, count: target.count)
    }

    // MARK: - Step 1: whole sections

    /// Deletes the rows of head sections that have no partner in the target, and inserts the element
    /// rows of target sections that have none in the head (their section rows, whose positions depend
    /// on the diff's section moves, come in step 2 under ids reserved now).
    mutating func writeUnpairedSections() throws {
        let deleteSectionElements = try _RawStatement(db, "DELETE FROM element WHERE section_id = ?")
        let deleteSection = try _RawStatement(db, "DELETE FROM section WHERE id = ?")
        for s in head.sections.indices where sectionTargetOf[s] < 0 {
            deleteSectionElements.bind(1, head.sectionRows[s])
            try deleteSectionElements.execute()
            deleteSection.bind(1, head.sectionRows[s])
            try expectOne(try deleteSection.execute(), "section row \(head.sectionRows[s])")
        }

        let inserted = target.indices.filter { sectionSourceOf[$0] < 0 }
        guard !inserted.isEmpty else { return }
        var starts = [0]
        for t in inserted {
            insertedOffset[t] = starts.last!
            starts.append(starts.last! + target[t].elements.count)
        }
        let (hashes, failure) = _ContentHashing.hashes(of: target, count: starts.last!) { [starts] k in
            let i = _Flat.section(of: k, starts: starts)
            return (inserted[i], k - starts[i])
        }
        if let failure {
            let i = _Flat.section(of: failure.index, starts: starts)
            insertedFailure = (targetStart[inserted[i]] + failure.index - starts[i], failure.error)
            return
        }
        insertedHashes = hashes

        let maxRow = try _RawStatement(db, "SELECT coalesce(max(id), 0) FROM section")
        _ = try maxRow.step()
        var nextRow = maxRow.int64(0) + 1
        maxRow.reset()
        let insertElement = try _RawStatement(
            db, "INSERT INTO element (section_id, position, identifier, content, content_hash) VALUES (?, ?, ?, ?, ?)")
        insertedPositions.reserveCapacity(hashes.count)
        for t in inserted {
            let row = nextRow
            nextRow += 1
            insertedRow[t] = row
            let elements = target[t].elements
            let positions = _Positions.assign([Int64?](repeating: nil, count: elements.count), occupied: []).positions
            let offset = insertedOffset[t]
            for (e, element) in elements.enumerated() {
                insertElement.bind(1, row)
                insertElement.bind(2, positions[e])
                insertElement.bind(3, text: element.id)
                insertElement.bind(4, textBytes: element.content)
                insertElement.bind(5, hash: hashes[offset + e])
                try insertElement.execute()
            }
            insertedPositions.append(contentsOf: positions)
        }
    }

    // MARK: - Step 2: along the diff

    /// Checks and hashes every content written (inserted sections were done in step 1); unchanged
    /// items keep the head's hash.
    /// - Throws: `.invalidSnapshot` naming the first item, in document order (section contents first),
    ///   whose content is not canonical JSON.
    func hashContents(_ pairing: _DiffInput) throws -> (sections: [ContentHash], elements: [ContentHash]) {
        var sectionHashes = [ContentHash]()
        sectionHashes.reserveCapacity(target.count)
        for (t, section) in target.enumerated() {
            let s = pairing.sectionSourceOf[t]
            if s >= 0 && !pairing.sectionChanged[t] {
                sectionHashes.append(head.sectionHashes[s])
            } else {
                sectionHashes.append(try _ContentHashing.checkedHash(section.model) { "sections[\(t)].content" })
            }
        }
        // Unchanged elements keep the head's hash; the others are listed and hashed together.
        let total = targetStart.last ?? 0
        let placeholder = ContentHash(of: [])
        var hashes = [ContentHash]()
        hashes.reserveCapacity(total)
        var pending = [Int]()
        for t in target.indices {
            let start = targetStart[t]
            let end = targetStart[t + 1]
            let offset = insertedOffset[t]
            if offset >= 0 {
                // Hashed in step 1 (a failure there is reported below).
                if insertedHashes.isEmpty {
                    hashes.append(contentsOf: repeatElement(placeholder, count: end - start))
                } else {
                    hashes.append(contentsOf: insertedHashes[offset..<offset + end - start])
                }
                continue
            }
            for j in start..<end {
                let source = Int(pairing.elementSourceOf[j])
                if source >= 0 && !pairing.elementChanged[j] {
                    hashes.append(head.elementHashes[source])
                } else {
                    hashes.append(placeholder)
                    pending.append(j)
                }
            }
        }
        let (targetStart, pendingIndices) = (self.targetStart, pending)
        let (computed, pendingFailure) = _ContentHashing.hashes(of: target, count: pending.count) { k in
            let j = pendingIndices[k]
            let t = _Flat.section(of: j, starts: targetStart)
            return (t, j - targetStart[t])
        }
        for (k, j) in pending.enumerated() { hashes[j] = computed[k] }
        let failure = pendingFailure.map { (index: pending[$0.index], error: $0.error) }
        let failures = [failure, insertedFailure].compactMap { $0 }
        if let first = failures.min(by: { $0.index < $1.index }) { throw first.error }
        return (sectionHashes, hashes)
    }

    /// Writes the rest of the commit along the diff's pairing; returns the new head. The digest and
    /// the journal's JSON are computed on other threads while the rows are written.
    func write(
        _ plan: _CommitPlan, hashes: (sections: [ContentHash], elements: [ContentHash]), list: String, committedAt: String,
        author: String?, message: String?
    ) throws -> _Head {
        let pairing = plan.pairing
        precondition(
            pairing.sectionTargetOf == sectionTargetOf && pairing.sectionSourceOf == sectionSourceOf,
            "the plan pairs sections as the writer does")
        let version = head.version + 1
        let (sectionHashes, elementHashes) = hashes
        let digesting = _Background { [target] in
            ListDigest(target, sectionHashes: sectionHashes, elementHashes: elementHashes)
        }
        var listID = head.listID
        if head.version == 0 {
            try Store.validateNewListName(list)
            let insert = try _RawStatement(
                db, "INSERT INTO list (name, head_version, head_digest, base_version, created_at) VALUES (?, 0, '', 0, ?)")
            insert.bind(1, text: list)
            insert.bind(2, text: committedAt)
            try insert.execute()
            listID = db.lastInsertedRowID
        }

        // Where things land: placed items (moved or inserted) need positions, the others keep theirs.
        let targetTotal = targetStart.last ?? 0
        let (sectionPlaced, elementPlaced) = (plan.sectionPlaced, plan.elementPlaced)

        // 1. Unpaired elements of paired sections (whole sections went in step 1).
        let deleteElement = try _RawStatement(db, "DELETE FROM element WHERE section_id = ? AND position = ?")
        for s in head.sections.indices where sectionTargetOf[s] >= 0 {
            for i in pairing.sourceStart[s]..<pairing.sourceStart[s + 1] where pairing.elementTargetOf[i] < 0 {
                deleteElement.bind(1, head.sectionRows[s])
                deleteElement.bind(2, head.elementPositions[i])
                try expectOne(try deleteElement.execute(), "element row")
            }
        }

        // 2. Sections: positions, new rows (under the ids reserved in step 1), moves and content.
        var newHead = _Head.empty
        newHead.listID = listID
        newHead.version = version
        newHead.sections = target
        newHead.sectionHashes = sectionHashes
        newHead.elementHashes = elementHashes
        newHead.elementIDHashes = plan.targetIDHashes
        let sectionAnchors: [Int64?] = target.indices.map { t in
            let s = sectionSourceOf[t]
            return s >= 0 && !sectionPlaced[t] ? head.sectionPositions[s] : nil
        }
        let (sectionPositions, sectionDisplaced) = _Positions.assign(sectionAnchors, occupied: [])
        newHead.sectionPositions = sectionPositions
        let insertSection = try _RawStatement(
            db, "INSERT INTO section (id, list_id, position, identifier, content, content_hash) VALUES (?, ?, ?, ?, ?, ?)")
        let updateSection = try _RawStatement(
            db, "UPDATE section SET position = ?, content = ?, content_hash = ? WHERE id = ?")
        for (t, section) in target.enumerated() {
            let s = sectionSourceOf[t]
            if s < 0 {
                insertSection.bind(1, insertedRow[t])
                insertSection.bind(2, listID)
                insertSection.bind(3, sectionPositions[t])
                insertSection.bind(4, text: section.model.id)
                insertSection.bind(5, textBytes: section.model.content)
                insertSection.bind(6, hash: sectionHashes[t])
                try insertSection.execute()
                newHead.sectionRows.append(insertedRow[t])
                continue
            }
            let row = head.sectionRows[s]
            newHead.sectionRows.append(row)
            let moved = sectionAnchors[t] == nil || sectionDisplaced[t]
            if moved || pairing.sectionChanged[t] {
                updateSection.bind(1, sectionPositions[t])
                updateSection.bind(2, textBytes: section.model.content)
                updateSection.bind(3, hash: sectionHashes[t])
                updateSection.bind(4, row)
                try expectOne(try updateSection.execute(), "section row \(row)")
            }
        }

        // 3. Elements of paired sections, section by section.
        let insertElement = try _RawStatement(
            db, "INSERT INTO element (section_id, position, identifier, content, content_hash) VALUES (?, ?, ?, ?, ?)")
        let moveElement = try _RawStatement(
            db, "UPDATE element SET section_id = ?, position = ? WHERE section_id = ? AND position = ?")
        let moveAndUpdateElement = try _RawStatement(
            db,
            "UPDATE element SET section_id = ?, position = ?, content = ?, content_hash = ? WHERE section_id = ? AND position = ?")
        let updateElement = try _RawStatement(
            db, "UPDATE element SET content = ?, content_hash = ? WHERE section_id = ? AND position = ?")
        newHead.elementPositions.reserveCapacity(targetTotal)
        var isAnchor = [Bool](repeating: false, count: pairing.sourceStart.last ?? 0)
        for (t, section) in target.enumerated() {
            let s = sectionSourceOf[t]
            if s < 0 {
                let offset = insertedOffset[t]
                newHead.elementPositions.append(contentsOf: insertedPositions[offset..<offset + section.elements.count])
                continue
            }
            let row = newHead.sectionRows[t]
            let start = targetStart[t]
            let elements = section.elements
            var anchors = [Int64?](repeating: nil, count: elements.count)
            for e in elements.indices {
                let source = Int(pairing.elementSourceOf[start + e])
                if source >= 0 && !elementPlaced[start + e] {
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
            // Items are read only when written: most elements stay where they are.
            for e in elements.indices {
                let flat = start + e
                let source = Int(pairing.elementSourceOf[flat])
                if source < 0 {
                    let element = elements[e]
                    let hash = elementHashes[flat]
                    insertElement.bind(1, row)
                    insertElement.bind(2, positions[e])
                    insertElement.bind(3, text: element.id)
                    insertElement.bind(4, textBytes: element.content)
                    insertElement.bind(5, hash: hash)
                    try insertElement.execute()
                    continue
                }
                let changed = pairing.elementChanged[flat]
                let oldPosition = head.elementPositions[source]
                if anchors[e] != nil && !displaced[e] {
                    guard changed else { continue }
                    let (element, hash) = (elements[e], elementHashes[flat])
                    updateElement.bind(1, textBytes: element.content)
                    updateElement.bind(2, hash: hash)
                    updateElement.bind(3, row)
                    updateElement.bind(4, oldPosition)
                    try expectOne(try updateElement.execute(), "element row")
                    continue
                }
                let (element, hash) = (elements[e], elementHashes[flat])
                let oldRow = head.sectionRows[_Flat.section(of: source, starts: pairing.sourceStart)]
                let statement = changed ? moveAndUpdateElement : moveElement
                statement.bind(1, row)
                statement.bind(2, positions[e])
                var k: Int32 = 3
                if changed {
                    statement.bind(3, textBytes: element.content)
                    statement.bind(4, hash: hash)
                    k = 5
                }
                statement.bind(k, oldRow)
                statement.bind(k + 1, oldPosition)
                try expectOne(try statement.execute(), "element row")
            }
        }

        // 4. The journal entry and the list row.
        let digest = digesting.wait()
        let stagesJSON = plan.stagesJSON.wait()
        newHead.digest = digest
        let update = try _RawStatement(db, "UPDATE list SET head_version = ?, head_digest = ? WHERE id = ?")
        update.bind(1, version)
        update.bind(2, text: digest.hex)
        update.bind(3, listID)
        try expectOne(try update.execute(), "list \(list)")
        let journal = try _RawStatement(
            db, """
                INSERT INTO journal (list_id, version, parent_version, committed_at, digest, author, message,
                    section_count, element_count, stages) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
        journal.bind(1, listID)
        journal.bind(2, version)
        journal.bind(3, head.version)
        journal.bind(4, text: committedAt)
        journal.bind(5, text: digest.hex)
        journal.bind(6, optionalText: author)
        journal.bind(7, optionalText: message)
        journal.bind(8, target.count)
        journal.bind(9, targetTotal)
        journal.bind(10, textBytes: stagesJSON)
        try journal.execute()
        return newHead
    }

    private func expectOne(_ changes: Int, _ what: String) throws {
        guard changes == 1 else {
            throw StoreError(.damaged, "the store at \(path) is damaged: \(what) is missing from the tables")
        }
    }
}

/// Flat element indices.
enum _Flat {
    /// The section holding flat index `i`, given each section's flat start (then the total).
    /// - Complexity: O(log sections).
    static func section(of i: Int, starts: [Int]) -> Int {
        var low = 0
        var high = starts.count - 2
        while low < high {
            let mid = (low + high + 1) >> 1
            if starts[mid] <= i { low = mid } else { high = mid - 1 }
        }
        return low
    }
}
