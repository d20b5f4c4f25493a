/// A linear input pair built by the (N, D, I, S, U) construction of Docs/Benchmarks.md.
struct LinearInput {
    /// Source size.
    var n: Int
    /// Deleted elements.
    var d: Int
    /// Inserted elements.
    var i: Int
    /// Shuffled (moved) positions among the kept elements.
    var s: Int
    /// Updated (content + 1) kept elements.
    var u: Int

    /// Builds the pair with a generator seeded for the scenario.
    func generate(seed: UInt64) -> (source: [Item], target: [Item]) {
        var rng = SplitMix64(seed: seed)
        var source = [Item]()
        source.reserveCapacity(n)
        for k in 0..<n { source.append(Item("e\(k)", k)) }

        // deleted = partialFY(N, D); kept = source without them, in order.
        let deleted = rng.partialFY(n, d)
        var isDeleted = [Bool](repeating: false, count: n)
        for k in deleted { isDeleted[k] = true }
        var kept = [Item]()
        kept.reserveCapacity(n - d)
        for k in 0..<n where !isDeleted[k] { kept.append(source[k]) }
        let m = kept.count

        // pos = sorted(partialFY(M, S)); vals = kept[pos]; FY(vals); kept[pos[t]] = vals[t].
        let pos = rng.partialFY(m, s).sorted()
        var vals = pos.map { kept[$0] }
        rng.FY(&vals)
        for t in pos.indices { kept[pos[t]] = vals[t] }

        // For p in partialFY(M, U): kept[p].content += 1.
        for p in rng.partialFY(m, u) { kept[p].content += 1 }

        // gap[k] = bounded(M + 1); new item k = ("n<k>", −1−k).
        var gap = [Int]()
        gap.reserveCapacity(i)
        for _ in 0..<i { gap.append(rng.bounded(m + 1)) }
        var newAt = [[Int]](repeating: [], count: m + 1)
        for k in 0..<i { newAt[gap[k]].append(k) }  // ascending k within a gap

        var target = [Item]()
        target.reserveCapacity(m + i)
        for p in 0...m {
            for k in newAt[p] { target.append(Item("n\(k)", -1 - k)) }
            if p < m { target.append(kept[p]) }
        }
        return (source, target)
    }
}
