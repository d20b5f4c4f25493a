import ListDiff

/// The diff scenarios i–iv (Docs/Benchmarks.md): our staged diff against the standard library's
/// `difference(from:).inferringMoves()` on the same input pair.
struct DiffScenario: Sendable {
    enum Input: Sendable {
        case linear(LinearInput)
        case sectioned(SectionedInput)
    }

    var name: String
    /// k of the seed base + k.
    var seedOffset: UInt64
    var input: Input
    var expectedFingerprint: String
    var target: Target
    /// Timed runs of ours after one warm-up.
    var oursRuns: Int

    static let baselineName = "stdlib difference(from:).inferringMoves()"
    /// Timed runs of the baseline after a first run that serves as warm-up; when that first run takes
    /// longer than `baselineSlowMs`, it is the only one.
    static let baselineRuns = 3
    static let baselineSlowMs = 5_000.0

    static let all: [DiffScenario] = [
        DiffScenario(
            name: "diff-i", seedOffset: 1,
            input: .linear(LinearInput(n: 10_000, d: 2_000, i: 2_000, s: 2_000, u: 0)),
            expectedFingerprint: "02edef4f484abb06", target: Target(minRatio: 300), oursRuns: 9),
        DiffScenario(
            name: "diff-ii", seedOffset: 2,
            input: .linear(LinearInput(n: 100_000, d: 10_000, i: 10_000, s: 10_000, u: 0)),
            expectedFingerprint: "a7a158bc1a84ecdf", target: Target(minRatio: 600), oursRuns: 9),
        DiffScenario(
            name: "diff-iii", seedOffset: 3,
            input: .sectioned(SectionedInput()),
            expectedFingerprint: "b0ade275f0af3068", target: Target(minRatio: 300), oursRuns: 9),
        DiffScenario(
            name: "diff-iv", seedOffset: 4,
            input: .linear(LinearInput(n: 1_000_000, d: 2_500, i: 2_500, s: 2_500, u: 2_500)),
            expectedFingerprint: "1e8441702632e301", target: Target(minRatio: 20, maxPeakMemoryMB: 400),
            oursRuns: 5),
    ]

    var scenario: Scenario {
        let diff = self
        let summary: String
        switch input {
        case .linear(let p):
            summary = "linear (N \(p.n), D \(p.d), I \(p.i), S \(p.s), U \(p.u)) vs \(Self.baselineName)"
        case .sectioned(let p):
            summary = "\(p.sectionCount) sections × \(p.sectionSize) vs \(Self.baselineName), flattened"
        }
        return Scenario(name: name, summary: summary, target: target) { () throws(ScenarioFailure) in try diff.run() }
    }

    private func progress(_ text: String) {
        StandardError.line("\(name): \(text)")
    }

    func run() throws(ScenarioFailure) -> ScenarioResult {
        let seed = SplitMix64.baseSeed + seedOffset
        progress("generating the input pair")
        switch input {
        case .linear(let parameters):
            let (source, target) = parameters.generate(seed: seed)
            try check(Fingerprint.of(source: source, target: target))
            return measure(
                ours: { StagedChangeset<LinearSection, Item>(source: source, target: target) },
                minimal: {
                    MinimalCounts(
                        source: [ArraySection(model: LinearSection(), elements: source)],
                        target: [ArraySection(model: LinearSection(), elements: target)])
                },
                // The baseline diffs the arrays of ids. `inferringMoves()` needs Hashable elements whose
                // equality decides matching; comparing ids is what matching by difference identifier
                // means. (The baseline thereby ignores content updates: it does less work than ours.)
                baselineInput: { (source.map(\.id), target.map(\.id)) })
        case .sectioned(let parameters):
            let (source, target) = parameters.generate(seed: seed)
            try check(Fingerprint.of(source: source, target: target))
            return measure(
                ours: { StagedChangeset<Item, Item>(source: source, target: target) },
                minimal: { MinimalCounts(source: source, target: target) },
                // Flattened: each section's id (prefixed "§") followed by its elements' ids.
                baselineInput: { (Self.flatten(source), Self.flatten(target)) })
        }
    }

