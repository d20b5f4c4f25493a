extension StoreTransaction {
    /// The snapshot of the list `info` at `version` (default: the head): the head's rows for the
    /// head; otherwise the nearest stored point at or before the version (the newest stored
    /// snapshot, else the base) with the journal replayed from it (`_TimeTravel`). Also returns
    /// how many journal entries it replayed.
    ///
    /// - Throws: `StoreError` `.versionNotFound` (not retained, or past the head), `.damaged` (a
    ///   journal that misses entries, or stages that do not apply).
    /// - Complexity: O(n + e) for n items and the e entries after the nearest stored point.
    package func snapshot(
        of info: ListRow, at version: Int?
    ) throws -> (
        snapshot: ListSnapshot, entriesRead: Int
    ) {
        let list = info.name
        let wanted = version ?? info.headVersion
        if wanted == info.headVersion {
            let sections = try headSections(listID: info.id)
            return (
                ListSnapshot(
                    list: list, version: info.headVersion, digest: info.headDigest, sections: sections), 0
            )
        }
        try info.checkRetained(wanted)
        var point = info.baseVersion
        var state: [ListSection]?
        if wanted > info.baseVersion,
            let stored = try storedSnapshot(listID: info.id, after: info.baseVersion, through: wanted)
        {
            point = stored.version
            state = try _TimeTravel.sections(of: stored.document, list: list, version: point)
        }
        var sections = try state ?? info.baseSections()
        guard wanted > point || point > info.baseVersion else {
            return (
                ListSnapshot(
                    list: list, version: wanted, digest: ListDigest.of(sections), sections: sections), 0
            )
        }
        // The entries after the point, and the point's own when it is a stored snapshot (its
        // digest: the version's, as the journal says, not the hash of what was stored).
        let rows = try journalStages(
            listID: info.id, from: wanted > point ? point + 1 : point, through: wanted)
        let entries = wanted > point ? rows.map { (version: $0.version, stages: $0.stages) } : []
        guard entries.count == wanted - point, entries.last?.version ?? point == wanted,
            let digest = rows.last?.digest
        else {
            throw StoreError(
                .damaged,
                "the journal of list '\(list)' misses entries between versions \(point) and \(wanted)")
        }
        sections = try _TimeTravel.replay(entries, on: sections, list: list)
        return (
            ListSnapshot(list: list, version: wanted, digest: digest, sections: sections), entries.count
        )
    }
}
