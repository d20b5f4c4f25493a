import ArgumentParser
import Foundation
import ListDiff
import ListJSON
import ListStore

/// `liststore diff --from A.json --to B.json [--json]`: the staged changeset between two snapshot files;
/// `liststore diff --db D --list L --from-version V [--to-version W] [--json]`: between two versions.
struct DiffCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diff",
        abstract: "Print the staged changeset between two snapshot documents, or two versions of a list.",
        discussion: """
            Each stage is one batch update: removals address the list before the stage, placements \
            the list after it, updates stand in stages of their own. With --db, the changeset is one \
            minimal changeset from --from-version to --to-version (default: the head), however many \
            commits lie between. --json prints one document {"schemaVersion":1,"stages":[…]} (with \
            --db also "list", "fromVersion", "toVersion").

            \(ExitStatus.helpText)
            """
    )

    @Option(name: .long, help: ArgumentHelp("The source snapshot document ('-' for standard input).", valueName: "file"))
    var from: String?

    @Option(name: .long, help: ArgumentHelp("The target snapshot document ('-' for standard input).", valueName: "file"))
    var to: String?

    @Option(name: .long, help: ArgumentHelp("A store, to diff two versions of a list.", valueName: "path"))
    var db: String?

    @Option(name: .long, help: ArgumentHelp("The list (with --db).", valueName: "name"))
    var list: String?

    @Option(name: .long, help: ArgumentHelp("The source version (with --db).", valueName: "version"))
    var fromVersion: Int?

    @Option(name: .long, help: ArgumentHelp("The target version (with --db; default: the head).", valueName: "version"))
    var toVersion: Int?

    @Flag(name: .long, help: "Print one JSON document instead of a summary.")
    var json = false

    /// `--db`, or `LISTSTORE_DB` when the versions of a list are asked for.
    private var store: String? {
        db ?? (list != nil || fromVersion != nil ? ProcessInfo.processInfo.environment["LISTSTORE_DB"].flatMap { $0.isEmpty ? nil : $0 } : nil)
    }

    func validate() throws {
        if store != nil {
            guard from == nil, to == nil else { throw ValidationError("use either --db or --from/--to, not both") }
            guard list != nil else { throw ValidationError("--db needs --list") }
            guard let fromVersion else { throw ValidationError("--db needs --from-version") }
            if fromVersion < 0 || (toVersion ?? 0) < 0 { throw ValidationError("versions must be 0 or more") }
        } else {
            guard list == nil, fromVersion == nil, toVersion == nil else {
                throw ValidationError("--list, --from-version and --to-version need --db")
            }
            guard from != nil, to != nil else { throw ValidationError("give --from and --to, or --db, --list and --from-version") }
            if from == "-" && to == "-" { throw ValidationError("--from and --to cannot both read standard input") }
        }
    }

    func run() async throws {
        try await Terminal.reportingFailures {
            if let db = store, let list, let fromVersion {
                let store = try await StoreOptions(db: db).engine(existing: true)
                let toVersion = toVersion
                let (from, to, changeset) = try await store.call { try await $0.changeset(of: list, from: fromVersion, to: toVersion) }
                if json {
                    let out = JSONWriter.object { w in
                        w.member("fromVersion", from.version)
                        w.member("list", list)
                        w.schemaVersion()
                        w.key("stages")
                        w.stages(changeset.stages)
                        w.member("toVersion", to.version)
                    }
                    Terminal.out(String(decoding: out, as: UTF8.self) + "\n")
                } else {
                    Terminal.out("\(Output.quoted(list)) version \(from.version) → \(to.version): ")
                    Terminal.out(try StageSummary(changeset: changeset, source: from.sections).text)
                }
                return
            }
            let source: [JSONSection] = try SnapshotFile.load(from ?? "-")
            let target: [JSONSection] = try SnapshotFile.load(to ?? "-")
            let changeset = StagedChangeset(source: source, target: target)
            if json {
                let out = JSONWriter.object { w in
                    w.schemaVersion()
                    w.key("stages")
                    w.stages(changeset.stages)
                }
                Terminal.out(String(decoding: out, as: UTF8.self) + "\n")
            } else {
                Terminal.out(try StageSummary(changeset: changeset, source: source).text)
            }
        }
    }
}

extension StoreOptions {
    init(db: String) {
        self.init()
        self.db = db
    }
}
