/// The SplitMix64 generator of the benchmark inputs (Docs/Benchmarks.md, "How the inputs are made"), with the
/// helpers that the input constructions use.
///
/// Everything is specified exactly (arithmetic mod 2^64), so another implementation in any language
/// reproduces the same inputs.
struct SplitMix64 {
    /// The base seed; scenario k is seeded `baseSeed + k`.
    static let baseSeed: UInt64 = 0xD1FF_5EED

    private(set) var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// `next() % n` (the plain, slightly biased reduction: it is part of the specification).
    mutating func bounded(_ n: Int) -> Int {
        precondition(n > 0, "bounded(0)")
        return Int(next() % UInt64(n))
    }

    /// The first `k` values of a partial Fisher–Yates shuffle of `0..<n`.
    mutating func partialFY(_ n: Int, _ k: Int) -> [Int] {
        precondition(k <= n)
        var a = Array(0..<n)
        for i in 0..<k {
            let j = i + bounded(n - i)
            a.swapAt(i, j)
        }
        return Array(a[0..<k])
    }

    /// A full Fisher–Yates shuffle, from the last index down to 1.
    mutating func FY<T>(_ array: inout [T]) {
        guard array.count > 1 else { return }
        for i in stride(from: array.count - 1, through: 1, by: -1) {
            let j = bounded(i + 1)
            array.swapAt(i, j)
        }
    }
}
