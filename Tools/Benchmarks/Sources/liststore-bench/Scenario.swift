/// A benchmark scenario: a name, what it measures, and how to run it.
///
/// Scenarios live in `Scenario.registry`, in the order they run when no scenario is named; a new
/// family of scenarios (e.g. store scenarios) adds its entries there.
struct Scenario: Sendable {
    /// The name used on the command line and in reports, e.g. "diff-i".
    let name: String
    /// One line for `--help`.
    let summary: String
    /// What the scenario is expected to reach.
    let target: Target
    /// Runs the scenario: generates its input, measures ours and the baseline.
    let run: @Sendable () throws(ScenarioFailure) -> ScenarioResult

    /// Every scenario, in the default order.
    static let registry: [Scenario] = DiffScenario.all.map(\.scenario)
        + [CommitScenario.scenario, PGCommitScenario.scenario, BulkScenario.scenario, LoadScenario.scenario, ReplayScenario.scenario,
           HistoryScenario.scenario,
           MergeScenario.scenario, HeavyPushScenario.scenario, LiveDeliveryScenario.scenario, HTTPFollowersScenario.scenario, HTTPFollowersScenario.scenario10k, HTTPFollowersScenario.scenarioBeside1m, CachedFollowersScenario.scenario, SetFollowersScenario.scenario,
           PGFollowersScenario.scenario, AuthOverheadScenario.scenario, FirstSyncScenario.scenario, FirstSyncManyScenario.scenario, BlobTransferScenario.scenario]

    static func named(_ name: String) -> Scenario? {
        registry.first { $0.name == name }
    }
}

/// A scenario that could not be measured meaningfully (e.g. its input does not match the
/// specification).
struct ScenarioFailure: Error {
    var scenario: String
    var message: String
}

/// What a scenario is expected to reach.
struct Target: Sendable {
    /// The smallest acceptable ratio baseline_ms / ours_ms, if the scenario has a ratio target.
    var minRatio: Double?
    /// The largest acceptable peak memory, if the scenario has a memory target.
    var maxPeakMemoryMB: Double?
    /// The largest acceptable ours_ms, if the scenario has a time target instead of (or besides) a
    /// ratio (live-delivery: its ours_ms is the p99 latency).
    var maxOursMs: Double?

    /// The target with a mark per part, e.g. "≥ 20 ✗, ≤ 400 MB ✓", "≥ 0.4 ✓" or "ours ≤ 50 ms ✓".
    func assessed(ratio: Double, peakMemoryMB: Double?, oursMs: Double) -> String {
        func number(_ x: Double) -> String { x == x.rounded() ? Format.fixed(x, decimals: 0) : String(x) }
        var parts = [String]()
        if let minRatio {
            parts.append("≥ " + number(minRatio) + (ratio >= minRatio ? " ✓" : " ✗"))
        }
        if let limit = maxPeakMemoryMB {
            let met = peakMemoryMB.map { $0 <= limit } ?? false
            parts.append("≤ " + Format.fixed(limit, decimals: 0) + " MB" + (met ? " ✓" : " ✗"))
        }
        if let limit = maxOursMs {
            parts.append("ours ≤ " + number(limit) + " ms" + (oursMs <= limit ? " ✓" : " ✗"))
        }
        return parts.joined(separator: ", ")
    }

    /// Whether every part is met.
    func isMet(ratio: Double, peakMemoryMB: Double?, oursMs: Double) -> Bool {
        if let minRatio, !(ratio >= minRatio) { return false }
        if let limit = maxPeakMemoryMB {
            guard let mb = peakMemoryMB, mb <= limit else { return false }
        }
        if let limit = maxOursMs, !(oursMs <= limit) { return false }
        return true
    }
}

/// The measurements of one scenario.
struct ScenarioResult {
    var scenario: String
    /// Median of our runs, in milliseconds.
    var oursMs: Double
    /// What the baseline is.
    var baseline: String
    /// Median of the baseline runs, in milliseconds.
    var baselineMs: Double
    var target: Target
    /// What else was measured (the keys of Docs/Benchmarks.md where they apply: moves, minimalMoves, stages,
    /// fingerprint, rowsWritten, peakMemoryMB, …).
    var details: [String: JSONValue]
    /// How many times each side was timed, for people.
    var oursRuns: String
    var baselineRuns: String
    /// Broken promises (not slowness): the run exits with status 1 when any scenario has one.
    var failures: [String] = []

    var ratio: Double { baselineMs / oursMs }

    var peakMemoryMB: Double? {
        if case .number(let mb, _)? = details["peakMemoryMB"] { return mb }
        return nil
    }

    /// Whether the targets are met (ratio, peak memory, time: those the scenario has).
    var meetsTarget: Bool {
        target.isMet(ratio: ratio, peakMemoryMB: peakMemoryMB, oursMs: oursMs)
    }

    /// The target with a mark per part.
    var targetAssessment: String {
        target.assessed(ratio: ratio, peakMemoryMB: peakMemoryMB, oursMs: oursMs)
    }

    var json: JSONValue {
        .object([
            "scenario": .string(scenario),
            "ours_ms": .number(oursMs, decimals: 3),
            "baseline": .string(baseline),
            "baseline_ms": .number(baselineMs, decimals: 3),
            "ratio": .number(ratio, decimals: 2),
            "details": .object(details),
        ])
    }
}
