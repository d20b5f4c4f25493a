import ListDiff

// A replayed journal entry on an engine that keeps element records (`_ElementRecords`): the digest of
// a new version whose head was read in part, and the records a commit keeps and forgets.

extension StoreTransaction {
    /// The digest and element count of `target`, the new head of a commit onto a head read in part
    /// (`unloaded`: the sections, by index, whose elements were not read; the same indices in the
    /// target, since such a commit moves no section). The loaded sections' records are made from the
    /// target and kept; the others' are read as kept (unless `trustingKept` is false, or what is kept
    /// is not element records), or else made from their rows and then kept.
    ///
    /// - Complexity: O(bytes of records of the unloaded sections + size of the loaded ones), holding
    ///   one section's records at a time.
    package func digestKeepingRecords(
        of target: [HeadSection], sectionRows: [Int64], unloaded: Set<Int>, trustingKept: Bool = true
    ) throws -> (digest: ListDigest, elementCount: Int) {
        var builder = _DigestBuilder()
        var elementCount = 0
        for (t, section) in target.enumerated() {
            builder.add(tag: 0x53, id: section.model.id, hash: section.model.hash)
            let row = sectionRows[t]
            var records: [UInt8]
            if !unloaded.contains(t) {
                records = _ElementRecords.of(section.elements)
                elementCount += section.elements.count
            } else if trustingKept, let kept = try keptElementRecords(section: row), let count = _ElementRecords.count(kept) {
                records = kept
                elementCount += count
                records.withUnsafeBytes { builder.add(records: $0) }
                continue
            } else {
                let items = try elementItems(section: row)
                records = _ElementRecords.of(items)
                elementCount += items.count
            }
            if records.count <= _ElementRecords.maxKeptBytes {
                try keepElementRecords(records, section: row)
            } else {
                try forgetElementRecords(sections: [row])
            }
            records.withUnsafeBytes { builder.add(records: $0) }
        }
        return (builder.finish(), elementCount)
    }
}
