import ArgumentParser
import ListJSON
import ListStore

/// `liststore advance-epoch --db D [--json]`.
struct AdvanceEpochCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "advance-epoch",
        abstract: "Tell followers and replicas that a store was restored from a backup.",
        discussion: """
            Run it once after restoring a store from a backup (a file copied back, a database \
            restored from a dump) or after failing a PostgreSQL database over to a standby that \
            may have lagged: the store may have lost commits and pushes that followers and \
            replicas saw. It bumps the store's epoch and gives it a new client id. Followers and \
            replicas of the old epoch then resync by diff on their next pull, and replicas push \
            again every local change the restored store has no record of; the store's own \
            replica lists push their changes under the new client id. Nothing else changes: the \
            lists, their versions and their journals stay as restored.

            Output: 'store.liststore: epoch 3 (store 1f0c…)'. --json prints \
            {"schemaVersion":1,"store":…,"epoch":…,"client":…}.

            \(ExitStatus.helpText)
            """
    )

    @OptionGroup var store: StoreOptions

    @Flag(name: .long, help: "Print one JSON document instead of a line.")
    var json = false

    func run() async throws {
        try await Terminal.reportingFailures {
            let store = try await store.engine(existing: true)
            let (identity, client) = try await store.call { engine in
                let identity = try await engine.advanceEpoch()
                return (identity, try await engine.clientID())
            }
            if json {
                let document = JSONValue.object([
                    "schemaVersion": 1, "store": .string(identity.uuid), "epoch": JSONValue(identity.epoch), "client": .string(client),
                ])
                Terminal.out(document.serialized() + "\n")
            } else {
                Terminal.out("\(Output.printable(store.engine.location)): epoch \(identity.epoch) (store \(identity.uuid))\n")
            }
        }
    }
}
