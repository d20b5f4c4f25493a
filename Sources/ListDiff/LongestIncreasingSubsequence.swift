/// Marks a longest strictly increasing subsequence of `values`.
///
/// Patience sorting with an O(1) fast path when a value extends the longest run found so far, so a
/// sequence that is sorted except for `k` displaced values costs O(n + k log n).
///
/// - Returns: `mask[i]` is true when `values[i]` belongs to the chosen subsequence.
/// - Complexity: O(n log n) in the worst case, O(n + k log n) for `k` displaced values.
@usableFromInline
internal func _longestIncreasingSubsequenceMask(_ values: [Int32]) -> [Bool] {
    let count = values.count
    var mask = [Bool](repeating: false, count: count)
    if count == 0 { return mask }
    var tails: [Int] = []  // tails[k]: index of the smallest last value of an increasing run of length k+1
    var previous = [Int32](repeating: -1, count: count)
    tails.reserveCapacity(min(count, 1024))
    values.withUnsafeBufferPointer { v in
        for i in 0..<count {
            let value = v[i]
            if let last = tails.last {
                if v[last] < value {
                    previous[i] = Int32(truncatingIfNeeded: last)
                    tails.append(i)
                    continue
                }
            } else {
                tails.append(i)
                continue
            }
            // Smallest k with v[tails[k]] >= value.
            var low = 0
            var high = tails.count - 1
            while low < high {
                let mid = (low + high) >> 1
                if v[tails[mid]] < value { low = mid + 1 } else { high = mid }
            }
            previous[i] = low > 0 ? Int32(truncatingIfNeeded: tails[low - 1]) : -1
            tails[low] = i
        }
    }
    var i = tails.last!
    while i >= 0 {
        mask[i] = true
        i = Int(previous[i])
    }
    return mask
}
