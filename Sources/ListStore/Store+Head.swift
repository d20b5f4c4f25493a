import GRDB

extension Store {
    /// The head of `list` as of `db`'s transaction: the cached one when it is still current, otherwise
    /// loaded from the tables. `.empty` for a list with no version.
    func currentHead(_ db: Database, list: String) throws -> StoredHead {
        let row = try _RawStatement(db, "SELECT id, head_version, head_digest FROM list WHERE name = ?")
        row.bind(1, text: list)
        guard try row.step() else {
            row.reset()
            return .empty
        }
        let listID = row.int64(0)
        let version = Int(row.int64(1))
        let digest = ListDigest(hex: row.string(2))
        row.reset()
        if let cached = state.withLock({ $0.heads[list] }), cached.listID == listID, cached.version == version {
            return cached
        }
        let head = try loadHead(db, listID: listID, version: version, digest: digest)
        state.withLock { $0.heads[list] = head }
        return head
    }

    /// Reads the head rows of a list.
    /// - Throws: `.damaged` when a stored hash is not 32 bytes.
    func loadHead(_ db: Database, listID: Int64, version: Int, digest: ListDigest) throws -> StoredHead {
        var head = StoredHead.empty
        head.listID = listID
        head.version = version
        head.digest = digest
        let sections = try _RawStatement(
            db, "SELECT id, position, identifier, content, content_hash FROM section WHERE list_id = ? ORDER BY position")
        sections.bind(1, listID)
        while try sections.step() {
            head.sectionRows.append(sections.int64(0))
            head.sectionPositions.append(sections.int64(1))
            head.sections.append(ListSection(model: ListItem(id: sections.string(2), content: sections.bytes(3)), elements: []))
            guard let hash = sections.hash(4) else { throw damagedRow("section", sections.int64(0)) }
            head.sectionHashes.append(hash)
        }
        let elements = try _RawStatement(
            db, "SELECT position, identifier, content, content_hash FROM element WHERE section_id = ? ORDER BY position")
        for (s, row) in head.sectionRows.enumerated() {
            elements.bind(1, row)
            var items: [ListItem] = []
            while try elements.step() {
                head.elementPositions.append(elements.int64(0))
                items.append(ListItem(id: elements.string(1), content: elements.bytes(2)))
                guard let hash = elements.hash(3) else { throw damagedRow("element in section", row) }
                head.elementHashes.append(hash)
            }
            elements.reset()
            head.sections[s].elements = items
        }
        return head
    }

    private func damagedRow(_ what: String, _ id: Int64) -> StoreError {
        StoreError(.damaged, "the store at \(path) is damaged: \(what) \(id) has no valid content hash")
    }
}
