// The paged reads and paged syncs of an `InMemoryStore` (see `SQLTransaction+Pages`).
extension InMemoryTransaction {
    func headRecords(listID: Int64, after cursor: (section: Int64, element: Int64?)?, limit: Int) throws
        -> [(after: (section: Int64, element: Int64?), record: ListPage.Record)]
    {
        let sections = tables.sectionsOfList[listID, default: []].compactMap { row in tables.sections[row].map { (row, $0) } }
            .filter { cursor == nil || $0.1.position >= cursor!.section }
            .sorted { $0.1.position < $1.1.position }
        var records: [(after: (section: Int64, element: Int64?), record: ListPage.Record)] = []
        for (row, section) in sections where records.count < limit {
            let continuing = cursor?.section == section.position
            if !continuing {
                records.append(((section.position, nil), ListPage.Record(isSection: true, item: section.model)))
            }
            let after = continuing ? cursor?.element ?? .min : .min
            for (position, element) in tables.elements[row, default: [:]].filter({ $0.key > after }).sorted(by: { $0.key < $1.key }) {
                guard records.count < limit else { break }
                records.append(((section.position, position), ListPage.Record(isSection: false, item: element.item)))
            }
        }
        if let cursor, !sections.contains(where: { $0.1.position == cursor.section }) {
            throw StoreError(.versionNotFound, "no record of the list's head is at the cursor '\(ListPage.Cursor(section: cursor.section, element: cursor.element))': its pages are of another version; a paged read starts again at the head")
        }
        return records
    }

    func stagedSync(of list: String, locking: Bool) throws -> StagedSync? { tables.stagedSyncs[list] }

    func writeStagedSync(_ sync: StagedSync, of list: String) throws {
        tables.stagedSyncs[list] = sync
    }

    func deleteStagedSync(of list: String) throws {
        tables.stagedSyncs[list] = nil
    }

    func listID(named name: String) throws -> Int64? { tables.lists[name]?.row.id }

    func renameList(_ listID: Int64, to name: String) throws {
        guard let old = tables.names[listID], var list = tables.lists.removeValue(forKey: old) else { throw damaged("list row \(listID) is missing") }
        list.row.name = name
        (tables.lists[name], tables.names[listID]) = (list, name)
    }

    func moveSections(of listID: Int64, to target: Int64) throws {
        let rows = tables.sectionsOfList.removeValue(forKey: listID) ?? []
        for row in rows { tables.sections[row]?.listID = target }
        tables.sectionsOfList[target, default: []].formUnion(rows)
    }

    func lastSection(listID: Int64) throws -> (row: Int64, id: String, elements: Int)? {
        tables.sectionsOfList[listID, default: []].compactMap { row in tables.sections[row].map { (row, $0) } }
            .max { ($0.1.position, $0.0) < ($1.1.position, $1.0) }
            .map { ($0.0, $0.1.model.id, tables.elements[$0.0, default: [:]].count) }
    }

    func insertCopiedRecords(_ records: [CopiedRecord], listID: Int64, section: Int64?) throws -> [Int64] {
        var section = section
        var made: [Int64] = []
        for record in records {
            if record.isSection {
                let row = tables.nextSectionID
                tables.nextSectionID += 1
                tables.sections[row] = InMemoryTables.Section(listID: listID, position: record.position, model: record.item, hash: record.hash)
                tables.sectionsOfList[listID, default: []].insert(row)
                section = row
                made.append(row)
            } else {
                guard let section else { throw damaged("a copied element comes before any section") }
                tables.elements[section, default: [:]][record.position] = InMemoryTables.Element(item: record.item, hash: record.hash)
            }
        }
        return made
    }
}
