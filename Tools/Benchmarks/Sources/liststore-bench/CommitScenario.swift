import ListDiff
import ListStore

/// commit-1pct (Docs/Benchmarks.md): the diff-iii pair committed into a store that holds its source,
/// against the in-memory diff of the same pair.
///
/// A commit diffs the new snapshot against the head it keeps in memory, then writes the rows that
/// changed, the journal entry and flushes (synchronous FULL): the ratio says what the writing costs on
/// top of the diff. Every run of ours commits into a new store file whose source version was committed
/// untimed by the same `Store` and checkpointed (a store at rest holding its source); only the second
/// `commit` call is timed. Runs of ours and of the baseline alternate, so that both see the same
/// machine (it is shared, and its speed drifts within a run).
struct CommitScenario {
    static let name = "commit-1pct"
    static let baselineName = "in-memory ListChangeset(source:target:)"
    static let target = Target(minRatio: 0.4)
    /// The scenario whose input pair is committed.
    static let diffName = "diff-iii"
    /// Timed runs of ours (each on a new store) and of the baseline, alternating, after one warm-up
    /// each.
    static let runs = 9

    static var scenario: Scenario {
        Scenario(
            name: name,
            summary: "\(diffName) pair committed into a store holding its source vs \(baselineName)",
            target: target
        ) { () throws(ScenarioFailure) in try CommitScenario().run() }
    }

    let log = ScenarioLog(scenario: name)

    /// The diff-iii pair as the store takes it, with its fingerprint checked against Docs/Benchmarks.md.
    static func inputPair(_ log: ScenarioLog) throws(ScenarioFailure) -> (source: [ListSection], target: [ListSection], fingerprint: String) {
        guard let diff = DiffScenario.all.first(where: { $0.name == diffName }),
              case .sectioned(let input) = diff.input
        else { throw log.failure("no sectioned scenario \(diffName)") }
        log.progress("generating the \(diffName) input pair")
        let (sourceItems, targetItems) = input.generate(seed: SplitMix64.baseSeed + diff.seedOffset)
        let fingerprint = Fingerprint.of(source: sourceItems, target: targetItems).hex
        guard fingerprint == diff.expectedFingerprint else {
            throw log.failure("FINGERPRINT MISMATCH: got \(fingerprint), expected \(diff.expectedFingerprint)"
                + " — the input pair does not follow Docs/Benchmarks.md")
        }
        log.progress("fingerprint \(fingerprint) ok")
        return (StoreInput.listSections(sourceItems), StoreInput.listSections(targetItems), fingerprint)
    }

    func run() throws(ScenarioFailure) -> ScenarioResult {
        let (source, target, fingerprint) = try Self.inputPair(log)

        // Ours, with one baseline run before each (untimed for ours). The peak is reset after the
        // source commit of each run and read after its timed commit: it covers the commit, with the
        // inputs and the store's in-memory head resident.
        log.progress("1 warm-up + \(Self.runs) runs of ours (each on a new store holding the source), each after one of the baseline")
        var peak: Double?
        var committed: CommitResult?
        var baselineSamples = [Double]()
        let clock = ContinuousClock()
        let (oursTiming, _) = try log.attempt("committing") {
            try Measurement.prepared(
                runs: Self.runs, warmUp: true,
                prepare: { () throws -> (TemporaryDirectory, Store) in
                    var changeCount = 0
                    baselineSamples.append(Measurement.milliseconds(clock.measure {
                        changeCount = ListChangeset(source: source, target: target).counts.total
                    }))
                    precondition(changeCount > 0)
                    let directory = try TemporaryDirectory(label: Self.name)
                    let store = try Store(path: directory.file("commit.liststore"))
                    try store.commit(source, to: "list")
                    try store.checkpoint()
                    PeakMemory.reset()
                    return (directory, store)
                },
                { _, store in
                    let result = try store.commit(target, to: "list")
                    return (result.rowsWritten, result)
                },
                finish: { _, result in
                    if let mb = PeakMemory.peakMB() { peak = max(peak ?? 0, mb) }
                    committed = result
                })
        }
        // The first baseline run was the warm-up.
        let baselineTiming = Measurement.Timing(samples: Array(baselineSamples.dropFirst()), warmedUp: true)
        log.progress("ours: median \(Format.fixed(oursTiming.medianMs, decimals: 3)) ms, baseline: median "
            + "\(Format.fixed(baselineTiming.medianMs, decimals: 3)) ms")

        // The commit must have recorded the target, with the same changeset as the in-memory diff.
        let changeset = ListChangeset(source: source, target: target)
        var failures = [String]()
        guard let committed else { throw log.failure("no commit ran") }
        let expectedDigest = ListDigest.of(target)
        if !committed.changed || committed.version != 2 || committed.digest != expectedDigest {
            let message = "WRONG COMMIT: changed \(committed.changed), version \(committed.version), digest "
                + "\(committed.digest.hex) (the target's is \(expectedDigest.hex))"
            log.progress(message)
            failures.append(message)
        }
        if committed.stageCount != changeset.count || committed.changeCount != changeset.counts.total {
            log.progress("warning: the commit recorded \(committed.stageCount) stages / \(committed.changeCount) changes,"
                + " the in-memory diff has \(changeset.count) / \(changeset.counts.total)")
        }

        var details: [String: JSONValue] = [
            "rowsWritten": .int(committed.rowsWritten),
            "stages": .int(changeset.count),
            "moves": .int(changeset.counts.elementMoved + changeset.counts.sectionMoved),
            "fingerprint": .string(fingerprint),
        ]
        if let peak { details["peakMemoryMB"] = .number(peak, decimals: 1) }
        return ScenarioResult(
            scenario: Self.name, oursMs: oursTiming.medianMs, baseline: Self.baselineName,
            baselineMs: baselineTiming.medianMs, target: Self.target, details: details,
            oursRuns: oursTiming.runsText, baselineRuns: baselineTiming.runsText, failures: failures)
    }
}
