import ListStore
import ListSync

/// `pull`, `push`, `sync` and `status` with `--lists P`: a replica set (every list the pattern names)
/// over one cursor, and what they print.
enum ReplicaSetWork {
    /// Pulls the set once, or (`follow`) follows it until SIGINT or SIGTERM; with `pushing`, syncs.
    static func run(_ options: ReplicaOptions, pushing: Bool, follow: Bool, json: Bool) async throws {
        let connected = try await options.connect()
        let replicaStore = try await options.replicaStore(existing: false)
        try await run(options, source: connected, replica: replicaStore.engine, pushing: pushing, follow: follow, json: json)
    }

    private static func run(
        _ options: ReplicaOptions, source connected: ReplicaOptions.Source, replica: some ReplicaStore, pushing: Bool, follow: Bool, json: Bool
    ) async throws {
        let pattern = options.lists ?? "**"
        var set = try ReplicaSet(store: replica, lists: pattern)
        // A list's first sync or resync in pages draws a bar on a terminal.
        let bar = SyncProgressBar()
        set.onProgress = bar.reporter
        let (source, retry, name) = (connected.feedSource, connected.retryPolicy, options.replicaName)
        try await ReplicaWork.run(following: follow) { [set] in
            guard follow else {
                if pushing {
                    let synced = try await set.sync(with: source)
                    bar.finish()
                    Terminal.out(
                        json
                            ? String(decoding: ReplicaDocument.setSyncResult(synced, lists: pattern), as: UTF8.self) + "\n"
                            : pushLines(synced.push, lists: pattern, replica: name) + pullLines(synced.pull, lists: pattern, replica: name))
                } else {
                    let pulled = try await set.pull(from: source)
                    bar.finish()
                    Terminal.out(
                        json
                            ? String(decoding: ReplicaDocument.setPullResult(pulled, lists: pattern), as: UTF8.self) + "\n"
                            : pullLines(pulled, lists: pattern, replica: name))
                }
                return
            }
            try await set.follow(from: source, pushing: pushing, retrying: retry, onEvent: ReplicaWork.announce) { change in
                bar.finish()
                Terminal.out(json ? String(decoding: ReplicaDocument.setChange(change), as: UTF8.self) + "\n" : line(change, replica: name))
            }
        }
    }

    /// Pushes the local changes of every list of the set.
    static func push(_ options: ReplicaOptions, json: Bool) async throws {
        let connected = try await options.connect()
        let replicaStore = try await options.replicaStore(existing: true)
        try await push(options, source: connected, replica: replicaStore.engine, json: json)
    }

    private static func push(_ options: ReplicaOptions, source connected: ReplicaOptions.Source, replica: some ReplicaStore, json: Bool) async throws {
        let pattern = options.lists ?? "**"
        let set = try ReplicaSet(store: replica, lists: pattern)
        let (source, name) = (connected.feedSource, options.replicaName)
        try await ReplicaWork.run(following: false) {
            let pushed = try await set.push(to: source)
            Terminal.out(
                json
                    ? String(decoding: ReplicaDocument.setPushResult(pushed, lists: pattern), as: UTF8.self) + "\n"
                    : pushLines(pushed, lists: pattern, replica: name))
        }
    }

    /// `status --lists P`: the set's position and last conflicts, and each of its replica lists.
    static func status(_ store: EngineStore, lists pattern: String, json: Bool) async throws {
        let (position, statuses) = try await store.call { engine in try await status(engine, lists: pattern) }
        if json {
            Terminal.out(String(decoding: ReplicaDocument.setStatus(position, statuses: statuses, lists: pattern), as: UTF8.self) + "\n")
            return
        }
        var text = "\(Output.printable(pattern)): "
        if let position {
            // A server seals the cursors it gives users: their position only it reads.
            let place = position.place.hasPrefix("s") ? "at a sealed cursor" : "at position \(position.position)"
            text += "\(place) of store \(position.store.uuid) (epoch \(position.store.epoch)), \(StageSummary.plural(statuses.count, "list"))\n"
        } else {
            text += "not pulled yet\n"
        }
        for (list, conflicts) in (position?.lastConflicts ?? [:]).sorted(by: { $0.key < $1.key }) {
            text += "\(Output.quoted(list)) was deleted at the source; \(StageSummary.plural(conflicts.count, "change")) of the replica's were dropped with it:\n"
                + ConflictSummary.lines(conflicts)
        }
        Terminal.out(text)
    }

    private static func status(_ engine: some ReplicaStore, lists pattern: String) async throws -> (ReplicaSetPosition?, [ReplicaStatus]) {
        let set = try ReplicaSet(store: engine, lists: pattern)
        return (try await set.position(), try await set.statuses().map(\.status))
    }

    /// `phone.liststore: users/ana/**: 3 commits applied, created 1 list, deleted 1 list` and a line per
    /// change and conflict.
    static func pullLines(_ result: ReplicaSetPullResult, lists pattern: String, replica: String) -> String {
        var text = "\(Output.printable(replica)): \(Output.printable(pattern)): "
        if result.changes.isEmpty && !result.resynced { return text + "up to date\n" }
        var parts = ["\(StageSummary.plural(result.applied, "commit")) applied"]
        if !result.created.isEmpty { parts.append("created \(StageSummary.plural(result.created.count, "list"))") }
        if !result.deleted.isEmpty { parts.append("deleted \(StageSummary.plural(result.deleted.count, "list"))") }
        if result.resynced, result.reason != .noCursor { parts.append("started over (\(result.reason?.rawValue ?? "unknown reason"))") }
        text += parts.joined(separator: ", ") + "\n"
        for change in result.changes { text += "  " + line(change, replica: nil) }
        return text
    }

    /// One line per list pushed, or `…: nothing to push`.
    static func pushLines(_ results: [ReplicaPushResult], lists pattern: String, replica: String) -> String {
        guard !results.isEmpty else { return "\(Output.printable(replica)): \(Output.printable(pattern)): nothing to push\n" }
        return results.map { PushCommand.lines($0, replica: replica) }.joined()
    }

    /// `users/ana/inbox: applied source version 5`, and the change's conflicts.
    static func line(_ change: ReplicaSetChange, replica: String?) -> String {
        var text = replica.map { Output.printable($0) + ": " } ?? ""
        text += Output.printable(change.list) + ": "
        switch change.kind {
        case .created: text += "created at source version \(change.version ?? 0)"
        case .applied: text += "applied source version \(change.version ?? 0)"
        case .pulled: text += "pulled to source version \(change.version ?? 0)"
        case .pushed: text += "local changes pushed"
        case .deleted: text += "deleted at the source"
        }
        if !change.conflicts.isEmpty {
            text += change.kind == .deleted
                ? ", \(StageSummary.plural(change.conflicts.count, "change")) dropped with it (listDeleted conflicts)"
                : ", \(StageSummary.plural(change.conflicts.count, "conflict"))"
        }
        return text + "\n" + ConflictSummary.lines(change.conflicts)
    }
}
