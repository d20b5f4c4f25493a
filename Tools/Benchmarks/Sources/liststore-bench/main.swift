import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// liststore-bench [SCENARIO…] [--json]   (Docs/Benchmarks.md)
//
// Each scenario runs in a fresh child process of its own (see ScenarioResult+ChildProcess.swift).
//
// Exit status: 0 ok (targets are reported, not enforced); 1 an input fingerprint does not match the
// specification or a changeset is not minimal; 64 usage.

func usage() -> String {
    var text = """
        usage: liststore-bench [SCENARIO…] [--json]

        Runs the named scenarios (all of them when none is named) and prints a table, or with --json one
        JSON document {"schemaVersion":1,"results":[…]} on stdout. Progress goes to stderr.

        scenarios:
        """
    let width = Scenario.registry.map(\.name.count).max() ?? 0
    for scenario in Scenario.registry {
        text += "\n  " + scenario.name + String(repeating: " ", count: width - scenario.name.count + 2)
            + scenario.summary
    }
    return text
}

// A live-delivery follower (a hidden mode: LiveDeliveryScenario starts it in a process of its own).
if let status = LiveDeliveryScenario.followerMain(CommandLine.arguments) { exit(status) }
// The journal server of http-followers (a hidden mode: HTTPFollowersScenario starts it in a process of
// its own).
if let status = HTTPFollowersScenario.serverMain(CommandLine.arguments) { exit(status) }
// The clients of first-sync-1m (hidden modes: FirstSyncScenario starts them in processes of their own).
if let status = FirstSyncScenario.clientMain(CommandLine.arguments) { exit(status) }
if let status = FirstSyncManyScenario.readersMain(CommandLine.arguments) { exit(status) }
// The clients of blob-transfer (hidden modes).
if let status = BlobTransferScenario.clientMain(CommandLine.arguments) { exit(status) }

var asJSON = false
var childMode = false
var selected = [Scenario]()
for argument in CommandLine.arguments.dropFirst() {
    switch argument {
    case "--json":
        asJSON = true
    case ScenarioResult.childFlag:
        childMode = true
    case "-h", "--help":
        print(usage())
        exit(0)
    case _ where argument.hasPrefix("-"):
        StandardError.line("liststore-bench: unknown option '\(argument)' (usage: liststore-bench [SCENARIO…] [--json])")
        exit(64)
    default:
        guard let scenario = Scenario.named(argument) else {
            StandardError.line("liststore-bench: unknown scenario '\(argument)' (known: "
                + Scenario.registry.map(\.name).joined(separator: ", ") + ")")
            exit(64)
        }
        if !selected.contains(where: { $0.name == scenario.name }) { selected.append(scenario) }
    }
}
if selected.isEmpty { selected = Scenario.registry }

// A child runs its one scenario in this process and hands the result to its parent.
if childMode {
    guard selected.count == 1 else {
        StandardError.line("liststore-bench: \(ScenarioResult.childFlag) takes exactly one scenario")
        exit(64)
    }
    do {
        print(try selected[0].run().childEncoding, terminator: "")
        exit(0)
    } catch {
        StandardError.line("\(error.scenario): \(error.message)")
        exit(1)
    }
}

var results = [ScenarioResult]()
var failures = [String]()
// The PostgreSQL scenarios need a database: LISTSTORE_BENCH_PG's, or a throwaway cluster of this run.
let onPostgres = [PGCommitScenario.name, PGFollowersScenario.name]
if selected.contains(where: { onPostgres.contains($0.name) }) {
    do {
        try PostgresServer.startThrowawayUnlessNamed()
    } catch {
        failures += selected.filter { onPostgres.contains($0.name) }.map { "\($0.name): \(error)" }
        selected.removeAll { onPostgres.contains($0.name) }
    }
}
for scenario in selected {
    do {
        let result = try ScenarioResult.runInChildProcess(scenario)
        results.append(result)
        StandardError.line("\(scenario.name): ratio \(Format.ratio(result.ratio)), target "
            + result.targetAssessment
            + (result.meetsTarget ? "" : " — TARGET NOT MET"))
        failures += result.failures.map { "\(scenario.name): \($0)" }
    } catch {
        failures.append("\(error.scenario): \(error.message)")
    }
}

print(asJSON ? Report.json(results) : Report.table(results))
if !failures.isEmpty {
    StandardError.line("")
    StandardError.line("!!! \(failures.count) FAILURE(S) !!!")
    for failure in failures { StandardError.line("!!! " + failure) }
    exit(1)
}
