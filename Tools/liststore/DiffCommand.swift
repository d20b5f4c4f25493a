import ArgumentParser
import ListDiff
import ListJSON

/// `liststore diff --from A.json --to B.json [--json]`: the staged changeset between two snapshot files.
struct DiffCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diff",
        abstract: "Print the staged changeset that turns one snapshot document into another.",
        discussion: """
            Each stage is one batch update: removals address the list before the stage, placements \
            the list after it, updates stand in stages of their own. --json prints one document \
            {"schemaVersion":1,"stages":[…]}.

            \(ExitStatus.helpText)
            """
    )

    @Option(name: .long, help: ArgumentHelp("The source snapshot document ('-' for standard input).", valueName: "file"))
    var from: String

    @Option(name: .long, help: ArgumentHelp("The target snapshot document ('-' for standard input).", valueName: "file"))
    var to: String

    @Flag(name: .long, help: "Print one JSON document instead of a summary.")
    var json = false

    func validate() throws {
        if from == "-" && to == "-" { throw ValidationError("--from and --to cannot both read standard input") }
    }

    func run() throws {
        try Terminal.reportingFailures {
            let source = try SnapshotFile.load(from)
            let target = try SnapshotFile.load(to)
            let changeset = StagedChangeset(source: source, target: target)
            if json {
                let document: JSONValue = .object([
                    "schemaVersion": .number(JSONNumber(1)),
                    "stages": StageDocument.encode(stages: changeset),
                ])
                Terminal.out(document.serialized() + "\n")
            } else {
                Terminal.out(try StageSummary(changeset: changeset, source: source).text)
            }
        }
    }
}
