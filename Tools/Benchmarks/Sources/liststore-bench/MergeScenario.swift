import Foundation
import ListDiff
import ListMerge
import ListStore

/// merge-1pct (Docs/Benchmarks.md): the source merges a replica's push of 1% changes onto a
/// 100,000-element head that has 1% concurrent changes, against a plain commit of the merged snapshot.
///
/// Input: `MergeInput` (base, theirs, mine). Untimed, before any run: the push's intents
/// (`Intent.changes(from: base, to: mine)`) and the merged snapshot (`Rebase(intents, onto: theirs)`),
/// checked against what the merge rules give for the input's groups (where every element is and what
/// it holds, and the conflict report). Every run, of either side, starts from a new store file built
/// the same way, untimed: the base committed (version 1), theirs committed (version 2, the head, kept
/// in memory by the `Store` as a server keeps it between commits), checkpointed. Ours times
/// `Store.merge(push, into:)` (the rebase, the diff of the head against its result, the rows, the
/// journal entry with the conflict report and the push record, in one transaction); the baseline times
/// `Store.commit(merged, to:)` (the diff, the same rows and a journal entry). So the ratio says what the
/// rebase costs on top of the commit it makes. After each run of ours the store's head must be the
/// merged snapshot (version 3), the answer's conflicts the rebase's, and its journal entry must hold
/// the push id, the conflicts and the same stages as the baseline's commit: so rowsWritten, stages and
/// moves, taken from the baseline's `CommitResult`, are the merge's too (it also writes its push row
/// and the journal entry's push columns).
///
/// Runs of the baseline and of ours alternate (baseline first), so that both see the same machine.
struct MergeScenario {
    static let name = "merge-1pct"
    static let baselineName = "Store.commit of the merged snapshot"
    static let target = Target(minRatio: 0.5)
    static let listName = "list"
    /// Timed runs of each side, alternating, after one warm-up of each.
    static let runs = 7
    /// The push's id.
    static let pushID = PushID(client: "5f0c3a9e-7d41-4b8a-9c2e-1a6b8d4e0f37", seq: 1)

    static var scenario: Scenario {
        Scenario(
            name: name,
            summary: "push of 1% changes merged onto a 100,000-element head with 1% concurrent changes vs \(baselineName)",
            target: target
        ) { () throws(ScenarioFailure) in try MergeScenario().run() }
    }

    let log = ScenarioLog(scenario: name)

