import ArgumentParser
import ListStore
import ListSync

/// `liststore status --db R [--list L] [--json]`.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show where a replica's lists stand: source, confirmed version, local changes, conflicts.",
        discussion: """
            For each replica list of the store (or only --list): the source list and store it \
            follows, the confirmed version (the source version whose state the replica last \
            pulled), the replica's own head version, its local changes pending (not pushed yet) and \
            pushed (merged by the source, not yet confirmed by a pull), and the conflicts the \
            source answered the last push with. People get a table, then the conflicts of each \
            list that has some; a store without replica lists says so.

            --json prints {"schemaVersion":1,"replicas":[{"list":…,"client":…,"source":{"store":…,\
            "epoch":…,"list":…},"confirmedVersion":…,"confirmedDigest":…,"headVersion":…,\
            "pending":…,"pushed":…,"lastConflicts":[…]}]} ("client": the id the store pushes its \
            changes under). A --list that does not exist or is not a replica exits with 65.

            \(ExitStatus.helpText)
            """
    )

    @OptionGroup var store: StoreOptions

    @Option(name: .long, help: ArgumentHelp("Only this list.", valueName: "name"))
    var list: String?

    @Option(name: .long, help: ArgumentHelp("The replica set of this pattern (as pull --lists made it).", valueName: "pattern"))
    var lists: String?

    @Flag(name: .long, help: "Print one JSON document instead of a table.")
    var json = false

    func validate() throws {
        if list != nil && lists != nil { throw ValidationError("--list and --lists do not go together: one list, or a set of them") }
        if let lists, (try? ListPattern(lists))?.claimNames.isEmpty != true { throw ValidationError("--lists is not a pattern of list names: \(lists)") }
    }

    func run() async throws {
        try await Terminal.reportingFailures {
            let store = try await store.engine(existing: true)
            if let lists { return try await ReplicaSetWork.status(store, lists: lists, json: json) }
            let location = store.engine.location
            let statuses: [ReplicaStatus] = try await store.call { [list] engine in
                if let list {
                    guard let status = try await engine.replicaStatus(of: list) else {
                        throw CommandFailure(
                            "list \(Output.quoted(list)) of \(Output.quoted(location)) is not a replica", status: ExitStatus.invalidData)
                    }
                    return [status]
                }
                var statuses: [ReplicaStatus] = []
                for summary in try await engine.lists() {
                    if let status = try await engine.replicaStatus(of: summary.name) { statuses.append(status) }
                }
                return statuses
            }
            if json {
                Terminal.out(String(decoding: ReplicaDocument.replicaStatus(statuses), as: UTF8.self) + "\n")
                return
            }
            guard !statuses.isEmpty else {
                Terminal.out("No replica lists in \(Output.quoted(location)).\n")
                return
            }
            var text = Output.table(
                ["list", "source list", "source store", "confirmed", "head", "pending", "pushed", "conflicts"],
                statuses.map { status in
                    [
                        status.list, status.source.list, "\(status.source.store.uuid) (epoch \(status.source.store.epoch))",
                        "\(status.source.version)", "\(status.headVersion)", "\(status.pending)", "\(status.pushed)",
                        "\(status.lastConflicts.count)",
                    ]
                })
            for status in statuses where !status.lastConflicts.isEmpty {
                text += "\n\(Output.quoted(status.list)): the last push was answered with "
                    + "\(StageSummary.plural(status.lastConflicts.count, "conflict")):\n" + ConflictSummary.lines(status.lastConflicts)
            }
            Terminal.out(text)
        }
    }
}
