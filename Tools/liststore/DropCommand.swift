import ArgumentParser
import ListJSON
import ListStore

/// `liststore drop --db D --list L [--json]`.
struct DropCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "drop",
        abstract: "Delete a list.",
        discussion: """
            Deletes the list with its journal, consumers, recorded pushes and replica position, in one \
            transaction; the store feed (GET /v1/changes) tells its followers. The name may then be used \
            again by a new list, whose versions start at 1. --json prints {"schemaVersion":1,\
            "deleted":true,"list":…,"version":…}, the version the list had. A replica list with local \
            changes its source does not hold yet is refused (exit 65, naming how many) unless \
            --discard-pending.

            \(ExitStatus.helpText)
            """
    )

    @OptionGroup var store: StoreOptions
    @OptionGroup var list: ListOption

    @Flag(name: .long, help: "Print one JSON document instead of a summary.")
    var json = false

    @Flag(name: .long, help: "Delete a replica list even with local changes its source does not hold yet (they are lost).")
    var discardPending = false

    func run() async throws {
        try await Terminal.reportingFailures {
            let store = try await store.engine(existing: true)
            let name = list.list
            let discard = discardPending
            let version = try await store.call { try await $0.deleteList(name, discardingPending: discard) }
            if json {
                Output.json(["deleted": .bool(true), "list": .string(name), "version": JSONValue(version)])
                return
            }
            Terminal.out("\(Output.quoted(name)): deleted (it was at version \(version)).\n")
        }
    }
}
