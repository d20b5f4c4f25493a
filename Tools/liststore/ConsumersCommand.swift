import ArgumentParser
import ListJSON
import ListStore

/// `liststore consumers --db D --list L [--register NAME [--at V]] [--unregister NAME] [--json]`.
struct ConsumersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "consumers",
        abstract: "List, register or unregister the consumers of a list.",
        discussion: """
            A registered consumer holds 'prune' back: the journal after the version it last \
            acknowledged is kept (unless prune is forced). 'pull --as NAME' registers and acknowledges \
            on its own. --register NAME registers a consumer at --at V (default: the oldest retained \
            version); registering a name again moves its version. --unregister NAME removes one (64 \
            when no consumer has that name). Without either, the consumers are listed. --json prints \
            {"schemaVersion":1,"list":…,"consumers":[{"name":…,"version":…,"registeredAt":…,\
            "acknowledgedAt":…}]}, after the change when there is one.

            \(ExitStatus.helpText)
            """
    )

    @OptionGroup var store: StoreOptions
    @OptionGroup var list: ListOption

    @Option(name: .long, help: ArgumentHelp("Register a consumer with this name.", valueName: "name"))
    var register: String?

    @Option(name: .long, help: ArgumentHelp("The version the new consumer has (with --register).", valueName: "version"))
    var at: Int?

    @Option(name: .long, help: ArgumentHelp("Remove the consumer with this name.", valueName: "name"))
    var unregister: String?

    @Flag(name: .long, help: "Print one JSON document instead of a table.")
    var json = false

    func validate() throws {
        if register != nil && unregister != nil { throw ValidationError("give either --register or --unregister, not both") }
        if at != nil && register == nil { throw ValidationError("--at needs --register") }
        if let at, at < 0 { throw ValidationError("--at must be 0 or more") }
    }

    func run() async throws {
        try await Terminal.reportingFailures {
            let store = try await store.engine(existing: true)
            let (list, at) = (list.list, at)
            var note: String?
            if let register {
                let info = try await store.call { try await $0.registerConsumer(register, of: list, at: at) }
                note = "\(Output.quoted(list)): consumer \(Output.quoted(info.name)) registered at version \(info.version); pruning keeps the journal after it.\n"
            } else if let unregister {
                guard try await store.call({ try await $0.unregisterConsumer(unregister, of: list) }) else {
                    throw CommandFailure("no consumer named \(Output.quoted(unregister)) is registered on list \(Output.quoted(list))", status: ExitStatus.usage)
                }
                note = "\(Output.quoted(list)): consumer \(Output.quoted(unregister)) unregistered.\n"
            }
            if !json, let note {
                Terminal.out(note)
                return
            }
            let consumers = try await store.call { try await $0.consumers(of: list) }
            if json {
                Output.json([
                    "list": .string(list),
                    "consumers": .array(consumers.map { consumer in
                        .object([
                            "name": .string(consumer.name), "version": JSONValue(consumer.version),
                            "registeredAt": .string(consumer.registeredAt), "acknowledgedAt": .string(consumer.acknowledgedAt),
                        ])
                    }),
                ])
                return
            }
            guard !consumers.isEmpty else {
                Terminal.out("\(Output.quoted(list)): no consumers registered.\n")
                return
            }
            Terminal.out(Output.table(
                ["consumer", "version", "registered at", "acknowledged at"],
                consumers.map { [$0.name, "\($0.version)", $0.registeredAt, $0.acknowledgedAt] }))
        }
    }
}
