import ListDiff
import ListDiffTestSupport
import ListJSON
import ListStoreTestSupport
import Testing

@testable import ListStore
@testable import ListStoreCore

/// `CommitRows` without a database: written into an in-memory table (keyed, like the store's, by
/// section row and position), the rows of random commits give every target back, never write over
/// a row that is there, leave unchanged items untouched, and predict the head the table then holds.
@Suite(.heavyWork) struct CommitRowsTests {
    /// A list's rows: sections by row id, elements by (section row, position).
    struct Table {
        var sections: [Int64: (position: Int64, item: ListItem, hash: ContentHash)] = [:]
        var elements: [CommitRows.Slot: (item: ListItem, hash: ContentHash)] = [:]
        var nextRow: Int64 = 1
        var writes = 0

        /// The head the rows hold, read in position order.
        func head(version: Int, digest: ListDigest) -> StoredHead {
            var head = StoredHead.empty
            head.version = version
            head.digest = digest
            for (row, section) in sections.sorted(by: { $0.value.position < $1.value.position }) {
                head.sectionRows.append(row)
                head.sectionPositions.append(section.position)
                let elements = elements.filter { $0.key.section == row }.sorted { $0.key.position < $1.key.position }
                head.sections.append(
                    HeadSection(
                        model: HeadItem(id: section.item.id, hash: section.hash),
                        elements: elements.map { HeadItem(id: $0.value.item.id, hash: $0.value.hash) }))
                head.elementPositions.append(contentsOf: elements.map(\.key.position))
            }
            return head
        }

        /// The list the rows hold, contents and all.
        var list: [ListSection] {
            sections.sorted(by: { $0.value.position < $1.value.position }).map { row, section in
                ListSection(
                    model: section.item,
                    elements: elements.filter { $0.key.section == row }.sorted { $0.key.position < $1.key.position }.map(\.value.item))
            }
        }

        mutating func insert(_ slot: CommitRows.Slot, _ item: ListItem, _ hash: ContentHash) {
            #expect(elements[slot] == nil, "an insert over a row at \(slot)")
            elements[slot] = (item, hash)
            writes += 1
        }

        mutating func write(_ whole: CommitRows.WholeSections) -> [Int64] {
            for row in whole.deletedSectionRows {
                #expect(sections.removeValue(forKey: row) != nil)
                elements = elements.filter { $0.key.section != row }
                writes += 1
            }
            var rows: [Int64] = []
            // As the engines: nothing inserted once a content failed (the commit fails next).
            guard whole.failure == nil else { return rows }
            for k in whole.insertedSections.indices {
                let row = nextRow
                nextRow += 1
                rows.append(row)
                for element in whole.elements(ofInserted: k) {
                    insert(CommitRows.Slot(section: row, position: element.position), element.item, element.hash)
                }
            }
            return rows
        }

        mutating func write(_ rows: CommitRows) {
            for slot in rows.deletedElements {
                #expect(elements.removeValue(forKey: slot) != nil)
                writes += 1
            }
            for section in rows.insertedSections {
                #expect(sections[section.row] == nil)
                let (id, content, hash) = rows.section(section)
                sections[section.row] = (section.position, ListItem(id: id, content: content!), hash)
                writes += 1
            }
            for section in rows.updatedSections {
                let old = sections[section.row]!
                let (id, content, hash) = rows.section(section)
                #expect(section.contentChanged ? content != nil && hash != old.hash : content == nil && hash == old.hash)
                sections[section.row] = (section.position, section.contentChanged ? ListItem(id: id, content: content!) : old.item, hash)
                writes += 1
            }
            for element in rows.insertedElements {
                insert(element.slot, ListItem(id: rows.identifier(of: element), content: rows.content(of: element)!), rows.hash(of: element))
            }
            for element in rows.updatedElements {
                #expect(elements[element.slot] != nil)
                elements[element.slot] = (ListItem(id: rows.identifier(of: element), content: rows.content(of: element)!), rows.hash(of: element))
                writes += 1
            }
            var moved: [(CommitRows.ElementRow, ListItem, ContentHash)] = []
            for element in rows.movedElements {
                let old = elements.removeValue(forKey: element.from!)
                #expect(old != nil)
                let item = element.contentChanged ? ListItem(id: rows.identifier(of: element), content: rows.content(of: element)!) : old!.item
                moved.append((element, item, element.contentChanged ? rows.hash(of: element) : old!.hash))
            }
            for (element, item, hash) in moved { insert(element.slot, item, hash) }
        }
    }

