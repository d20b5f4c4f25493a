import ListDiff

/// The identifier hashes the diff pairs elements by, computed on two threads for large snapshots.
package enum _IdentifierHashes {
    /// The pairing hash of the identifier of every element of `sections`, flat (section after
    /// section): `HeadItem.pairingHash(of:seed: .process)`, as the diff computes it.
    /// - Complexity: O(n) for n elements, split between two threads from 4,096 elements on.
    package static func of(_ sections: [HeadSection]) -> [Int] {
        let starts = DiffPairing.flatStarts(sections)
        let total = starts[sections.count]
        let seed = PairingHashSeed.process
        return _TwoThreads.array(count: total, threshold: 4096) { (range, base: UnsafeMutablePointer<Int>) in
            var s = 0
            while starts[s + 1] <= range.lowerBound { s += 1 }
            var j = range.lowerBound
            while j < range.upperBound {
                let elements = sections[s].elements
                let start = starts[s]
                let end = min(starts[s + 1], range.upperBound)
                while j < end {
                    (base + j).initialize(to: HeadItem.pairingHash(of: elements[j - start].differenceIdentifier, seed: seed))
                    j += 1
                }
                s += 1
            }
        }
    }
}
