import ArgumentParser
import ListStore

/// `liststore show --db D --list L [--at V] [--json]`.
struct ShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Print a version of a list (default: the head).",
        discussion: """
            --json prints the snapshot document with "list", "version" and "digest" added; it can be \
            fed back to 'commit'.

            \(ExitStatus.helpText)
            """
    )

    @OptionGroup var store: StoreOptions
    @OptionGroup var list: ListOption

    @Option(name: .long, help: ArgumentHelp("The version to show (default: the head).", valueName: "version"))
    var at: Int?

    @Flag(name: .long, help: "Print one JSON document instead of a listing.")
    var json = false

    func validate() throws {
        if let at, at < 0 { throw ValidationError("--at must be 0 or more") }
    }

    func run() async throws {
        try await Terminal.reportingFailures {
            let store = try await store.engine(existing: true)
            let (name, at) = (list.list, at)
            let snapshot = try await store.call { try await $0.snapshot(of: name, at: at) }
            if json {
                Terminal.out(String(decoding: snapshot.documentJSON, as: UTF8.self) + "\n")
                return
            }
            var text = "\(Output.quoted(snapshot.list)) version \(snapshot.version): \(StageSummary.plural(snapshot.sections.count, "section")), "
                + "\(StageSummary.plural(snapshot.elementCount, "element")), digest \(snapshot.digest.hex)\n"
            for (s, section) in snapshot.sections.enumerated() {
                text += "\n[\(s)] \(StageSummary.id(section.model.id))  \(StageSummary.content(String(decoding: section.model.content, as: UTF8.self)))\n"
                var rows: [[String]] = []
                for (e, element) in section.elements.enumerated() {
                    rows.append(["  \(e)", StageSummary.id(element.id), StageSummary.content(String(decoding: element.content, as: UTF8.self))])
                }
                if !rows.isEmpty {
                    text += Output.table(["  #", "id", "content"], rows)
                }
            }
            Terminal.out(text)
        }
    }
}