    /// Commits `target` onto the table's head the way an engine does (by a diff, or with `replaying`
    /// by the stages of the changeset from `table.list`, as a replica applies its source's entry);
    /// returns the predicted head.
    private func commit(
        _ target: [ListSection], onto head: StoredHead, table: inout Table, replaying: Bool = false
    ) throws -> (StoredHead, CommitRows)? {
        let list = table.list
        let made =
            replaying
            ? try CommitPlan.replaying(
                ListChangeset(source: list, target: target).stagesJSON, on: head, describedAs: { "the entry" }, reading: { list })
            : CommitPlan.diffing(head, to: CommitContents.of(target), snapshot: target)
        let plan = try #require(made)
        guard !plan.changeset.isEmpty else { return nil }
        #expect(plan.pairing.invariantViolation() == nil)
        let whole = CommitRows.WholeSections(
            head: head, target: plan.target, contents: plan.contents,
            sectionPairing: replaying ? (plan.pairing.sectionTargetOf, plan.pairing.sectionSourceOf) : nil)
        let reserved = table.write(whole)
        let rows = try CommitRows(
            plan, whole: whole, reservedRows: reserved, head: head, list: "l", committedAt: "now", author: nil, message: nil)
        table.write(rows)
        return (rows.head(listID: 1), rows)
    }

