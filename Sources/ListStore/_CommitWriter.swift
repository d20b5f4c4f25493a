import Dispatch
import GRDB
import ListDiff
import ListJSON

/// Writes one commit: the rows that changed between the head and the target, the journal entry and
/// the list row, all inside the caller's transaction; and builds the new in-memory head.
struct _CommitWriter {
    let db: Database
    let head: _Head
    let target: [ListSection]
    let changeset: ListChangeset
    let pairing: _DiffInput
    let path: String

    /// Content hashes of the target's sections and (flat) elements.
    private(set) var sectionHashes: [ContentHash] = []
    private(set) var elementHashes: [ContentHash] = []

    /// Checks the content of every item that will be written and hashes it; unchanged items keep the
    /// head's hash. The elements are split between two threads.
    /// - Throws: `.invalidSnapshot` naming the first item whose content is not canonical JSON.
    mutating func hashContents() throws {
        sectionHashes.reserveCapacity(target.count)
        for (t, section) in target.enumerated() {
            let s = pairing.sectionSourceOf[t]
            if s >= 0 && !pairing.sectionChanged[t] {
                sectionHashes.append(head.sectionHashes[s])
            } else {
                sectionHashes.append(try Self.checkedHash(section.model) { "sections[\(t)].content" })
            }
        }
        let total = pairing.targetStart.last ?? 0
        let failures = _Locked([Int: StoreError]())
        let target = self.target
        let pairing = self.pairing
        let headHashes = head.elementHashes
        elementHashes = [ContentHash](unsafeUninitializedCapacity: total) { buffer, count in
            let base = _Slots(base: buffer.baseAddress!)
            let workers = total >= 4096 ? 2 : 1
            DispatchQueue.concurrentPerform(iterations: workers) { worker in
                let from = total * worker / workers
                let to = total * (worker + 1) / workers
                guard from < to else { return }
                // The section holding flat index `from`.
                var t = 0
                while pairing.targetStart[t + 1] <= from { t += 1 }
                var j = from
                while j < to {
                    let start = pairing.targetStart[t]
                    let end = min(pairing.targetStart[t + 1], to)
                    let elements = target[t].elements
                    while j < end {
                        let source = Int(pairing.elementSourceOf[j])
                        if source >= 0 && !pairing.elementChanged[j] {
                            (base.base + j).initialize(to: headHashes[source])
                        } else {
                            do {
                                let (section, e) = (t, j - start)
                                (base.base + j).initialize(
                                    to: try Self.checkedHash(elements[j - start]) { "sections[\(section)].elements[\(e)].content" })
                            } catch {
                                failures.withLock { $0[j] = error as? StoreError }
                                (base.base + j).initialize(to: ContentHash(of: []))
                            }
                        }
                        j += 1
                    }
                    t += 1
                }
            }
            count = total
        }
        if let first = failures.withLock({ $0.min { $0.key < $1.key } }) { throw first.value }
    }

    /// The hash of an item's content after checking that it is canonical JSON.
    static func checkedHash(_ item: ListItem, path: () -> String) throws -> ContentHash {
        try checkCanonical(item.content, path: path)
        return ContentHash(of: item.content)
    }

    /// Throws unless `content` is canonical JSON text.
    static func checkCanonical(_ content: [UInt8], path: () -> String) throws {
        let value: JSONValue
        do {
            value = try JSONParser().parse(content)
        } catch {
            throw StoreError(.invalidSnapshot, "\(path()): not JSON: \(error)")
        }
        guard value.serializedBytes() == content else {
            throw StoreError(.invalidSnapshot, "\(path()): not canonical JSON (expected \(value.serialized()))")
        }
    }

