import ArgumentParser
import ListJSON
import ListStore

/// `liststore verify --db D [--list L] [--json]`.
struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check a store: SQLite's integrity check and a replay of every journal against its digests.",
        discussion: """
            Every list's journal is replayed from its base; every version must reproduce its stored \
            digest and counts, and the last one the head rows. The first version that diverges is \
            named. Exits with 74 when anything is wrong. --json prints {"schemaVersion":1,"valid":…,\
            "integrity":[…],"lists":[{"name":…,"baseVersion":…,"headVersion":…,"versionsVerified":…,\
            "firstDivergentVersion":…,"problem":…}]}.

            \(ExitStatus.helpText)
            """
    )

    @OptionGroup var store: StoreOptions

    @Option(name: .long, help: ArgumentHelp("Check only this list.", valueName: "name"))
    var list: String?

    @Flag(name: .long, help: "Print one JSON document instead of a report.")
    var json = false

    func run() async throws {
        try await Terminal.reportingFailures {
            let store = try await store.engine(existing: true)
            let list = list
            let report = try await store.call {
                try await $0.verify(list: list) { progress in
                    if progress.completed % 100 == 0 || progress.completed == progress.total {
                        Terminal.progress("verifying \(Output.quoted(progress.list)): \(progress.completed)/\(progress.total) versions")
                    }
                }
            }
            Terminal.progress(nil)
            if json {
                Output.json([
                    "valid": .bool(report.isValid),
                    "integrity": .array(report.integrityProblems.map { .string($0) }),
                    "lists": .array(report.lists.map { list in
                        var object: JSONObject = [
                            "name": .string(list.name), "baseVersion": JSONValue(list.baseVersion),
                            "headVersion": JSONValue(list.headVersion),
                            "versionsVerified": JSONValue(list.versionsVerified),
                        ]
                        object["firstDivergentVersion"] = list.firstDivergentVersion.map { JSONValue($0) } ?? .null
                        object["problem"] = list.problem.map { .string($0) } ?? .null
                        return .object(object)
                    }),
                ])
            } else {
                var text = report.integrityProblems.isEmpty
                    ? "integrity check: ok\n" : "integrity check: \(Output.printable(report.integrityProblems.joined(separator: "; ")))\n"
                var rows: [[String]] = []
                for list in report.lists {
                    let status = list.isValid
                        ? "ok" : "DIVERGES at version \(list.firstDivergentVersion.map(String.init) ?? "?"): \(list.problem ?? "")"
                    rows.append([list.name, "\(list.baseVersion)…\(list.headVersion)", "\(list.versionsVerified)", status])
                }
                if !rows.isEmpty { text += Output.table(["list", "versions", "replayed", "result"], rows) }
                text += report.isValid ? "The store is consistent.\n" : "The store is damaged or was tampered with.\n"
                Terminal.out(text)
            }
            if !report.isValid {
                if !json { Terminal.errorLine("error: verification failed for \(store.engine.location)") }
                throw ExitStatus.ioError
            }
        }
    }
}
