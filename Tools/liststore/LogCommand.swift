import ArgumentParser
import ListJSON
import ListStore

/// `liststore log --db D --list L [--since V] [--limit N] [--json]`.
struct LogCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log",
        abstract: "Print a list's journal entries after a version.",
        discussion: """
            --json prints {"schemaVersion":1,"list":…,"commits":[{"version":…,"parentVersion":…,\
            "digest":…,"committedAt":…,"author":…,"message":…,"stages":[…]}],"hasMore":…}; the \
            stages are the stored stage objects, to be applied in order.

            \(ExitStatus.helpText)
            """
    )

    @OptionGroup var store: StoreOptions
    @OptionGroup var list: ListOption

    @Option(name: .long, help: ArgumentHelp("Show entries after this version (default: from the oldest).", valueName: "version"))
    var since: Int?

    @Option(name: .long, help: ArgumentHelp("At most this many entries (default 100).", valueName: "count"))
    var limit: Int = 100

    @Flag(name: .long, help: "Print one JSON document instead of a table.")
    var json = false

    func validate() throws {
        if let since, since < 0 { throw ValidationError("--since must be 0 or more") }
        if limit < 1 { throw ValidationError("--limit must be 1 or more") }
    }

    func run() throws {
        try Terminal.reportingFailures {
            let store = try store.existingStore()
            let page = try StoreFailure.mapping { try store.journal(of: list.list, after: since, limit: limit) }
            if json {
                var out = Array("{\"commits\":[".utf8)
                for (k, entry) in page.entries.enumerated() {
                    if k > 0 { out.append(UInt8(ascii: ",")) }
                    var object = JSONObject()
                    if let author = entry.author { object["author"] = .string(author) }
                    object["committedAt"] = .string(entry.committedAt)
                    object["digest"] = .string(entry.digest.hex)
                    if let message = entry.message { object["message"] = .string(message) }
                    object["parentVersion"] = JSONValue(entry.parentVersion)
                    object["version"] = JSONValue(entry.version)
                    // Splice the stored stages in, keeping the keys in order: "stages" < "version".
                    var text = JSONValue.object(object).serializedBytes()
                    let marker = Array(",\"version\":".utf8)
                    let at = text.indices.reversed().first { text[$0...].starts(with: marker) } ?? text.count - 1
                    text.insert(contentsOf: Array(",\"stages\":".utf8) + entry.stagesJSON, at: at)
                    out.append(contentsOf: text)
                }
                out.append(contentsOf: "],\"hasMore\":\(page.hasMore),\"list\":".utf8)
                JSONValue.string(list.list).serialize(into: &out)
                out.append(contentsOf: ",\"schemaVersion\":1}\n".utf8)
                Terminal.out(String(decoding: out, as: UTF8.self))
                return
            }
            guard !page.entries.isEmpty else {
                Terminal.out("'\(list.list)': no journal entries\(since.map { " after version \($0)" } ?? "").\n")
                return
            }
            var rows: [[String]] = []
            for entry in page.entries {
                rows.append([
                    "\(entry.version)", "\(entry.parentVersion)", entry.committedAt, Output.short(entry.digest),
                    "\(entry.elementCount)", entry.author ?? "-", entry.message ?? "",
                ])
            }
            var text = Output.table(["version", "parent", "committed at", "digest", "elements", "author", "message"], rows)
            if page.hasMore, let last = page.entries.last {
                text += "… more entries follow: liststore log --db \(self.store.db) --list \(list.list) --since \(last.version)\n"
            }
            Terminal.out(text)
        }
    }
}