    /// Writes everything; returns the new head.
    /// Writes everything; returns the new head. The digest and the journal's JSON are computed on
    /// another thread while the rows are written.
    func write(list: String, committedAt: String, author: String?, message: String?) throws -> _Head {
        let version = head.version + 1
        let background = _Background { [target, sectionHashes, elementHashes, changeset] in
            (ListDigest(target, sectionHashes: sectionHashes, elementHashes: elementHashes), changeset.stagesJSON)
        }
        var listID = head.listID
        if head.version == 0 {
            let insert = try _RawStatement(
                db, "INSERT INTO list (name, head_version, head_digest, base_version, created_at) VALUES (?, 0, '', 0, ?)")
            insert.bind(1, text: list)
            insert.bind(2, text: committedAt)
            try insert.execute()
            listID = db.lastInsertedRowID
        }

        // Where things land: placed items (moved or inserted) need positions, the others keep theirs.
        let targetTotal = pairing.targetStart.last ?? 0
        var sectionPlaced = [Bool](repeating: false, count: target.count)
        var elementPlaced = [Bool](repeating: false, count: targetTotal)
        for stage in changeset {
            for insertion in stage.sectionInserted { sectionPlaced[insertion.index] = true }
            for move in stage.sectionMoved { sectionPlaced[move.to] = true }
            for move in stage.elementMoved { elementPlaced[pairing.targetStart[move.to.section] + move.to.element] = true }
            for change in stage.elementInserted { elementPlaced[pairing.targetStart[change.path.section] + change.path.element] = true }
        }

        // 1. Deletions: sections without a partner (with their elements), then unpaired elements.
        let deleteSectionElements = try _RawStatement(db, "DELETE FROM element WHERE section_id = ?")
        let deleteSection = try _RawStatement(db, "DELETE FROM section WHERE id = ?")
        for s in head.sections.indices where pairing.sectionTargetOf[s] < 0 {
            deleteSectionElements.bind(1, head.sectionRows[s])
            try deleteSectionElements.execute()
            deleteSection.bind(1, head.sectionRows[s])
            try expectOne(try deleteSection.execute(), "section row \(head.sectionRows[s])")
        }
        let deleteElement = try _RawStatement(db, "DELETE FROM element WHERE section_id = ? AND position = ?")
        for s in head.sections.indices where pairing.sectionTargetOf[s] >= 0 {
            for i in pairing.sourceStart[s]..<pairing.sourceStart[s + 1] where pairing.elementTargetOf[i] < 0 {
                deleteElement.bind(1, head.sectionRows[s])
                deleteElement.bind(2, head.elementPositions[i])
                try expectOne(try deleteElement.execute(), "element row")
            }
        }

        // 2. Sections: positions, new rows, moves and content.
        var newHead = _Head.empty
        newHead.listID = listID
        newHead.version = version
        newHead.sections = target
        newHead.sectionHashes = sectionHashes
        newHead.elementHashes = elementHashes
        let sectionAnchors: [Int64?] = target.indices.map { t in
            let s = pairing.sectionSourceOf[t]
            return s >= 0 && !sectionPlaced[t] ? head.sectionPositions[s] : nil
        }
        let (sectionPositions, sectionDisplaced) = _Positions.assign(sectionAnchors, occupied: [])
        newHead.sectionPositions = sectionPositions
        let insertSection = try _RawStatement(
            db, "INSERT INTO section (list_id, position, identifier, content, content_hash) VALUES (?, ?, ?, ?, ?)")
        let updateSection = try _RawStatement(
            db, "UPDATE section SET position = ?, content = ?, content_hash = ? WHERE id = ?")
        for (t, section) in target.enumerated() {
            let s = pairing.sectionSourceOf[t]
            if s < 0 {
                insertSection.bind(1, listID)
                insertSection.bind(2, sectionPositions[t])
                insertSection.bind(3, text: section.model.id)
                insertSection.bind(4, textBytes: section.model.content)
                insertSection.bind(5, hash: sectionHashes[t])
                try insertSection.execute()
                newHead.sectionRows.append(db.lastInsertedRowID)
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

        // 3. Elements, section by section.
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
            let row = newHead.sectionRows[t]
            let start = pairing.targetStart[t]
            let s = pairing.sectionSourceOf[t]
            var anchors = [Int64?](repeating: nil, count: section.elements.count)
            var occupied: [Int64] = []
            if s >= 0 {
                for e in section.elements.indices {
                    let source = Int(pairing.elementSourceOf[start + e])
                    if source >= 0 && !elementPlaced[start + e] {
                        anchors[e] = head.elementPositions[source]
                        isAnchor[source] = true
                    }
                }
                for i in pairing.sourceStart[s]..<pairing.sourceStart[s + 1] where !isAnchor[i] {
                    occupied.append(head.elementPositions[i])
                }
            }
            let (positions, displaced) = _Positions.assign(anchors, occupied: occupied)
            newHead.elementPositions.append(contentsOf: positions)
            for (e, element) in section.elements.enumerated() {
                let flat = start + e
                let hash = elementHashes[flat]
                let source = Int(pairing.elementSourceOf[flat])
                if source < 0 {
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
                    updateElement.bind(1, textBytes: element.content)
                    updateElement.bind(2, hash: hash)
                    updateElement.bind(3, row)
                    updateElement.bind(4, oldPosition)
                    try expectOne(try updateElement.execute(), "element row")
                    continue
                }
                let oldRow = head.sectionRows[sourceSection(ofFlat: source)]
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
        let (digest, stagesJSON) = background.wait()
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

    private func sourceSection(ofFlat i: Int) -> Int {
        var low = 0
        var high = head.sections.count - 1
        while low < high {
            let mid = (low + high + 1) >> 1
            if pairing.sourceStart[mid] <= i { low = mid } else { high = mid - 1 }
        }
        return low
    }

    private func expectOne(_ changes: Int, _ what: String) throws {
        guard changes == 1 else {
            throw StoreError(.damaged, "the store at \(path) is damaged: \(what) is missing from the tables")
        }
    }
}

/// Where the hashing threads write their results.
///
/// `@unchecked Sendable`: each thread initializes a disjoint range of the buffer, and the buffer is
/// read only after `concurrentPerform` has returned.
private struct _Slots: @unchecked Sendable {
    let base: UnsafeMutablePointer<ContentHash>
}
