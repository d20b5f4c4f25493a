import ArgumentParser
import ListJSON
import ListStoreWire
import ListStore

/// `liststore lists --db D [--json]`.
struct ListsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lists",
        abstract: "Print the lists of a store with their head version, counts and digest.",
        discussion: """
            --json prints {"schemaVersion":1,"lists":[{"name":…,"version":…,"sections":…,"elements":…,\
            "digest":…,"baseVersion":…}]}.

            \(ExitStatus.helpText)
            """
    )

    @OptionGroup var store: StoreOptions

    @Flag(name: .long, help: "Print one JSON document instead of a table.")
    var json = false

    func run() async throws {
        try await Terminal.reportingFailures {
            let store = try await store.engine(existing: true)
            let lists = try await store.call { try await $0.lists() }
            if json {
                Terminal.out(String(decoding: WireDocument.lists(lists), as: UTF8.self) + "\n")
                return
            }
            guard !lists.isEmpty else {
                Terminal.out("No lists yet.\n")
                return
            }
            Terminal.out(Output.table(
                ["list", "version", "sections", "elements", "digest"],
                lists.map { [$0.name, "\($0.version)", "\($0.sectionCount)", "\($0.elementCount)", $0.digest.hex] }))
        }
    }
}