    static func flatten(_ sections: [Section]) -> [String] {
        var ids = [String]()
        ids.reserveCapacity(sections.reduce(0) { $0 + 1 + $1.elements.count })
        for section in sections {
            ids.append("§" + section.model.id)
            for element in section.elements { ids.append(element.id) }
        }
        return ids
    }

    private func check(_ fingerprint: Fingerprint) throws(ScenarioFailure) {
        guard fingerprint.hex == expectedFingerprint else {
            let message = "FINGERPRINT MISMATCH: got \(fingerprint.hex), expected \(expectedFingerprint)"
                + " — the input pair does not follow Docs/Benchmarks.md"
            progress(message)
            throw ScenarioFailure(scenario: name, message: message)
        }
        progress("fingerprint \(fingerprint.hex) ok")
    }

    private func measure<Model: Differentiable, Element: Differentiable>(
        ours: () -> StagedChangeset<Model, Element>,
        minimal: () -> MinimalCounts,
        baselineInput: () -> ([String], [String])
    ) -> ScenarioResult {
        // Ours first, so that the peak memory is not the baseline's. The peak is reset to the current
        // resident size, which already holds the generated input pair: the figure includes the inputs.
        let peakWasReset = PeakMemory.reset()
        progress("ours: 1 warm-up + \(oursRuns) runs")
        let (oursTiming, _) = Measurement.repeated(runs: oursRuns) {
            let changeset = ours()
            return changeset.counts.total &* 1_000_003 &+ changeset.count
        }
        let peak = PeakMemory.peakMB()
        if !peakWasReset { progress("could not reset the peak memory: reporting the process peak") }
        progress("ours: median \(Format.fixed(oursTiming.medianMs, decimals: 3)) ms")

        let changeset = ours()
        let counts = changeset.counts
        let oursCounts = MinimalCounts(counts)
        let reference = minimal()
        var failures = [String]()
        if oursCounts.moves != reference.moves {
            let message = "NOT MINIMAL: \(oursCounts.moves) moves, minimal is \(reference.moves)"
            progress(message)
            failures.append(message)
        } else {
            progress("moves \(oursCounts.moves) == minimal \(reference.moves)")
        }
        let otherDifferences = oursCounts.differences(from: reference)
            .filter { !$0.hasPrefix("elementMoved") && !$0.hasPrefix("sectionMoved") }
        if !otherDifferences.isEmpty {
            progress("warning: counts differ from the reference (ours/minimal): "
                + otherDifferences.joined(separator: ", "))
        }

        let (sourceIDs, targetIDs) = baselineInput()
        progress("baseline: first run (more follow if it takes ≤ \(Format.fixed(Self.baselineSlowMs / 1000, decimals: 0)) s)")
        let (baselineTiming, baselineMoves) = Measurement.adaptive(
            runs: Self.baselineRuns, slowMs: Self.baselineSlowMs,
            progress: { ms in self.progress("baseline: first run \(Format.fixed(ms, decimals: 1)) ms") }
        ) {
            let difference = targetIDs.difference(from: sourceIDs).inferringMoves()
            var moves = 0
            for case .insert(_, _, let associatedWith) in difference where associatedWith != nil { moves += 1 }
            return moves
        }
        progress("baseline: median \(Format.fixed(baselineTiming.medianMs, decimals: 3)) ms, \(baselineMoves) moves")

        var details: [String: JSONValue] = [
            "moves": .int(oursCounts.moves),
            "minimalMoves": .int(reference.moves),
            "stages": .int(changeset.count),
            "fingerprint": .string(expectedFingerprint),
            "baselineMoves": .int(baselineMoves),
        ]
        if let peak { details["peakMemoryMB"] = .number(peak, decimals: 1) }
        var result = ScenarioResult(
            scenario: name, oursMs: oursTiming.medianMs, baseline: Self.baselineName,
            baselineMs: baselineTiming.medianMs, target: target, details: details,
            oursRuns: "1+\(oursTiming.samples.count)",
            baselineRuns: baselineTiming.warmedUp ? "1+\(baselineTiming.samples.count)" : "1",
            failures: failures)
        if let limit = target.maxPeakMemoryMB, let peak, peak > limit {
            progress("peak memory \(Format.fixed(peak, decimals: 1)) MB is over the target \(Format.fixed(limit, decimals: 0)) MB")
        }
        result.failures = failures
        return result
    }
}
