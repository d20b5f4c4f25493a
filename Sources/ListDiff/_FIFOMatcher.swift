/// Pairs source items with target items of equal identifier, the k-th occurrence in the source with
/// the k-th in the target, with one hash per item.
///
/// Targets are added from last to first; sources then take their partners in order.
///
/// Not API.
@usableFromInline
internal struct _FIFOMatcher<ID: Hashable> {
    /// For each identifier, the first target not yet taken, or -1 once all are taken.
    @usableFromInline var heads: [ID: Int]
    /// For each target, the next target with the same identifier, or -1.
    @usableFromInline var next: [Int]

    /// Creates a matcher for target indices `0..<targetCount`, of which `expected` will be added.
    @inlinable
    init(targetCount: Int, expected: Int) {
        heads = [:]
        heads.reserveCapacity(expected)
        next = [Int](repeating: -1, count: targetCount)
    }

    /// Adds target `index`; call in descending index order.
    @inlinable
    mutating func addTarget(_ id: ID, at index: Int) {
        if let following = heads.updateValue(index, forKey: id) { next[index] = following }
    }

    /// The first untaken target with identifier `id`, now taken, or nil.
    @inlinable
    mutating func take(_ id: ID) -> Int? {
        guard let slot = heads.index(forKey: id) else { return nil }
        let match = heads.values[slot]
        guard match >= 0 else { return nil }
        heads.values[slot] = next[match]
        return match
    }
}
