import ListDiff

/// The digest records of a section's elements: for each element in order, the `E` record the
/// list's digest hashes (`ListDigest`: tag, id length, id, content hash). An engine that keeps them
/// beside each section's row (`StoreTransaction.keepsElementRecords`) lets a replayed journal entry
/// read only the sections its stages touch: the digest of the new version hashes the other sections'
/// kept records as they are, without reading their elements (ListStoreCore's article "Lists of Any
/// Size").
///
/// Kept records are a cache of the element rows: a commit that changes a section's elements forgets
/// them or keeps new ones in the same transaction, a section whose records are not kept has its
/// elements read instead (and its records kept then), and `verify` compares each kept value with
/// the rows.
///
/// Not API: package-visible for the engines.
package enum _ElementRecords {
    /// The most bytes of records kept for one section (about 330,000 elements with short ids); a
    /// larger section's elements are read whenever a digest needs them.
    package static let maxKeptBytes = 16 << 20

    /// The records of `elements`, in order.
    /// - Complexity: O(total size of their ids).
    package static func of(_ elements: some Collection<HeadItem>) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(elements.count * _DigestBuilder.recordLength(idCount: 8))
        for element in elements { append(id: element.id, hash: element.hash, to: &bytes) }
        return bytes
    }

    /// Appends the record of the element `id` with content hash `hash` to `bytes`.
    package static func append(id: String, hash: ContentHash, to bytes: inout [UInt8]) {
        _DigestBuilder.withUTF8(id) { id in
            let start = bytes.count
            bytes.append(contentsOf: repeatElement(0, count: _DigestBuilder.recordLength(idCount: id.count)))
            bytes.withUnsafeMutableBytes { _DigestBuilder.write(tag: 0x45, id: id, hash: hash, at: $0.baseAddress! + start) }
        }
    }

    /// The number of element records in `bytes`; `nil` when they are not a sequence of element
    /// records.
    /// - Complexity: O(number of records).
    package static func count(_ bytes: [UInt8]) -> Int? {
        bytes.withUnsafeBytes { raw in
            var (offset, count) = (0, 0)
            while offset < raw.count {
                guard raw.count - offset >= 9, raw[offset] == 0x45 else { return nil }
                let idCount = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset + 1, as: UInt64.self))
                guard idCount <= UInt64(raw.count - offset - 9), raw.count - offset - 9 - Int(idCount) >= 32 else { return nil }
                offset += _DigestBuilder.recordLength(idCount: Int(idCount))
                count += 1
            }
            return count
        }
    }
}

extension _ElementRecords {
    /// The sections (indices) whose elements `stages` touch, when they insert, delete and move no
    /// section, so that a section's index is the same in every stage; `nil` otherwise (a replay then
    /// reads the head whole).
    /// - Complexity: O(size of the changeset).
    package static func sections(touchedBy stages: ListChangeset) -> Set<Int>? {
        var touched = Set<Int>()
        for stage in stages {
            guard stage.sectionDeleted.isEmpty, stage.sectionInserted.isEmpty, stage.sectionMoved.isEmpty else { return nil }
            for path in stage.elementDeleted { touched.insert(path.section) }
            for change in stage.elementInserted { touched.insert(change.path.section) }
            for change in stage.elementUpdated { touched.insert(change.path.section) }
            for move in stage.elementMoved { touched.formUnion([move.from.section, move.to.section]) }
        }
        return touched
    }
}
