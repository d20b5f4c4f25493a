import ArgumentParser
import ListStore
import ListSync

/// `liststore pull (--db SRC | --from URL [--token T] [--max-answer-mib N]) --list L --replica R [--json] [--follow] [--catch-up] [--as NAME]`.
struct PullCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pull",
        abstract: "Bring a replica store up to date with a list of a source store or server.",
        discussion: """
            The replica (created by the first pull) gets the source's new commits, one transaction \
            each, with the source version it now equals recorded in the same transaction: a pull \
            that is interrupted, even by kill -9, resumes where it stopped. When the journal cannot \
            do it (the history was pruned past the replica, the source was reset, the replica was \
            changed), the replica resyncs by diff against the source's head. The source is checked \
            first: a missing or bad source, or an unknown list, creates no replica.

            --from URL pulls from a server ('liststore serve') over HTTP, with --token (or the \
            LISTSTORE_TOKEN environment variable) when it needs one. A connection that fails, times \
            out or breaks mid-answer leaves the replica at its last complete version (exit 74); the \
            next pull resumes. A refused token exits with 77. Each request must be answered \
            completely within 120 s (a long poll gets its wait on top) and fails after 30 s without \
            a byte; an answer larger than --max-answer-mib (default 512) fails the pull as soon as \
            it passes the limit (exit 74). Redirects are followed only within the server's origin \
            (scheme, host and port), so the token never goes elsewhere; a redirect to another \
            origin fails the pull (exit 74). A URL with a user name or password, a query or a \
            fragment is refused (exit 64): give the token with --token.

            A pull never replaces a list's own history without being told: when the replica list \
            exists but is not a replica (it has versions of its own: perhaps --db and --replica \
            were swapped) or is a replica of another store, the pull is refused (exit 65) and \
            changes nothing. --replace makes it a replica of this source: it resyncs by diff, and \
            local changes still pending go to the new source.

            --as NAME registers NAME as a consumer of the list on the source (unless it already is) \
            and acknowledges each pull, so that 'prune' keeps what the replica has not applied yet. \
            --catch-up applies one minimal changeset to the head instead of each commit.

            --follow keeps pulling as commits land until SIGINT or SIGTERM (then it exits with 0; a \
            second signal ends it at once); it prints a line for the first pull and for each pull \
            that applied something. With --from it survives the server going away for a while (a \
            restart or a deploy): when the server cannot be reached, times out, breaks off an answer \
            or answers 502/503/504, it says 'lost the server (…), retrying in N s' on stderr once \
            per outage, tries again after 0.5 s, then after waits doubling up to 15 s (less a random \
            part of up to 20%), and says 'reconnected' once a pull succeeds. Errors that retrying \
            will not heal still end it with their exit code: a refused token (77), an unknown \
            list (65), an answer it cannot read or that is too large, a redirect to another \
            origin (74). --json prints {"schemaVersion":1,"list":…,"version":…,\
            "applied":…,"resynced":…,"reason":…} ("version" is the source version the replica \
            equals; "reason" is null unless it resynced: pruned, differentStore, epochChanged, \
            digestMismatch, aheadOfSource, noCursor, tooLarge); with --follow, one such document \
            per line.

            A resync copies the source's head in pages of at most 4 MiB, each kept in the replica \
            store as it lands; the replica becomes the new version in one transaction when the last \
            has landed. An interrupted resync goes on from its last page at the next pull (or starts \
            again at the head when the source no longer has the version it was copying, and says \
            so); "pages" in the document says how it went. While pages land, a progress bar is \
            drawn on stderr when it is a terminal (with --lists, for each list copied in pages).

            A replica with local changes (commits to it, pending until 'liststore push' or 'sync' \
            sends them) keeps them: the pull takes the changes the source now holds out of the \
            outbox, rebases the rest onto the source's new head and commits that as one local \
            version. The line then ends with ', 1 local change confirmed, 2 local changes rebased \
            on top', and the document adds "pending" (local changes still pending), \
            "confirmedChanges" (local changes the source's head now holds) and "conflicts" (those of \
            pushes whose answer was lost, learned from the source's record; a line each for people).

            \(ExitStatus.helpText)
            """
    )

    @OptionGroup var options: ReplicaOptions

    @Flag(name: .long, help: "Let the pull turn a list with a history of its own, or a replica of another store, into a replica of this source.")
    var replace = false

    @Option(name: .customLong("as"), help: ArgumentHelp("Register and acknowledge this consumer name on the source.", valueName: "name"))
    var consumer: String?

    @Flag(name: .long, help: "Keep pulling as commits land, until SIGINT or SIGTERM.")
    var follow = false

    @Flag(name: .long, help: "Apply one minimal changeset to the head instead of each commit.")
    var catchUp = false

    @Flag(name: .long, help: "Print one JSON document per pull instead of a line.")
    var json = false

    func validate() throws {
        if options.lists != nil, catchUp || consumer != nil || replace {
            throw ValidationError("--catch-up, --as and --replace go with --list, not --lists")
        }
    }

    func run() async throws {
        try await Terminal.reportingFailures {
            if options.lists != nil { return try await ReplicaSetWork.run(options, pushing: false, follow: follow, json: json) }
            // The source first: nothing is created when it is missing, not a store, unreachable,
            // refuses the token, or lacks the list.
            let connected = try await options.connect()
            let replicaStore = try await options.replicaStore(existing: false)
            if let consumer, case .store(let sourceStore) = connected {
                try await Self.register(consumer, of: options.listName, on: EngineStore(sourceStore), replica: replicaStore)
            }
            try await pull(from: connected, into: replicaStore.engine)
        }
    }

    /// Pulls (or follows) `source` into `replicaStore`, reporting each pull.
    private func pull(from source: ReplicaOptions.Source, into replicaStore: some ReplicaStore) async throws {
        var pullOptions = ReplicaPullOptions(catchUp: catchUp, consumer: consumer, replacing: replace)
        // A first sync or a resync in pages draws a bar on a terminal.
        let bar = SyncProgressBar()
        pullOptions.onProgress = bar.reporter
        let pulling = pullOptions
        let target = Replica(store: replicaStore, list: options.listName)
        let (json, follow, catchUp, name) = (json, follow, catchUp, options.replicaName)
        let report: @Sendable (ReplicaPullResult) -> Void = { result in
            bar.finish()
            Terminal.out(json ? Self.document(result) : Self.line(result, replica: name, catchUp: catchUp))
        }
        let (reading, retry) = (source.listSource, source.retryPolicy)
        try await ReplicaWork.run(following: follow) {
            if follow {
                try await ReplicaWork.follow(target, from: reading, retrying: retry, options: pulling, pushing: false) { report($0) }
            } else {
                report(try await target.pull(from: reading, options: pulling))
            }
        }
    }

    /// Registers `name` on the source unless it is registered: at the version the replica already
    /// equals when it follows this source, otherwise at the oldest retained version. (The pull's
    /// acknowledgement registers it too, but only afterwards: registering first keeps a prune that
    /// runs meanwhile from dropping what the pull is about to apply.)
    private static func register(_ name: String, of list: String, on source: EngineStore, replica: EngineStore) async throws {
        guard try await !source.call({ try await $0.consumers(of: list) }).contains(where: { $0.name == name }) else { return }
        var version: Int?
        let followed = try await replica.call { engine -> ReplicaSource? in
            do {
                return try await engine.replicaSource(of: list)
            } catch StoreError.Code.storeNotFound {
                return nil
            }
        }
        if let position = followed, position.list == list,
           position.store == (try await source.call { try await $0.identity() })
        {
            let summary = try await source.call { try await $0.summary(of: list) }
            if (summary.baseVersion...summary.version).contains(position.version) { version = position.version }
        }
        let at = version
        _ = try await source.call { try await $0.registerConsumer(name, of: list, at: at) }
    }

    /// The `pull --json` document (see `ReplicaDocument.pullResult`) and a newline.
    static func document(_ result: ReplicaPullResult) -> String {
        String(decoding: ReplicaDocument.pullResult(result), as: UTF8.self) + "\n"
    }

    /// `replica.liststore: inbox at source version 12 (3 commits applied)` and a newline.
    static func line(_ result: ReplicaPullResult, replica: String, catchUp: Bool) -> String {
        var text = "\(Output.printable(replica)): \(Output.printable(result.list)) at source version \(result.version)"
        if result.resynced {
            text += ", resynced by diff (\(result.reason?.rawValue ?? "unknown reason"))"
            if let pages = result.pages {
                text += " in \(StageSummary.plural(pages.pages, "page"))"
                if pages.resumed { text += ", going on from an interrupted sync" }
                if pages.restarted { text += " (the version it was copying was gone at the source: started again at its head)" }
            }
        } else if result.applied == 0 {
            text += " (up to date)"
        } else if catchUp {
            text += " (caught up in one changeset)"
        } else {
            text += " (\(StageSummary.plural(result.applied, "commit")) applied)"
        }
        if result.confirmedChanges > 0 { text += ", \(StageSummary.plural(result.confirmedChanges, "local change")) confirmed" }
        if result.pending > 0 { text += ", \(StageSummary.plural(result.pending, "local change")) rebased on top" }
        guard !result.conflicts.isEmpty else { return text + "\n" }
        text += ", \(StageSummary.plural(result.conflicts.count, "conflict")) of pushes whose answer was lost"
        return text + "\n" + ConflictSummary.lines(result.conflicts)
    }
}
