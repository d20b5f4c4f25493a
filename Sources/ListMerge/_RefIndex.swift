import ListDiff
import ListJSON

/// The index of `_MergeState` from item reference to node: open addressing with linear probing over
/// two flat arrays, a 32-bit tag of each reference's hash and its node, the references themselves
/// read back from the nodes (`key`) only to confirm a matching tag. Indexing 100,000 items so
/// touches about one megabyte at random, where a `[ItemRef: Int32]` touches four and hashes each
/// identifier with SipHash.
///
/// Hashes are the diff's wyhash of the identifier's UTF-8 bytes (`ExactString`'s, under
/// `PairingHashSeed.process`, drawn at random once per process), so identifiers that differ in
/// their bytes (canonically equivalent ones included) hash apart and no one can choose identifiers
/// that collide in advance; a collision costs a comparison, never a wrong answer (references are
/// compared byte for byte, as `ItemRef`'s `==` does).
///
/// ```swift
/// var index = _RefIndex(expected: items.count)
/// let first = index.insert(node, for: ref) { keyOf($0) }   // nil, or the node `ref` already had
/// let node = index.node(for: ref) { keyOf($0) }
/// index.remove(ref) { keyOf($0) }
/// ```
///
/// Not API.
///
/// - Complexity: O(1) expected per operation (growing doubles the table in O(n)).
@usableFromInline
struct _RefIndex {
    /// The tag of the reference in each slot (never 0), or 0 for a slot never used.
    @usableFromInline var tags: [UInt32]
    /// The node in each slot, or `deleted` (a tag is kept, so probes go on past it).
    @usableFromInline var nodes: [Int32]
    /// Live references.
    @usableFromInline var count = 0
    /// Slots with a tag: live references and deleted ones.
    @usableFromInline var used = 0

    @usableFromInline static var deleted: Int32 { -1 }

    /// An index with room for `expected` references before it grows.
    @inlinable init(expected: Int) {
        var capacity = 16
        while capacity * 3 < expected * 4 { capacity <<= 1 }
        tags = [UInt32](repeating: 0, count: capacity)
        nodes = [Int32](repeating: Self.deleted, count: capacity)
    }

    /// The hash of a reference.
    @inlinable static func hash(_ ref: ItemRef) -> UInt64 {
        let hash = ExactString(ref.id).pairingHash(seed: .process)
        return ref.ordinal == 0 ? hash : (hash ^ UInt64(truncatingIfNeeded: ref.ordinal)) &* 0x9E37_79B9_7F4A_7C15
    }

    /// The tag of a hash (its high bits, never 0) and its first slot (its low bits).
    @inlinable func place(_ hash: UInt64) -> (tag: UInt32, slot: Int) {
        (UInt32(truncatingIfNeeded: hash >> 32) | 1, Int(truncatingIfNeeded: hash) & (tags.count - 1))
    }

    /// The slot holding `ref`, if any.
    @inlinable func slot(of ref: ItemRef, hash: UInt64, key: (Int32) -> ItemRef) -> Int? {
        let mask = tags.count - 1
        var (tag, slot) = place(hash)
        while true {
            let t = tags[slot]
            if t == 0 { return nil }
            if t == tag, nodes[slot] != Self.deleted, key(nodes[slot]) == ref { return slot }
            slot = (slot + 1) & mask
        }
    }

    /// The node indexed under `ref`, if any.
    @inlinable func node(for ref: ItemRef, key: (Int32) -> ItemRef) -> Int32? {
        slot(of: ref, hash: Self.hash(ref), key: key).map { nodes[$0] }
    }

    /// Indexes `node` under `ref` unless `ref` already has a node; returns that node then.
    @inlinable mutating func insert(_ node: Int32, for ref: ItemRef, key: (Int32) -> ItemRef) -> Int32? {
        let hash = Self.hash(ref)
        if let existing = slot(of: ref, hash: hash, key: key) { return nodes[existing] }
        if (used + 1) * 4 > tags.count * 3 { rebuild(key: key) }
        let mask = tags.count - 1
        var (tag, slot) = place(hash)
        while tags[slot] != 0 { slot = (slot + 1) & mask }
        tags[slot] = tag
        nodes[slot] = node
        count += 1
        used += 1
        return nil
    }

    /// Removes `ref` from the index.
    @inlinable mutating func remove(_ ref: ItemRef, key: (Int32) -> ItemRef) {
        guard let slot = slot(of: ref, hash: Self.hash(ref), key: key) else { return }
        nodes[slot] = Self.deleted
        count -= 1
    }

    /// The live references moved to a table twice their number (at least the current size), with
    /// no deleted slots.
    @inlinable mutating func rebuild(key: (Int32) -> ItemRef) {
        var grown = _RefIndex(expected: Swift.max(count * 2, tags.count * 3 / 4))
        let mask = grown.tags.count - 1
        for (t, node) in zip(tags, nodes) where t != 0 && node != Self.deleted {
            var (tag, slot) = grown.place(Self.hash(key(node)))
            while grown.tags[slot] != 0 { slot = (slot + 1) & mask }
            grown.tags[slot] = tag
            grown.nodes[slot] = node
        }
        grown.count = count
        grown.used = count
        self = grown
    }
}
