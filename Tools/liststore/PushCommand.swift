import ArgumentParser
import ListStore
import ListSync

/// `liststore push (--db SRC | --from URL [--token T] [--max-answer-mib N]) --list L --replica R [--json]`.
struct PushCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract: "Send a replica's local changes to its source, which merges them.",
        discussion: """
            A commit to a replica list is a local change: it is committed to the replica at once and \
            queued, pending, in the replica's outbox. push sends the pending changes, oldest first, \
            each with the replica store's client id and its sequence number; the source rebases \
            each onto its head (by identity: moves, inserts and edits land where they belong among \
            what others changed meanwhile), commits the result as a version of its own, and records \
            the change's id in the same transaction. A change whose answer was lost on the way is \
            sent again by the next push and answered from the source's record ("already merged"): \
            every change is applied exactly once. The changes stay in the outbox until a pull \
            confirms them ('liststore sync' pushes, then pulls). What a merge could not honour as \
            written (an edit of an item the source deleted, a content both sides changed: mine \
            wins) is reported as a conflict, never dropped silently; 'liststore status' shows the \
            last push's conflicts.

            The source is given as for 'pull' (--db, or --from with --token and --max-answer-mib) \
            and checked first. The replica must exist and the list be a replica (made by 'pull'). \
            A replica pushes only to its own source: a store that is not the one its pulls came \
            from (another server, another file) is refused (exit 65) and nothing is sent. A server \
            that cannot be reached or breaks off leaves the unanswered changes pending (exit 74); \
            the next push sends them.

            A source records each change with its content's fingerprint. When it has recorded the \
            replica's client id and sequence number for another change (the replica file was \
            copied, or restored from a backup, and the other copy pushed first), or the number \
            does not follow the client's last one there, the replica takes a new client id for \
            the changes the source has not answered and pushes them again under it: the line then \
            says 'took a new client id'. Nothing is lost or applied twice. A copy of a replica \
            file (another device and inode) takes a new client id by itself before its first \
            local change.

            Output: 'copy.liststore: inbox: 2 local changes pushed (source version 7), 1 \
            conflict' (or ': nothing to push'), then one line per conflict. --json prints \
            {"schemaVersion":1,"list":…,"pushed":…,"duplicates":…,"version":…,"conflicts":[…],\
            "newClientIDs":…} ("duplicates": changes the source had merged before, answered from \
            its record; "newClientIDs": how often the replica took a new client id; \
            "version": the source version holding the last change pushed, null when there was \
            nothing to push; "conflicts": {"kind","id","section"?,"key"?,"mine"?,"theirs"?} with \
            kinds deleted, sectionDeleted, removedWithSection, contentConflict, listDeleted; \
            "unknownSection": true on a sectionDeleted or deleted whose section the list never \
            had).

            \(ExitStatus.helpText)
            """
    )

    @OptionGroup var options: ReplicaOptions

    @Flag(name: .long, help: "Print one JSON document instead of a summary.")
    var json = false

    func run() async throws {
        try await Terminal.reportingFailures {
            if options.lists != nil { return try await ReplicaSetWork.push(options, json: json) }
            let reading = try await options.connect().listSource
            let replicaStore = try await options.replicaStore(existing: true)
            let list = options.listName
            guard try await replicaStore.call({ try await $0.replicaStatus(of: list) }) != nil else {
                throw CommandFailure(
                    "list \(Output.quoted(options.listName)) of \(Output.quoted(options.replicaName)) is not a replica ('liststore pull' makes one)",
                    status: ExitStatus.invalidData)
            }
            let (json, name) = (json, options.replicaName)
            try await Self.push(into: replicaStore.engine, list: list, from: reading) { result in
                Terminal.out(json ? String(decoding: ReplicaDocument.pushResult(result), as: UTF8.self) + "\n" : Self.lines(result, replica: name))
            }
        }
    }

    /// Pushes the local changes of the replica `list` in `replicaStore` to `source` and reports the result.
    private static func push(
        into replicaStore: some ReplicaStore, list: String, from source: any ListSource,
        report: @escaping @Sendable (ReplicaPushResult) -> Void
    ) async throws {
        let target = Replica(store: replicaStore, list: list)
        try await ReplicaWork.run(following: false) { report(try await target.push(to: source)) }
    }

    /// `copy.liststore: inbox: 2 local changes pushed, 1 already merged (source version 7), 1 conflict`
    /// and a newline, then one line per conflict.
    static func lines(_ result: ReplicaPushResult, replica: String) -> String {
        var text = "\(Output.printable(replica)): \(Output.printable(result.list)): "
        guard let version = result.version else { return text + "nothing to push\n" }
        var parts: [String] = []
        if result.pushed > 0 { parts.append("\(StageSummary.plural(result.pushed, "local change")) pushed") }
        if result.duplicates > 0 { parts.append("\(result.duplicates) already merged") }
        text += parts.joined(separator: ", ") + " (source version \(version))"
        if result.clientIDsTaken > 0 {
            text += ", took a new client id (the source refused its id: a copied or restored replica, or a restored source)"
        }
        if !result.conflicts.isEmpty { text += ", \(StageSummary.plural(result.conflicts.count, "conflict"))" }
        return text + "\n" + ConflictSummary.lines(result.conflicts)
    }
}
