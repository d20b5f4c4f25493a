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
        + [CommitScenario.scenario, BulkScenario.scenario, LoadScenario.scenario]

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
    /// The smallest acceptable ratio baseline_ms / ours_ms.
    var minRatio: Double
    /// The largest acceptable peak memory, if the scenario has a memory target.
    var maxPeakMemoryMB: Double?

    /// The target with a mark per part, e.g. "≥ 20 ✗, ≤ 400 MB ✓" or "≥ 0.4 ✓".
    func assessed(ratio: Double, peakMemoryMB: Double?) -> String {
        let minimum = minRatio == minRatio.rounded() ? Format.fixed(minRatio, decimals: 0) : String(minRatio)
        var text = "≥ " + minimum + (ratio >= minRatio ? " ✓" : " ✗")
        if let limit = maxPeakMemoryMB {
            let met = peakMemoryMB.map { $0 <= limit } ?? false
            text += ", ≤ " + Format.fixed(limit, decimals: 0) + " MB" + (met ? " ✓" : " ✗")
        }
        return text
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
    /// What else was measured (DESIGN §6 keys where they apply: moves, minimalMoves, stages,
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

    /// Whether the targets are met (ratio and, where set, peak memory).
    var meetsTarget: Bool {
        guard ratio >= target.minRatio else { return false }
        if let limit = target.maxPeakMemoryMB {
            guard let mb = peakMemoryMB, mb <= limit else { return false }
        }
        return true
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
