/// The ordering scheme of rows: each row has an integer position, with gaps, so that an insertion or
/// a move writes the rows that move and not the rows after them.
///
/// New rows get positions `spacing` apart; a row placed between two neighbours takes a position in
/// between. When a gap is too narrow, the neighbouring rows are spread again over a window that
/// doubles until it has room, the classic order-maintenance scheme: a handful of extra writes now and
/// then, never a rewrite of the list.
package enum _Positions {
    /// The distance between new rows.
    package static let spacing: Int64 = 1 << 32
    /// Positions stay within ±limit.
    package static let limit: Int64 = 1 << 62

    /// Positions for a sequence of rows.
    ///
    /// - Parameters:
    ///   - anchors: for each row in its new order, its current position when it may keep it, or `nil`
    ///     when it needs one (a new row, or one that moves). Anchors must increase.
    ///   - occupied: sorted positions held by rows that leave or move, which a new position must avoid
    ///     (the rows are written in any order, and the table's key is the position).
    /// - Returns: every row's position, and which anchors had to move to make room.
    /// - Complexity: O(n + r log m) for r rows that need positions and m occupied positions, plus the
    ///   windows spread again.
    package static func assign(_ anchors: [Int64?], occupied: [Int64]) -> (positions: [Int64], displaced: [Bool]) {
        let n = anchors.count
        var keep = [Bool](repeating: false, count: n)
        var last = Int64.min
        for i in 0..<n {
            if let position = anchors[i], position > last, position > -limit, position < limit {
                keep[i] = true
                last = position
            }
        }
        var displaced = [Bool](repeating: false, count: n)
        for i in 0..<n where anchors[i] != nil && !keep[i] { displaced[i] = true }
        var extraOccupied: [Int64] = []
        var positions = [Int64](repeating: 0, count: n)

        func isOccupied(_ position: Int64) -> Bool {
            if binarySearch(occupied, position) { return true }
            return extraOccupied.contains(position)
        }
        func occupiedCount(above lower: Int64, below upper: Int64) -> Int {
            let from = lowerBound(occupied, lower + 1)
            let to = lowerBound(occupied, upper)
            return max(0, to - from) + extraOccupied.count { $0 > lower && $0 < upper }
        }
        /// Fills `start..<end` between the kept neighbours, if they leave room.
        func fill(_ start: Int, _ end: Int) -> Bool {
            let count = Int64(end - start)
            let lower = start > 0 ? anchors[start - 1]! : nil
            let upper = end < n ? anchors[end]! : nil
            var candidates: (first: Int64, step: Int64)
            switch (lower, upper) {
            case (nil, nil):
                guard count < limit / spacing else { return false }
                candidates = (0, spacing)
            case (nil, let upper?):
                guard upper - count * spacing > -limit, count < limit / spacing else { return false }
                candidates = (upper - count * spacing, spacing)
            case (let lower?, nil):
                guard lower + count * spacing < limit, count < limit / spacing else { return false }
                candidates = (lower + spacing, spacing)
            case (let lower?, let upper?):
                let step = (upper - lower) / (count + 1)
                guard step >= Int64(occupiedCount(above: lower, below: upper)) + 2 else { return false }
                candidates = (lower + step, step)
            }
            var previous = lower ?? Int64.min
            for k in 0..<Int(count) {
                var position = max(candidates.first + Int64(k) * candidates.step, previous + 1)
                while isOccupied(position) { position += 1 }
                positions[start + k] = position
                previous = position
            }
            return true
        }

        var i = 0
        while i < n {
            if keep[i] {
                positions[i] = anchors[i]!
                i += 1
                continue
            }
            var start = i
            var end = i
            while end < n && !keep[end] { end += 1 }
            var grow = 1
            var left = true
            while !fill(start, end) {
                // Spread a wider window: give up `grow` kept rows on one side, alternating sides.
                func release(_ index: Int) {
                    keep[index] = false
                    displaced[index] = true
                    extraOccupied.append(anchors[index]!)
                }
                if (left && start > 0) || end == n {
                    var released = 0
                    while start > 0 && released < grow {
                        start -= 1
                        if keep[start] { release(start); released += 1 }
                    }
                    while start > 0 && !keep[start - 1] { start -= 1 }
                } else {
                    var released = 0
                    while end < n && released < grow {
                        if keep[end] { release(end); released += 1 }
                        end += 1
                    }
                    while end < n && !keep[end] { end += 1 }
                }
                if !left { grow *= 2 }
                left.toggle()
            }
            i = end
        }
        return (positions, displaced)
    }

    private static func lowerBound(_ sorted: [Int64], _ value: Int64) -> Int {
        var low = 0
        var high = sorted.count
        while low < high {
            let mid = (low + high) >> 1
            if sorted[mid] < value { low = mid + 1 } else { high = mid }
        }
        return low
    }

    private static func binarySearch(_ sorted: [Int64], _ value: Int64) -> Bool {
        let index = lowerBound(sorted, value)
        return index < sorted.count && sorted[index] == value
    }
}