    @Test func randomCommitsWriteEveryTargetAndPredictTheHead() throws {
        for seed in UInt64(1)...400 {
            var random = RandomSnapshots(seed: seed, duplicates: seed % 3 == 0)
            var table = Table()
            var head = StoredHead.empty
            var current = random.snapshot(maxSections: 4, maxElements: 6)
            for step in 0..<8 {
                let target = listSections(current)
                if let (predicted, rows) = try commit(target, onto: head, table: &table, replaying: seed % 2 == 0) {
                    let read = table.head(version: predicted.version, digest: predicted.digest)
                    #expect(table.list == target, "seed \(seed) step \(step)")
                    #expect(read.sections.isSameList(as: predicted.sections), "seed \(seed) step \(step)")
                    #expect(predicted.digest == ListDigest.of(target), "seed \(seed) step \(step)")
                    // A head said to have fingerprints has them all (a commit onto it compares them).
                    #expect(
                        !predicted.fingerprinted
                            || predicted.sections.allSatisfy { $0.model.fingerprint != 0 && $0.elements.allSatisfy { $0.fingerprint != 0 } })
                    #expect(predicted.sections.isSameList(as: CommitContents.of(target).sections), "seed \(seed) step \(step)")
                    #expect(rows.journal.version == head.version + 1 && rows.journal.parentVersion == head.version)
                    #expect(read.sectionRows == predicted.sectionRows, "seed \(seed) step \(step)")
                    #expect(read.sectionPositions == predicted.sectionPositions, "seed \(seed) step \(step)")
                    #expect(read.elementPositions == predicted.elementPositions, "seed \(seed) step \(step)")
                    // The next commit onto the head as a commit leaves it (with fingerprints), or as
                    // read from the rows (without).
                    head = step % 3 == 0 ? read : predicted
                } else {
                    #expect(target == table.list, "seed \(seed) step \(step)")
                }
                current = random.edit(current, intensity: [0.05, 0.3, 1.0][step % 3])
            }
        }
    }

    @Test func anUnchangedItemIsNotWrittenAndOneUpdateIsOneRow() throws {
        var table = Table()
        let first = linearList(1_000)
        let (head, _) = try #require(try commit(first, onto: .empty, table: &table))
        var second = first
        second[0].elements[500] = ListItem(id: second[0].elements[500].id, json: JSONValue(1))
        table.writes = 0
        let (_, rows) = try #require(try commit(second, onto: head, table: &table))
        #expect(table.writes == 1)
        #expect(rows.updatedElements.map(\.flat) == [500])
        #expect(rows.movedElements.isEmpty && rows.insertedElements.isEmpty && rows.deletedElements.isEmpty)
        #expect(rows.updatedSections.isEmpty && rows.insertedSections.isEmpty)
    }

    @Test func aMoveIsOneRowThatKeepsItsContent() throws {
        var table = Table()
        let first = linearList(100)
        let (head, _) = try #require(try commit(first, onto: .empty, table: &table))
        var second = first
        let moved = second[0].elements.remove(at: 10)
        second[0].elements.insert(moved, at: 90)
        table.writes = 0
        let (_, rows) = try #require(try commit(second, onto: head, table: &table))
        #expect(rows.movedElements.count == 1 && rows.movedElements[0].contentChanged == false)
        #expect(table.writes == 1)
    }

    /// From `_ContentChecks.parallelThreshold` changed contents on, they are checked on other
    /// threads while the rows are placed, and the digest made there: the rows, the head and the
    /// digest are the same as for a few changes, and the first content that is not canonical JSON
    /// in document order is still the one reported.
    @Test func manyChangedContentsGiveTheSameRowsAndDigestAndTheFirstFailure() throws {
        for seed in UInt64(1)...6 {
            var random = SplitMix64(seed: seed)
            var table = Table()
            let first = [linearList(700)[0], ListSection(model: ListItem(id: "s2"), elements: linearList(500, prefix: "t")[0].elements)]
            let (head, _) = try #require(try commit(first, onto: .empty, table: &table))
            var target = first
            // Updates in both sections, a move, and inserts: more changed contents than the threshold.
            for _ in 0..<400 {
                let s = Int(random.next() % 2)
                let e = Int(random.next() % UInt64(target[s].elements.count))
                target[s].elements[e] = ListItem(id: target[s].elements[e].id, json: JSONValue(Int(random.next() % 1_000_000)))
            }
            let moved = target[0].elements.remove(at: 3)
            target[1].elements.insert(moved, at: 7)
            for k in 0..<30 { target[1].elements.insert(ListItem(id: "new\(k)", json: JSONValue(k)), at: Int(random.next() % 400)) }
            #expect(
                CommitPlan.diffing(head, to: CommitContents.of(target), snapshot: target)!.changeset.counts.elementUpdated
                    >= _ContentChecks.parallelThreshold)

            // Two failures among the changed contents, and (once) one in a section inserted whole,
            // which comes last in document order.
            for withWhole in [false, true] {
                var failing = target
                failing[1].elements[450] = ListItem(id: failing[1].elements[450].id, content: Array("{ }".utf8))
                failing[0].elements[600] = ListItem(id: failing[0].elements[600].id, content: Array("[1 ]".utf8))
                if withWhole {
                    failing.append(ListSection(model: ListItem(id: "whole"), elements: [ListItem(id: "w", content: Array(" 1".utf8))]))
                }
                var untouched = table
                do {
                    _ = try commit(failing, onto: head, table: &untouched)
                    Issue.record("seed \(seed): a non-canonical content was accepted")
                } catch let error as StoreError {
                    #expect(
                        error.code == .invalidSnapshot && error.message.contains("sections[0].elements[600]"),
                        "seed \(seed), whole \(withWhole): \(error)")
                }
            }

            let (predicted, _) = try #require(try commit(target, onto: head, table: &table))
            let read = table.head(version: predicted.version, digest: predicted.digest)
            #expect(table.list == target, "seed \(seed)")
            #expect(predicted.digest == ListDigest.of(target), "seed \(seed)")
            #expect(read.sections.isSameList(as: predicted.sections), "seed \(seed)")
            #expect(read.elementPositions == predicted.elementPositions, "seed \(seed)")
        }
    }

    /// Stages another store's journal may hold (the stage contract allows them, this store's diff
    /// never makes them): a section inserted empty, then a head element moved into it; an element
    /// moved out of a section that a later stage deletes. The head keeps no contents, so the
    /// element's content comes from its row: the replay writes every target exactly, on the heads
    /// a commit leaves and on heads read from rows.
    @Test func stagesThatMoveHeadElementsIntoNewSectionsKeepTheirContents() throws {
        let first = [
            ListSection(model: ListItem("a"), elements: [ListItem("x", 1), ListItem("y", 2)]),
            ListSection(model: ListItem("b"), elements: [ListItem("z", 3)]),
        ]
        func stage(_ make: (inout Stage<ListItem, ListItem>) -> Void) -> Stage<ListItem, ListItem> {
            var stage = Stage<ListItem, ListItem>()
            make(&stage)
            return stage
        }
        let intoNew = ListChangeset(stages: [
            stage { $0.sectionInserted = [.init(index: 2, section: ListSection(model: ListItem("c"), elements: []))] },
            stage { $0.elementMoved = [Move(from: ElementPath(section: 0, element: 0), to: ElementPath(section: 2, element: 0))] },
        ])
        let outOfDeleted = ListChangeset(stages: [
            stage { $0.elementMoved = [Move(from: ElementPath(section: 0, element: 1), to: ElementPath(section: 1, element: 1))] },
            stage { $0.sectionDeleted = [0] },
        ])
        for changeset in [intoNew, outOfDeleted] {
            for readBack in [false, true] {
                var table = Table()
                let (made, _) = try #require(try commit(first, onto: .empty, table: &table))
                let head = readBack ? table.head(version: made.version, digest: made.digest) : made
                let target = try changeset.apply(to: first)
                let list = table.list
                let plan = try #require(
                    try CommitPlan.replaying(changeset.stagesJSON, on: head, describedAs: { "the entry" }, reading: { list }))
                let whole = CommitRows.WholeSections(
                    head: head, target: plan.target, contents: plan.contents,
                    sectionPairing: (plan.pairing.sectionTargetOf, plan.pairing.sectionSourceOf))
                let reserved = table.write(whole)
                let rows = try CommitRows(
                    plan, whole: whole, reservedRows: reserved, head: head, list: "l", committedAt: "now", author: nil, message: nil)
                table.write(rows)
                #expect(table.list == target)
                #expect(rows.head(listID: 1).digest == ListDigest.of(target))
            }
        }
    }

    @Test func contentThatIsNotCanonicalJSONIsRejectedInDocumentOrder() throws {
        var table = Table()
        let (head, _) = try #require(try commit(linearList(3), onto: .empty, table: &table))
        var target = table.list
        target[0].elements[2] = ListItem(id: "x", content: Array("{ }".utf8))
        target.append(ListSection(model: ListItem(id: "new"), elements: [ListItem(id: "y", content: Array("[1 ]".utf8))]))
        let plan = try #require(CommitPlan.diffing(head, to: CommitContents.of(target), snapshot: target))
        let whole = CommitRows.WholeSections(head: head, target: plan.target, contents: plan.contents, sectionPairing: nil)
        #expect(whole.failure != nil)
        #expect(throws: StoreError.self) {
            try CommitRows(plan, whole: whole, reservedRows: [99], head: head, list: "l", committedAt: "now", author: nil, message: nil)
        }
        do {
            _ = try CommitRows(plan, whole: whole, reservedRows: [99], head: head, list: "l", committedAt: "now", author: nil, message: nil)
        } catch let error as StoreError {
            #expect(error.code == .invalidSnapshot)
            #expect(error.message.contains("sections[0].elements[2]"))
        }
    }
}
