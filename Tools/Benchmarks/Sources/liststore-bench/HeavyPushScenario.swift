import Foundation
import ListDiff
import ListJSON
import ListMerge
import ListStore

/// Contents, as ListJSON writes them (the benchmark's own `JSONValue` writes the reports).
private typealias Content = ListJSON.JSONValue

/// heavy-push (Docs/Benchmarks.md): the push of issue "Fast and fair under load again" that held
/// every writer of a store: 16,000 `updateElement` intents, each changing one key of one element
/// whose content has 16,000 keys (a list of 1,000 elements besides), merged by the source, against a
/// plain commit of the merged snapshot.
///
/// Untimed, before any run: the intents and the merged snapshot (`Rebase(intents, onto: head)`),
/// checked: every key changed, no conflict. Every run, of either side, starts from a new store file
/// holding the head (version 1). Ours times `Store.merge(push, into:)` (the rebase, the diff, the rows,
/// the journal entry and the push record, in one write transaction); the baseline times
/// `Store.commit(merged, to:)`. Runs alternate, baseline first.
///
/// Besides, in details: how long a commit of one element to another list of the store takes while
/// the push merges through the async API (`otherCommitDuringPushMs`, median of the runs) and alone
/// (`otherCommitAloneMs`): a large push rebases before its write, so a writer of another list waits
/// only for the push's own rows, not for its merge.
struct HeavyPushScenario {
    static let name = "heavy-push"
    static let baselineName = "Store.commit of the merged snapshot"
    /// The merge does what a commit of its result does, and besides reads, checks and records the
    /// push (16,000 intents decoded, fingerprinted and rebased): at most 20 such commits. It used
    /// to cost about 40,000 of them (157 s), its work growing with intents × keys.
    static let target = Target(minRatio: 0.05)
    static let listName = "list"
    static let otherList = "other"
    static let keys = 16_000
    static let otherElements = 1_000
    static let runs = 5
    static let pushID = PushID(client: "9b2d4c1e-5f6a-4e3b-8c7d-2a1f0e9d8c7b", seq: 1)

    static var scenario: Scenario {
        Scenario(
            name: name,
            summary: "push of \(keys) one-key updates of an element with \(keys) keys vs \(baselineName)",
            target: target
        ) { () throws(ScenarioFailure) in try HeavyPushScenario().run() }
    }

    let log = ScenarioLog(scenario: name)

    static func key(_ k: Int) -> String { "k\(k)" }

    /// The head: one section, the heavy element first, then `otherElements` small ones.
    static func head() -> [ListSection] {
        let heavy = Content.object(JSONObject(uniqueKeysWithValues: (0..<keys).map { (key($0), Content($0)) }))
        let elements = [ListItem(id: "heavy", json: heavy)] + (0..<otherElements).map { ListItem(id: "e\($0)", json: Content($0)) }
        return [ListSection(model: ListItem(id: "s", json: .null), elements: elements)]
    }

