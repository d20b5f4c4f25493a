import ArgumentParser
import ListJSON
import ListStore

/// `liststore show --db D --list L [--at V] [--json]`.
struct ShowCommand: ParsableCommand {
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

    func run() throws {
        try Terminal.reportingFailures {
            let store = try store.existingStore()
            let snapshot = try StoreFailure.mapping { try store.snapshot(of: list.list, at: at) }
            if json {
                var out: [UInt8] = []
                out.reserveCapacity(snapshot.elementCount * 32)
                out.append(contentsOf: "{\"digest\":".utf8)
                JSONValue.string(snapshot.digest.hex).serialize(into: &out)
                out.append(contentsOf: ",\"list\":".utf8)
                JSONValue.string(snapshot.list).serialize(into: &out)
                out.append(contentsOf: ",\"schemaVersion\":1,\"sections\":[".utf8)
                for (s, section) in snapshot.sections.enumerated() {
                    if s > 0 { out.append(UInt8(ascii: ",")) }
                    out.append(contentsOf: "{\"content\":".utf8)
                    out.append(contentsOf: section.model.content)
                    out.append(contentsOf: ",\"elements\":[".utf8)
                    for (e, element) in section.elements.enumerated() {
                        if e > 0 { out.append(UInt8(ascii: ",")) }
                        out.append(contentsOf: "{\"content\":".utf8)
                        out.append(contentsOf: element.content)
                        out.append(contentsOf: ",\"id\":".utf8)
                        JSONValue.string(element.id).serialize(into: &out)
                        out.append(UInt8(ascii: "}"))
                    }
                    out.append(contentsOf: "],\"id\":".utf8)
                    JSONValue.string(section.model.id).serialize(into: &out)
                    out.append(UInt8(ascii: "}"))
                }
                out.append(contentsOf: "],\"version\":\(snapshot.version)}\n".utf8)
                Terminal.out(String(decoding: out, as: UTF8.self))
                return
            }
            var text = "'\(snapshot.list)' version \(snapshot.version): \(StageSummary.plural(snapshot.sections.count, "section")), "
                + "\(StageSummary.plural(snapshot.elementCount, "element")), digest \(snapshot.digest.hex)\n"
            for (s, section) in snapshot.sections.enumerated() {
                text += "\n[\(s)] \(Output.id(section.model.id))  \(StageSummary.content(String(decoding: section.model.content, as: UTF8.self)))\n"
                var rows: [[String]] = []
                for (e, element) in section.elements.enumerated() {
                    rows.append(["  \(e)", Output.id(element.id), StageSummary.content(String(decoding: element.content, as: UTF8.self))])
                }
                if !rows.isEmpty {
                    text += Output.table(["  #", "id", "content"], rows)
                }
            }
            Terminal.out(text)
        }
    }
}
