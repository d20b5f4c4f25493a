import Dispatch

/// Arrays filled by two threads, each initializing one half.
package enum _TwoThreads {
    /// An array of `count` elements: `fill(range, base)` must initialize every element of `range`
    /// (offsets from `base`). From `threshold` elements on, the two halves are filled at once on two
    /// threads; below it, one call fills everything.
    /// - Complexity: that of `fill`, split in two.
    package static func array<Element>(
        count: Int, threshold: Int, fill: @Sendable (Range<Int>, UnsafeMutablePointer<Element>) -> Void
    ) -> [Element] {
        [Element](unsafeUninitializedCapacity: count) { buffer, initialized in
            let slots = _Slots(base: buffer.baseAddress)
            let workers = count >= threshold ? 2 : 1
            DispatchQueue.concurrentPerform(iterations: workers) { worker in
                let from = count * worker / workers
                let to = count * (worker + 1) / workers
                guard from < to, let base = slots.base else { return }
                fill(from..<to, base)
            }
            initialized = count
        }
    }
}

/// Where the threads write.
///
/// `@unchecked Sendable`: each thread initializes a disjoint range of the buffer, and the buffer is
/// read only after `concurrentPerform` has returned.
private struct _Slots<Element>: @unchecked Sendable {
    package let base: UnsafeMutablePointer<Element>?
}
