import ArgumentParser
import ListStore
import ListSync

/// `liststore sync (--db SRC | --from URL [--token T] [--max-answer-mib N]) --list L --replica R [--json] [--follow]`.
struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Push a replica's local changes to its source, then pull.",
        discussion: """
            'liststore push', then 'liststore pull' (see their help): the source merges the \
            replica's pending local changes, and the replica then holds the source's head, with \
            whatever local changes landed meanwhile rebased on top. The first sync of a replica \
            creates it, as a pull does. The source is given and checked as for 'pull'.

            --follow keeps syncing until SIGINT or SIGTERM (then it exits with 0; a second signal \
            ends it at once): a round runs when the source has a new commit and when a local \
            change is committed to the replica (by this process at once, by another within a \
            second). It prints the first round and each round that pulled something, and waits out \
            a server that goes away for a while as 'pull --follow' does (stderr: 'lost the server \
            (…), retrying in N s', then 'reconnected').

            Output: the push's line and conflicts (as 'push' prints them), then the pull's line (as \
            'pull' prints it); with --follow, the push's lines only for rounds that pushed \
            something. --json prints {"schemaVersion":1,"push":{…},"pull":{…}}, "push" as 'push \
            --json' and "pull" as 'pull --json' print them (without "schemaVersion"); with \
            --follow, one such document per line. A source that is not the replica's own is \
            refused (exit 65) before anything is pushed or pulled. When the pull finds a change \
            the source has no record of although it was answered (the source was restored from a \
            backup), the change is pushed again and the replica pulls once more. --replace is \
            'pull --replace'.

            \(ExitStatus.helpText)
            """
    )

    @OptionGroup var options: ReplicaOptions

    @Flag(name: .long, help: "Let the sync turn a list with a history of its own, or a replica of another store, into a replica of this source.")
    var replace = false

    @Flag(name: .long, help: "Keep syncing as commits land here or at the source, until SIGINT or SIGTERM.")
    var follow = false

    @Flag(name: .long, help: "Print one JSON document per sync instead of lines.")
    var json = false

    func validate() throws {
        if options.lists != nil, replace { throw ValidationError("--replace goes with --list, not --lists") }
    }

    func run() async throws {
        try await Terminal.reportingFailures {
            if options.lists != nil { return try await ReplicaSetWork.run(options, pushing: true, follow: follow, json: json) }
            // The source first: nothing is created when it is missing, not a store, unreachable,
            // refuses the token, or lacks the list.
            let connected = try await options.connect()
            let replicaStore = try await options.replicaStore(existing: false)
            try await sync(with: connected, into: replicaStore.engine)
        }
    }

    /// Syncs (or follows) `source` with the replica in `replicaStore`, reporting each round.
    private func sync(with connected: ReplicaOptions.Source, into replicaStore: some ReplicaStore) async throws {
        let target = Replica(store: replicaStore, list: options.listName)
        let (json, follow, name) = (json, follow, options.replicaName)
        // A first sync or a resync in pages draws a bar on a terminal.
        let bar = SyncProgressBar()
        var pullOptions = ReplicaPullOptions(replacing: replace)
        pullOptions.onProgress = bar.reporter
        let syncOptions = pullOptions
        let report: @Sendable (ReplicaPushResult, ReplicaPullResult) -> Void = { push, pull in
            bar.finish()
            guard !json else {
                Terminal.out(String(decoding: ReplicaDocument.syncResult(push: push, pull: pull), as: UTF8.self) + "\n")
                return
            }
            Terminal.out(
                (push.version != nil || !follow ? PushCommand.lines(push, replica: name) : "")
                    + PullCommand.line(pull, replica: name, catchUp: false))
        }
        let (reading, retry) = (connected.listSource, connected.retryPolicy)
        try await ReplicaWork.run(following: follow) {
            guard follow else {
                let synced = try await target.sync(with: reading, options: syncOptions)
                report(synced.push, synced.pull)
                return
            }
            let recording = PushRecordingSource(reading)
            try await ReplicaWork.follow(target, from: recording, retrying: retry, options: syncOptions, pushing: true) { pulled in
                report(ReplicaPushResult(list: target.list, answers: recording.takeAnswers()), pulled)
            }
        }
    }
}
