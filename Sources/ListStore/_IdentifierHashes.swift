import Dispatch
import ListDiff

/// The identifier hashes the diff pairs elements by, computed on two threads for large snapshots.
enum _IdentifierHashes {
    /// `differenceIdentifier.hashValue` of every element of `sections`, flat (section after section).
    /// - Complexity: O(n) for n elements, split between two threads from 4,096 elements on.
    static func of(_ sections: [ListSection]) -> [Int] {
        let starts = _flatStarts(sections)
        let total = starts[sections.count]
        return [Int](unsafeUninitializedCapacity: total) { buffer, count in
            let slots = _HashSlots(base: buffer.baseAddress)
            let workers = total >= 4096 ? 2 : 1
            DispatchQueue.concurrentPerform(iterations: workers) { worker in
                let from = total * worker / workers
                let to = total * (worker + 1) / workers
                guard from < to, let base = slots.base else { return }
                var s = 0
                while starts[s + 1] <= from { s += 1 }
                var j = from
                while j < to {
                    let elements = sections[s].elements
                    let start = starts[s]
                    let end = min(starts[s + 1], to)
                    while j < end {
                        (base + j).initialize(to: elements[j - start].differenceIdentifier.hashValue)
                        j += 1
                    }
                    s += 1
                }
            }
            count = total
        }
    }
}

/// Where the hashing threads write their results.
///
/// `@unchecked Sendable`: each thread initializes a disjoint range of the buffer, and the buffer is
/// read only after `concurrentPerform` has returned.
private struct _HashSlots: @unchecked Sendable {
    let base: UnsafeMutablePointer<Int>?
}
