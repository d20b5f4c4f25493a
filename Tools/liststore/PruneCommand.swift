import ArgumentParser
import ListJSON
import ListStore

/// `liststore prune --db D --list L (--keep-last N | --before V) [--force] [--json]`.
struct PruneCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prune",
        abstract: "Drop a list's old journal entries.",
        discussion: """
            Give exactly one of --keep-last N (keep the last N entries) and --before V (V becomes the \
            oldest version kept). Every version from the new base to the head can still be shown and \
            diffed. Pruning stops at the oldest version a registered consumer (see 'consumers' and \
            'pull --as') has not acknowledged past, unless --force is given; a replica whose version \
            was pruned resyncs by diff on its next pull. The record of pushes merged up to the new base \
            is folded with it: each client's rows but its latest become one, which still answers a \
            retry of any of them. Blobs that only the removed versions referred to are released, \
            and uploads to the list that sent nothing for a week are given up. --json prints \
            {"schemaVersion":1,"list":…,"previousBase":…,"base":…,"head":…,"removed":…,\
            "removedPushRecords":…,"releasedBlobs":…,"abandonedUploads":…,"heldBy":[…]}.

            \(ExitStatus.helpText)
            """
    )

    @OptionGroup var store: StoreOptions
    @OptionGroup var list: ListOption

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Keep the last N journal entries.", valueName: "count"))
    var keepLast: Int?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Drop the history before this version.", valueName: "version"))
    var before: Int?

    @Flag(name: .long, help: "Prune past the versions that registered consumers have not acknowledged.")
    var force = false

    @Flag(name: .long, help: "Print one JSON document instead of a summary.")
    var json = false

    func validate() throws {
        switch (keepLast, before) {
        case (nil, nil): throw ValidationError("give --keep-last N or --before V")
        case (.some, .some): throw ValidationError("give either --keep-last or --before, not both")
        case (let count?, nil) where count < 0: throw ValidationError("--keep-last must be 0 or more")
        case (nil, let version?) where version < 0: throw ValidationError("--before must be 0 or more")
        default: break
        }
    }

    func run() async throws {
        try await Terminal.reportingFailures {
            let store = try await store.engine(existing: true)
            let rule: PruneRule = keepLast.map { .keepLast($0) } ?? .before(before ?? 0)
            let (name, force) = (list.list, force)
            let result = try await store.call { try await $0.prune(name, rule, force: force) }
            if json {
                Output.json([
                    "list": .string(result.list), "previousBase": JSONValue(result.previousBase),
                    "base": JSONValue(result.base), "head": JSONValue(result.head),
                    "removed": JSONValue(result.removedEntries), "removedPushRecords": JSONValue(result.removedPushRecords),
                    "releasedBlobs": JSONValue(result.releasedBlobs), "abandonedUploads": JSONValue(result.abandonedUploads),
                    "heldBy": .array(result.heldBy.map { .string($0) }),
                ])
                return
            }
            var text = result.removedEntries == 0
                ? "\(Output.quoted(result.list)): nothing pruned; "
                : "\(Output.quoted(result.list)): \(result.removedEntries) journal \(result.removedEntries == 1 ? "entry" : "entries") removed; "
            text += result.base == result.previousBase
                ? "the history still starts at version \(result.base) (head \(result.head)).\n"
                : "the history now starts at version \(result.base) (was \(result.previousBase); head \(result.head)).\n"
            if result.removedPushRecords > 0 {
                text += "\(result.removedPushRecords) \(result.removedPushRecords == 1 ? "row" : "rows") of the record of pushes folded away.\n"
            }
            if result.releasedBlobs > 0 {
                text += "\(result.releasedBlobs) \(result.releasedBlobs == 1 ? "blob" : "blobs") released: only the removed versions referred to \(result.releasedBlobs == 1 ? "it" : "them").\n"
            }
            if result.abandonedUploads > 0 {
                text += "\(result.abandonedUploads) \(result.abandonedUploads == 1 ? "upload" : "uploads") given up: nothing sent for a week.\n"
            }
            if !result.heldBy.isEmpty {
                text += "Held back by \(result.heldBy.count == 1 ? "consumer" : "consumers") "
                    + result.heldBy.map { "\(Output.quoted($0))" }.joined(separator: ", ") + " (--force prunes past them).\n"
            }
            Terminal.out(text)
        }
    }
}
