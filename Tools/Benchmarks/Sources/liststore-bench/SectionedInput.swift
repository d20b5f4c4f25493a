/// The sectioned input pair of scenario iii (Docs/Benchmarks.md): 100 sections × 1,000 elements; 5 sections
/// deleted, 5 inserted, 5 moved; 1,000 elements moved across sections; 1,000 updated.
struct SectionedInput {
    var sectionCount = 100
    var sectionSize = 1_000

    func generate(seed: UInt64) -> (source: [Section], target: [Section]) {
        var rng = SplitMix64(seed: seed)
        let size = sectionSize
        let source: [Section] = (0..<sectionCount).map { j in
            Section(model: Item("s\(j)", j), elements: (0..<size).map { i in Item("e\(j * size + i)", j * size + i) })
        }

        // delSec = partialFY(100, 5); surv = the other sections ascending.
        let delSec = Set(rng.partialFY(sectionCount, 5))
        let surv = (0..<sectionCount).filter { !delSec.contains($0) }
        var survPos = [Int](repeating: -1, count: sectionCount)
        for (p, j) in surv.enumerated() { survPos[j] = p }

        // flat = all g in surv sections in order; pick = partialFY(95,000, 2,000) mapped through flat.
        var flat = [Int]()
        flat.reserveCapacity(surv.count * size)
        for j in surv { for i in 0..<size { flat.append(j * size + i) } }
        let pick = rng.partialFY(flat.count, 2_000).map { flat[$0] }
        let movers = Array(pick[0..<1_000])
        let updated = pick[1_000..<2_000]
        var contentOf = [Int: Int]()
        for g in updated { contentOf[g] = g + 1 }
        let moverSet = Set(movers)

        // Each surviving section keeps its elements minus movers (updated ones get content + 1).
        var elements = [[Item]](repeating: [], count: sectionCount)
        for j in surv {
            var list = [Item]()
            list.reserveCapacity(size)
            for i in 0..<size {
                let g = j * size + i
                if moverSet.contains(g) { continue }
                list.append(Item("e\(g)", contentOf[g] ?? g))
            }
            elements[j] = list
        }

        // For g in movers (pick order): insert into another surviving section at bounded(count + 1).
        for g in movers {
            let own = g / size
            let ownPos = survPos[own]
            let r = rng.bounded(surv.count - 1)
            let dest = surv[r < ownPos ? r : r + 1]
            let at = rng.bounded(elements[dest].count + 1)
            elements[dest].insert(Item("e\(g)", g), at: at)
        }

        // order = surv; mv = partialFY(95, 5) mapped through order; remove; reinsert at bounded(count + 1).
        var order = surv
        let mv = rng.partialFY(order.count, 5).map { order[$0] }
        let mvSet = Set(mv)
        order.removeAll { mvSet.contains($0) }
        for s in mv { order.insert(s, at: rng.bounded(order.count + 1)) }

        var target: [Section] = order.map { j in Section(model: Item("s\(j)", j), elements: elements[j]) }
        // 5 new sections ("t<k>", −1−k) holding ("n<k*1000+i>", −1−(k*1000+i)).
        for k in 0..<5 {
            let section = Section(
                model: Item("t\(k)", -1 - k),
                elements: (0..<size).map { i in Item("n\(k * size + i)", -1 - (k * size + i)) })
            target.insert(section, at: rng.bounded(target.count + 1))
        }
        return (source, target)
    }
}
