/// Pairs source and target items by precomputed identifier hashes, first-in-first-out per hash, with
/// a radix-partitioned hash join: items are scattered by the top bits of their hash into partitions
/// small enough to stay in cache, and each partition is joined with a small open-addressing table.
///
/// Equal hashes do not prove equal identifiers: the caller checks every pair and falls back to an
/// exact matcher if any pair differs (a 64-bit collision). When all pairs check, the result is the
/// exact first-in-first-out pairing: every source took the oldest remaining target of its hash, and
/// that target had its identifier.
///
/// Not API.
///
/// - Complexity: O(n) time; memory traffic is sequential except inside cache-sized partitions.
@usableFromInline
internal struct _HashPartitionMatcher {
    /// Flat hashes of all source items (entries outside `sourceRanges` are ignored).
    @usableFromInline var sourceHashes: [Int]
    /// Flat hashes of all target items (entries outside `targetRanges` are ignored).
    @usableFromInline var targetHashes: [Int]
    /// The flat ranges of source items that take part (surviving sections).
    @usableFromInline var sourceRanges: [Range<Int>] = []
    /// The flat ranges of target items that take part (surviving sections).
    @usableFromInline var targetRanges: [Range<Int>] = []

    @inlinable
    init(sourceCount: Int, targetCount: Int) {
        sourceHashes = [Int](repeating: 0, count: sourceCount)
        targetHashes = [Int](repeating: 0, count: targetCount)
    }

    /// A matcher over hashes computed by the caller.
    @inlinable
    init(sourceHashes: [Int], targetHashes: [Int]) {
        self.sourceHashes = sourceHashes
        self.targetHashes = targetHashes
    }

    /// Pairs items; `targetOf[i]` is the flat target paired with source `i` (or -1), `sourceOf[j]`
    /// the converse.
    @usableFromInline
    func pair(targetOf: inout [Int32], sourceOf: inout [Int32]) {
        let sourceCount = sourceRanges.reduce(0) { $0 + $1.count }
        let targetCount = targetRanges.reduce(0) { $0 + $1.count }
        guard sourceCount > 0 && targetCount > 0 else { return }

        // About 2,048 targets per partition (a table that stays in cache), at most 2^16 partitions.
        var bits = 0
        while bits < 16 && (targetCount >> (bits + 11)) > 0 { bits += 1 }
        let partitions = 1 << bits
        @inline(__always) func partition(_ hash: Int) -> Int {
            bits == 0 ? 0 : Int(truncatingIfNeeded: UInt64(UInt(bitPattern: hash)) >> UInt64(64 - bits))
        }

        // Stable scatter of (hash, flat index) into partitions, so each partition reads sequentially.
        func scatter(_ hashes: [Int], _ ranges: [Range<Int>], _ count: Int) -> (starts: [Int], hashes: [Int], items: [Int32]) {
            var starts = [Int](repeating: 0, count: partitions + 1)
            hashes.withUnsafeBufferPointer { h in
                for range in ranges { for i in range { starts[partition(h[i]) + 1] += 1 } }
            }
            for p in 0..<partitions { starts[p + 1] += starts[p] }
            var cursor = starts
            var outHashes = [Int](unsafeUninitializedCapacity: count) { _, initialized in initialized = count }
            var items = [Int32](unsafeUninitializedCapacity: count) { _, initialized in initialized = count }
            hashes.withUnsafeBufferPointer { h in
                outHashes.withUnsafeMutableBufferPointer { outHashes in
                    items.withUnsafeMutableBufferPointer { out in
                        cursor.withUnsafeMutableBufferPointer { cursor in
                            for range in ranges {
                                for i in range {
                                    let hash = h[i]
                                    let p = partition(hash)
                                    let at = cursor[p]
                                    outHashes[at] = hash
                                    out[at] = Int32(truncatingIfNeeded: i)
                                    cursor[p] = at + 1
                                }
                            }
                        }
                    }
                }
            }
            return (starts, outHashes, items)
        }
        let targets = scatter(targetHashes, targetRanges, targetCount)
        let sources = scatter(sourceHashes, sourceRanges, sourceCount)

        var largest = 0
        for p in 0..<partitions { largest = max(largest, targets.starts[p + 1] - targets.starts[p]) }
        var capacity = 8
        while capacity < largest * 2 { capacity <<= 1 }
        var slotHash = [Int](repeating: 0, count: capacity)
        var slotHead = [Int](repeating: -1, count: capacity)
        var next = [Int](repeating: -1, count: largest)
        // The partner of each scattered source, in scattered order.
        var partner = [Int32](repeating: -1, count: sourceCount)

        targets.hashes.withUnsafeBufferPointer { th in
        sources.hashes.withUnsafeBufferPointer { sh in
        targets.items.withUnsafeBufferPointer { titems in
        partner.withUnsafeMutableBufferPointer { partner in
        slotHash.withUnsafeMutableBufferPointer { slotHash in
        slotHead.withUnsafeMutableBufferPointer { slotHead in
        next.withUnsafeMutableBufferPointer { next in
            for p in 0..<partitions {
                let tStart = targets.starts[p]
                let tCount = targets.starts[p + 1] - tStart
                let sStart = sources.starts[p]
                let sEnd = sources.starts[p + 1]
                guard tCount > 0 && sEnd > sStart else { continue }
                var mask = 7
                while mask + 1 < tCount * 2 { mask = (mask << 1) | 1 }
                for k in 0...mask { slotHead[k] = -1 }
                // Targets from last to first, so each chain starts at the oldest.
                var k = tCount - 1
                while k >= 0 {
                    let hash = th[tStart + k]
                    var slot = hash & mask
                    while slotHead[slot] != -1 && slotHash[slot] != hash { slot = (slot + 1) & mask }
                    next[k] = slotHead[slot]
                    slotHash[slot] = hash
                    slotHead[slot] = k
                    k -= 1
                }
                for s in sStart..<sEnd {
                    let hash = sh[s]
                    var slot = hash & mask
                    while slotHead[slot] != -1 && slotHash[slot] != hash { slot = (slot + 1) & mask }
                    let head = slotHead[slot]
                    guard head >= 0 else { continue }
                    // An exhausted chain keeps its slot and hash, marked -2 (empty slots are -1).
                    slotHead[slot] = next[head] >= 0 ? next[head] : -2
                    partner[s] = titems[tStart + head]
                }
            }
        }}}}}}}

        // Back to flat order.
        sources.items.withUnsafeBufferPointer { sitems in
            for s in 0..<sourceCount where partner[s] >= 0 { targetOf[Int(sitems[s])] = partner[s] }
        }
        for range in sourceRanges {
            for i in range where targetOf[i] >= 0 { sourceOf[Int(targetOf[i])] = Int32(truncatingIfNeeded: i) }
        }
    }
}