    func run() throws(ScenarioFailure) -> ScenarioResult {
        log.progress("generating the input (base, theirs, mine)")
        let input = MergeInput()
        let fingerprint = input.fingerprint
        guard fingerprint == MergeInput.expectedFingerprint else {
            throw log.failure("FINGERPRINT MISMATCH: got \(fingerprint), expected \(MergeInput.expectedFingerprint)"
                + " — the input does not follow MergeInput's specification")
        }
        log.progress("fingerprint \(fingerprint) ok")
        let base = MergeInput.listSections(input.base)
        let theirs = MergeInput.listSections(input.theirs)
        let mine = MergeInput.listSections(input.mine)

        // The push and the merged snapshot (untimed), checked against the rules.
        let intents = Intent.changes(from: base, to: mine)
        guard Rebase(intents, onto: base).snapshot == mine else {
            throw log.failure("WRONG INTENTS: rebased onto the base they do not give mine")
        }
        let rebase = Rebase(intents, onto: theirs)
        let merged = rebase.snapshot
        if let problem = Self.problem(with: merged, expected: input.expectedElements) {
            throw log.failure("WRONG MERGE: \(problem)")
        }
        let conflicts = rebase.conflicts.map(\.description).sorted()
        let expectedConflicts = input.expectedConflicts
        guard conflicts == expectedConflicts else {
            throw log.failure("WRONG CONFLICTS: the rebase reports \(conflicts.count), expected \(expectedConflicts.count); first "
                + "difference: \(zip(conflicts, expectedConflicts).first { $0 != $1 }.map { "\($0) ≠ \($1)" } ?? "in the count")")
        }
        let mergedDigest = ListDigest.of(merged)
        let push = Push(id: Self.pushID, intents: intents, author: "bench", message: "merge-1pct")
        log.progress("\(intents.count) intents; the merge gives \(merged.reduce(0) { $0 + $1.elements.count }) elements "
            + "and \(rebase.conflicts.count) conflicts, as expected")

        // What the merge adds to a commit, in memory (for people: where the time goes).
        let inMemory = Self.inMemoryTimings(intents: intents, theirs: theirs, merged: merged)
        log.progress("in memory (medians of 5): Rebase \(Format.fixed(inMemory.rebaseMs, decimals: 2)) ms, "
            + "diff head → merged \(Format.fixed(inMemory.diffMs, decimals: 2)) ms")

        // Alternating runs.
        log.progress("1 warm-up + \(Self.runs) runs of the baseline and of ours, alternating, each on a new store "
            + "holding base (v1) and theirs (v2)")
        let clock = ContinuousClock()
        var oursSamples = [Double]()
        var baselineSamples = [Double]()
        var peak: Double?
        var committed: CommitResult?
        var baselineStages: [UInt8]?
        var failures = [String]()
        for run in 0...Self.runs {
            let label = run == 0 ? "warm-up" : "run \(run)"
            let baselineMs = try log.attempt("committing the merged snapshot") { () throws -> Double in
                let (directory, store) = try Self.prepareStore(base: base, theirs: theirs)
                defer { directory.remove() }
                // As before ours: freed memory returned to the system, so that both sides allocate alike.
                PeakMemory.reset()
                var result: CommitResult?
                let ms = Measurement.milliseconds(try clock.measure { result = try store.commit(merged, to: Self.listName) })
                committed = result
                baselineStages = try store.journal(of: Self.listName, after: 2, limit: 1).entries.first?.stagesJSON
                return ms
            }
            let oursMs = try log.attempt("merging") { () throws -> Double in
                let (directory, store) = try Self.prepareStore(base: base, theirs: theirs)
                defer { directory.remove() }
                PeakMemory.reset()
                var answer: PushAnswer?
                let ms = Measurement.milliseconds(try clock.measure { answer = try store.merge(push, into: Self.listName) })
                if let mb = PeakMemory.peakMB() { peak = max(peak ?? 0, mb) }
                if let problem = try Self.problem(
                    with: answer, in: store, merged: merged, digest: mergedDigest, conflicts: rebase.conflicts,
                    stages: baselineStages)
                {
                    log.progress("\(label): WRONG MERGE: \(problem)")
                    failures.append("WRONG MERGE (\(label)): \(problem)")
                }
                return ms
            }
            log.progress("\(label): baseline \(Format.fixed(baselineMs, decimals: 1)) ms, ours \(Format.fixed(oursMs, decimals: 1)) ms")
            if run > 0 {
                baselineSamples.append(baselineMs)
                oursSamples.append(oursMs)
            }
        }
        let oursTiming = Measurement.Timing(samples: oursSamples, warmedUp: true)
        let baselineTiming = Measurement.Timing(samples: baselineSamples, warmedUp: true)
        log.progress("ours: median \(Format.fixed(oursTiming.medianMs, decimals: 1)) ms, baseline: median "
            + "\(Format.fixed(baselineTiming.medianMs, decimals: 1)) ms")

        guard let committed else { throw log.failure("no commit ran") }
        if !committed.changed || committed.version != 3 || committed.digest != mergedDigest {
            let message = "WRONG COMMIT: changed \(committed.changed), version \(committed.version), digest \(committed.digest.hex)"
                + " (the merged snapshot's is \(mergedDigest.hex))"
            log.progress(message)
            failures.append(message)
        }
        var details: [String: JSONValue] = [
            "intents": .int(intents.count),
            "conflicts": .int(rebase.conflicts.count),
            "rowsWritten": .int(committed.rowsWritten),
            "stages": .int(committed.stageCount),
            "moves": .int(committed.changeset.counts.elementMoved + committed.changeset.counts.sectionMoved),
            "changes": .int(committed.changeCount),
            "rebaseMs": .number(inMemory.rebaseMs, decimals: 3),
            "diffMs": .number(inMemory.diffMs, decimals: 3),
            "fingerprint": .string(fingerprint),
        ]
        if let peak { details["peakMemoryMB"] = .number(peak, decimals: 1) }
        return ScenarioResult(
            scenario: Self.name, oursMs: oursTiming.medianMs, baseline: Self.baselineName,
            baselineMs: baselineTiming.medianMs, target: Self.target, details: details,
            oursRuns: oursTiming.runsText, baselineRuns: baselineTiming.runsText, failures: failures)
    }

