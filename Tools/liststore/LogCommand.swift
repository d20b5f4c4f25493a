import ArgumentParser
import ListJSON
import ListStoreWire
import ListStore
import ListStorePostgres

/// `liststore log --db D --list L [--since V] [--limit N] [--json]`.
struct LogCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log",
        abstract: "Print a list's journal entries after a version.",
        discussion: """
            --json prints {"schemaVersion":1,"list":…,"commits":[{"version":…,"parentVersion":…,\
            "digest":…,"committedAt":…,"author":…,"message":…,"sections":…,"elements":…,"stages":[…]}],\
            "hasMore":…} (what 'liststore serve' answers for the journal); the \
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

    func run() async throws {
        try await Terminal.reportingFailures {
            let store = try await store.engine(existing: true)
            let (name, since, limit) = (list.list, since, limit)
            let page = try await store.call { try await $0.journal(of: name, after: since, limit: limit, maxBytes: .max) }
            if json {
                Terminal.out(String(decoding: WireDocument.journal(page, list: list.list), as: UTF8.self) + "\n")
                return
            }
            guard !page.entries.isEmpty else {
                Terminal.out("\(Output.quoted(list.list)): no journal entries\(since.map { " after version \($0)" } ?? "").\n")
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
                text += "… more entries follow: liststore log --db \(PostgresStore.Configuration.redacted(try self.store.location())) --list \(list.list) --since \(last.version)\n"
            }
            Terminal.out(text)
        }
    }
}