    func run() throws(ScenarioFailure) -> ScenarioResult {
        log.progress("generating the head and the push")
        let head = Self.head()
        let intents: [Intent] = (0..<Self.keys).map { k in
            .updateElement(
                ItemRef("heavy"), section: ItemRef("s"), base: .object([Self.key(k): Content(k)]),
                content: .object([Self.key(k): Content(-k - 1)]))
        }
        let push = Push(id: Self.pushID, intents: intents, author: "bench", message: Self.name)
        let (rebaseTiming, _) = Measurement.repeated(runs: 3) { Rebase(intents, onto: head).snapshot.count }
        let rebase = Rebase(intents, onto: head)
        let merged = rebase.snapshot
        guard rebase.conflicts.isEmpty, let heavy = try? merged.first?.elements.first?.json,
            case .object(let object) = heavy, object.count == Self.keys,
            (0..<Self.keys).allSatisfy({ object[Self.key($0)] == Content(-$0 - 1) })
        else {
            throw log.failure("WRONG MERGE: the heavy element does not hold every key changed, or the rebase reports conflicts")
        }
        log.progress("\(intents.count) intents; in memory, Rebase takes \(Format.fixed(rebaseTiming.medianMs, decimals: 1)) ms (median of 3)")

        let clock = ContinuousClock()
        var oursSamples = [Double]()
        var baselineSamples = [Double]()
        var during = [Double]()
        var alone = [Double]()
        var failures = [String]()
        for run in 0...Self.runs {
            let label = run == 0 ? "warm-up" : "run \(run)"
            let baselineMs = try log.attempt("committing the merged snapshot") { () throws -> Double in
                let (directory, store) = try Self.prepareStore(head)
                defer { directory.remove() }
                return Measurement.milliseconds(try clock.measure { _ = try store.commit(merged, to: Self.listName) })
            }
            let oursMs = try log.attempt("merging") { () throws -> Double in
                let (directory, store) = try Self.prepareStore(head)
                defer { directory.remove() }
                var answer: PushAnswer?
                let ms = Measurement.milliseconds(try clock.measure { answer = try store.merge(push, into: Self.listName) })
                let snapshot = try store.snapshot(of: Self.listName)
                if answer?.version != 2 || answer?.conflicts.isEmpty != true || snapshot.sections != merged {
                    failures.append("WRONG MERGE (\(label)): answered version \(answer?.version ?? -1); the head is not the merged snapshot")
                }
                return ms
            }
            let (duringMs, aloneMs) = try log.attempt("committing to another list during the push") { () throws -> (Double, Double) in
                let (directory, store) = try Self.prepareStore(head)
                defer { directory.remove() }
                let aloneMs = Measurement.milliseconds(try clock.measure { try Self.commitOther(store, value: 1) })
                return (try Self.commitDuringPush(store, push: push, clock: clock), aloneMs)
            }
            log.progress("\(label): baseline \(Format.fixed(baselineMs, decimals: 1)) ms, ours \(Format.fixed(oursMs, decimals: 1)) ms; "
                + "another list's commit \(Format.fixed(duringMs, decimals: 1)) ms during the push, \(Format.fixed(aloneMs, decimals: 1)) ms alone")
            if run > 0 {
                baselineSamples.append(baselineMs)
                oursSamples.append(oursMs)
                during.append(duringMs)
                alone.append(aloneMs)
            }
        }
        let oursTiming = Measurement.Timing(samples: oursSamples, warmedUp: true)
        let baselineTiming = Measurement.Timing(samples: baselineSamples, warmedUp: true)
        let details: [String: JSONValue] = [
            "intents": .int(intents.count),
            "keys": .int(Self.keys),
            "rebaseMs": .number(rebaseTiming.medianMs, decimals: 3),
            "otherCommitDuringPushMs": .number(Measurement.Timing(samples: during, warmedUp: true).medianMs, decimals: 3),
            "otherCommitAloneMs": .number(Measurement.Timing(samples: alone, warmedUp: true).medianMs, decimals: 3),
        ]
        return ScenarioResult(
            scenario: Self.name, oursMs: oursTiming.medianMs, baseline: Self.baselineName,
            baselineMs: baselineTiming.medianMs, target: Self.target, details: details,
            oursRuns: oursTiming.runsText, baselineRuns: baselineTiming.runsText, failures: failures)
    }

    /// A new store file holding the head (version 1) and a small other list, checkpointed.
    static func prepareStore(_ head: [ListSection]) throws -> (TemporaryDirectory, Store) {
        let directory = try TemporaryDirectory(label: name)
        let store = try Store(path: directory.file("source.liststore"))
        try store.commit(head, to: listName)
        try commitOther(store, value: 0)
        try store.checkpoint()
        return (directory, store)
    }

    static func commitOther(_ store: Store, value: Int) throws {
        try store.commit([ListSection(model: ListItem(id: "s", json: .null), elements: [ListItem(id: "e", json: Content(value))])], to: otherList)
    }

    /// Starts the push's merge through the async API and, once it has begun, times a commit to the
    /// other list from this thread; waits for the merge to end.
    static func commitDuringPush(_ store: Store, push: Push, clock: ContinuousClock) throws -> Double {
        let done = DispatchSemaphore(value: 0)
        let failed = PushFailure()
        Task.detached {
            do { _ = try await store.merge(push, into: listName) } catch { failed.set(error) }
            done.signal()
        }
        // The merge is under way by then: its rebase alone takes tens of milliseconds.
        Thread.sleep(forTimeInterval: 0.005)
        let ms = Measurement.milliseconds(try clock.measure { try commitOther(store, value: 2) })
        done.wait()
        if let error = failed.error { throw error }
        return ms
    }
}

/// The error of the merge run beside the timed commit.
private final class PushFailure: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: (any Error)?
    var error: (any Error)? { lock.withLock { stored } }
    func set(_ error: any Error) { lock.withLock { stored = error } }
}