    /// A new store file holding the base as version 1 and theirs as version 2 (the head, in the
    /// `Store`'s memory), checkpointed; then a pause, so that the background checkpoint the large
    /// first commit started is over before anything is timed.
    static func prepareStore(base: [ListSection], theirs: [ListSection]) throws -> (TemporaryDirectory, Store) {
        let directory = try TemporaryDirectory(label: name)
        let store = try Store(path: directory.file("source.liststore"))
        try store.commit(base, to: listName)
        let head = try store.commit(theirs, to: listName)
        guard head.version == 2, head.changed else {
            throw ScenarioFailure(scenario: name, message: "committing theirs made version \(head.version)")
        }
        try store.checkpoint()
        Thread.sleep(forTimeInterval: 0.1)
        return (directory, store)
    }

    /// Medians of 5 runs (after one warm-up) of the rebase and of the commit's diff, in memory.
    static func inMemoryTimings(intents: [Intent], theirs: [ListSection], merged: [ListSection])
        -> (rebaseMs: Double, diffMs: Double)
    {
        let (rebase, _) = Measurement.repeated(runs: 5) { Rebase(intents, onto: theirs).snapshot.count }
        let (diff, _) = Measurement.repeated(runs: 5) { ListChangeset(source: theirs, target: merged).counts.total }
        return (rebase.medianMs, diff.medianMs)
    }

    /// Whether the merged snapshot holds exactly the expected elements, each in its section with its
    /// content (sections never change in this input).
    static func problem(with merged: [ListSection], expected: [String: (section: Int, json: String)]) -> String? {
        guard merged.count == MergeInput.sectionCount else { return "\(merged.count) sections" }
        var seen = 0
        for (j, section) in merged.enumerated() {
            guard section.model.id == MergeInput.sectionID(j) else { return "section \(j) is \(section.model.id)" }
            for element in section.elements {
                seen += 1
                guard let place = expected[element.id] else { return "unexpected element \(element.id)" }
                let json = String(decoding: element.content, as: UTF8.self)
                guard place.section == j, place.json == json else {
                    return "\(element.id) is in s\(j) holding \(json), expected in s\(place.section) holding \(place.json)"
                }
            }
        }
        return seen == expected.count ? nil : "\(seen) elements, expected \(expected.count) (an element repeated or missing)"
    }

    /// Whether a merge answered and left the store as the rebase says, its journal entry holding the
    /// push, the conflicts and the stages the baseline's commit recorded.
    static func problem(
        with answer: PushAnswer?, in store: Store, merged: [ListSection], digest: ListDigest, conflicts: [Conflict],
        stages: [UInt8]?
    ) throws -> String? {
        guard let answer else { return "no answer" }
        if answer.version != 3 || answer.duplicate || answer.seq != pushID.seq {
            return "answered version \(answer.version), duplicate \(answer.duplicate), seq \(answer.seq)"
        }
        if answer.conflicts != conflicts {
            return "answered \(answer.conflicts.count) conflicts, the rebase reports \(conflicts.count) (or in another order)"
        }
        let head = try store.snapshot(of: listName)
        if head.version != 3 || head.digest != digest || head.sections != merged {
            return "the head is version \(head.version), digest \(head.digest.hex); the merged snapshot's digest is \(digest.hex)"
        }
        guard let entry = try store.journal(of: listName, after: 2, limit: 1).entries.first else { return "no journal entry" }
        if entry.pushID != pushID || entry.conflicts != conflicts {
            return "the journal entry records push \(entry.pushID.map(String.init(describing:)) ?? "none") and \(entry.conflicts.count) conflicts"
        }
        if entry.stagesJSON != stages {
            return "the journal entry's stages differ from those of the baseline's commit of the merged snapshot"
        }
        return nil
    }
}
