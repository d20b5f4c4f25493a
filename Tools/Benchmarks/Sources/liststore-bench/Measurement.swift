/// Timing with `ContinuousClock`: one warm-up, then the median of several runs.
enum Measurement {
    /// The outcome of timing a body several times.
    struct Timing {
        /// Every timed run, in milliseconds, in the order they ran (the warm-up is not included).
        var samples: [Double]
        /// Whether an untimed warm-up ran first.
        var warmedUp: Bool

        var medianMs: Double {
            let sorted = samples.sorted()
            let mid = sorted.count / 2
            return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
        }

        /// The runs for people: "1+5" (warm-up + timed) or "3".
        var runsText: String { warmedUp ? "1+\(samples.count)" : "\(samples.count)" }
    }

    static func milliseconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) * 1_000 + Double(attoseconds) / 1e15
    }

    /// Runs `body` once to warm up, then `runs` timed times; returns the timings.
    ///
    /// `body` returns a checksum of its result (for example an operation count); every run must return
    /// the same one, which also keeps the optimizer from dropping the work.
    static func repeated(runs: Int, warmUp: Bool = true, _ body: () -> Int) -> (Timing, checksum: Int) {
        precondition(runs > 0)
        let clock = ContinuousClock()
        var checksum: Int? = warmUp ? body() : nil
        var samples = [Double]()
        for _ in 0..<runs {
            var result = 0
            let elapsed = clock.measure { result = body() }
            if let expected = checksum {
                precondition(result == expected, "a run produced a different result (\(result) ≠ \(expected))")
            }
            checksum = result
            samples.append(milliseconds(elapsed))
        }
        return (Timing(samples: samples, warmedUp: warmUp), checksum ?? 0)
    }

    /// Times a slow body adaptively: one first run; if it took longer than `slowMs`, that run is the
    /// measurement (no warm-up, a single sample); otherwise it counts as the warm-up and `runs` more
    /// timed runs follow.
    static func adaptive(runs: Int, slowMs: Double, progress: (Double) -> Void = { _ in }, _ body: () -> Int)
        -> (Timing, checksum: Int)
    {
        let clock = ContinuousClock()
        var checksum = 0
        let first = milliseconds(clock.measure { checksum = body() })
        progress(first)
        if first > slowMs {
            return (Timing(samples: [first], warmedUp: false), checksum)
        }
        let (timing, again) = repeated(runs: runs, warmUp: false, body)
        precondition(again == checksum, "a run produced a different result (\(again) ≠ \(checksum))")
        return (Timing(samples: timing.samples, warmedUp: true), checksum)
    }

    /// Times `body` on fresh state every run, for bodies that change what they work on (a commit into a
    /// new store file): each run calls `prepare` untimed, times `body` on what it prepared, then calls
    /// `finish` untimed with the state and what `body` produced (to read a peak, say). The state and
    /// the output are released after `finish`, so that freeing them is not timed either.
    ///
    /// With `warmUp`, the first run is an untimed warm-up, unless it takes longer than `slowMs`: then it
    /// is the measurement (a single sample). `body` returns a checksum with its output, as in `repeated`.
    /// `progress` hears of every run ("warm-up", "run 1", …) with its time.
    static func prepared<State, Output>(
        runs: Int, warmUp: Bool, slowMs: Double = .infinity, progress: (_ label: String, _ ms: Double) -> Void = { _, _ in },
        prepare: () throws -> State, _ body: (State) throws -> (checksum: Int, output: Output),
        finish: (State, Output) throws -> Void
    ) throws -> (Timing, checksum: Int) {
        precondition(runs > 0)
        let clock = ContinuousClock()
        var checksum: Int?
        var samples = [Double]()
        for run in 0..<(warmUp ? runs + 1 : runs) {
            let state = try prepare()
            var result: (checksum: Int, output: Output)?
            let elapsed = milliseconds(try clock.measure { result = try body(state) })
            guard let (sum, output) = result else { preconditionFailure("the body ran without a result") }
            try finish(state, output)
            if let expected = checksum {
                precondition(sum == expected, "a run produced a different result (\(sum) ≠ \(expected))")
            }
            checksum = sum
            progress(warmUp && run == 0 ? "warm-up" : "run \(warmUp ? run : run + 1)", elapsed)
            if warmUp && run == 0 {
                if elapsed > slowMs { return (Timing(samples: [elapsed], warmedUp: false), sum) }
                continue
            }
            samples.append(elapsed)
        }
        return (Timing(samples: samples, warmedUp: warmUp), checksum ?? 0)
    }
}
