import ArgumentParser
import Foundation
import ListJSON
import ListStore
import ListSync

/// `liststore pull (--db SRC | --from URL [--token T] [--max-answer-mib N]) --list L --replica R [--json] [--follow] [--catch-up] [--as NAME]`.
struct PullCommand: ParsableCommand {
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
            digestMismatch, aheadOfSource, noCursor); with --follow, one such document per line.

            \(ExitStatus.helpText)
            """
    )

    @Option(name: .long, help: ArgumentHelp("The source store (it must exist).", valueName: "path"))
    var db: String?

    @Option(name: .long, help: ArgumentHelp("The source server ('liststore serve'), e.g. http://host:8080.", valueName: "url"))
    var from: String?

    @Option(name: .long, help: ArgumentHelp("The server's token (default: $LISTSTORE_TOKEN).", valueName: "token"))
    var token: String?

    @Option(name: .customLong("max-answer-mib"), help: ArgumentHelp("The largest answer accepted from the server, in MiB (default: 512).", valueName: "n"))
    var maxAnswerMiB: Int?

    @OptionGroup var list: ListOption

    @Option(name: .long, help: ArgumentHelp("The replica store (created by the first pull).", valueName: "path"))
    var replica: String

    @Option(name: .customLong("as"), help: ArgumentHelp("Register and acknowledge this consumer name on the source.", valueName: "name"))
    var consumer: String?

    @Flag(name: .long, help: "Keep pulling as commits land, until SIGINT or SIGTERM.")
    var follow = false

    @Flag(name: .long, help: "Apply one minimal changeset to the head instead of each commit.")
    var catchUp = false

    @Flag(name: .long, help: "Print one JSON document per pull instead of a line.")
    var json = false

    func validate() throws {
        guard (db == nil) != (from == nil) else { throw ValidationError("give the source as either --db or --from") }
        if token != nil && from == nil { throw ValidationError("--token goes with --from") }
        if let maxAnswerMiB {
            if from == nil { throw ValidationError("--max-answer-mib goes with --from") }
            if !(1...(1 << 20)).contains(maxAnswerMiB) { throw ValidationError("--max-answer-mib must be 1…1048576") }
        }
    }

    func run() throws {
        try Terminal.reportingFailures {
            if let db {
                // The source first: nothing is created when it is missing, not a store, or lacks the list.
                let source = try StoreOptions(db: db).existingStore()
                _ = try StoreFailure.mapping { try source.summary(of: list.list) }
                guard Self.canonicalPath(db) != Self.canonicalPath(replica) else {
                    throw CommandFailure("the replica cannot be the source store \(Output.quoted(db))", status: ExitStatus.usage)
                }
                let replicaStore = try StoreFailure.mapping { try Store(path: replica) }
                if let consumer {
                    try StoreFailure.mapping { try Self.register(consumer, of: list.list, on: source, replica: replicaStore) }
                }
                try pull(from: LocalSource(source), into: replicaStore)
            } else if let from {
                let token = token ?? ProcessInfo.processInfo.environment["LISTSTORE_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
                var source: HTTPSource
                do {
                    source = try HTTPSource(from, token: token)
                } catch {
                    // Not an http(s) URL, or one with credentials, a query or a fragment.
                    throw CommandFailure("\(error)", status: ExitStatus.usage)
                }
                if let maxAnswerMiB { source.maxAnswerBytes = maxAnswerMiB << 20 }
                let server = source
                // The source first: nothing is created when the server is unreachable, refuses the
                // token, or lacks the list.
                try AsyncBridge.run { [list = list.list] in
                    do {
                        _ = try await server.summary(of: list)
                    } catch {
                        throw SyncFailure.mapped(error)
                    }
                }
                let replicaStore = try StoreFailure.mapping { try Store(path: replica) }
                try pull(from: server, into: replicaStore)
            }
        }
    }

    /// Pulls (or follows) `source` into `replicaStore`, reporting each pull.
    private func pull(from source: some ListSource, into replicaStore: Store) throws {
        let options = Replica.PullOptions(catchUp: catchUp, consumer: consumer)
        let target = Replica(store: replicaStore, list: list.list)
        let (json, follow, catchUp, name) = (json, follow, catchUp, replica)
        let report: @Sendable (Replica.PullResult) -> Void = { result in
            Terminal.out(json ? Self.document(result) : Self.line(result, replica: name, catchUp: catchUp))
        }
        try AsyncBridge.run(cancellingOn: follow ? [SIGINT, SIGTERM] : []) {
            do {
                if follow {
                    // A server may go away for a while (a restart, a deploy); a local store does not.
                    let retry: RetryPolicy? = source is HTTPSource ? .standard : nil
                    try await target.follow(from: source, options: options, retrying: retry, onEvent: Self.announce) { report($0) }
                } else {
                    report(try await target.pull(from: source, options: options))
                }
            } catch is CancellationError {
                // Stopped by a signal.
            } catch {
                throw SyncFailure.mapped(error)
            }
        }
    }

    /// Says on stderr, once per outage, that the server was lost and when the follower tries again,
    /// and that it is back.
    @Sendable private static func announce(_ event: FollowEvent) {
        switch event {
        case .retrying(let error, 1, let delay):
            Terminal.errorLine("lost the server (\(error)), retrying in \(seconds(delay)) s")
        case .retrying:
            break
        case .reconnected:
            Terminal.errorLine("reconnected")
        }
    }

    /// `0.5`, `2`: a delay in seconds, rounded to a tenth.
    private static func seconds(_ delay: Duration) -> String {
        let tenths = (Double(delay.components.seconds) * 10 + Double(delay.components.attoseconds) / 1e17).rounded()
        return tenths.truncatingRemainder(dividingBy: 10) == 0 ? "\(Int(tenths / 10))" : "\(tenths / 10)"
    }

    /// Registers `name` on the source unless it is registered: at the version the replica already
    /// equals when it follows this source, otherwise at the oldest retained version. (The pull's
    /// acknowledgement registers it too, but only afterwards: registering first keeps a prune that
    /// runs meanwhile from dropping what the pull is about to apply.)
    private static func register(_ name: String, of list: String, on source: Store, replica: Store) throws {
        guard try !source.consumers(of: list).contains(where: { $0.name == name }) else { return }
        var version: Int?
        if replica.exists, let position = try replica.replicaSource(of: list), position.list == list,
           position.store == (try source.identity())
        {
            let summary = try source.summary(of: list)
            if (summary.baseVersion...summary.version).contains(position.version) { version = position.version }
        }
        try source.registerConsumer(name, of: list, at: version)
    }

    /// `{"applied":…,"list":…,"reason":…,"resynced":…,"schemaVersion":1,"version":…}` and a newline.
    static func document(_ result: Replica.PullResult) -> String {
        let object: JSONObject = [
            "schemaVersion": 1, "list": .string(result.list), "version": JSONValue(result.version),
            "applied": JSONValue(result.applied), "resynced": .bool(result.resynced),
            "reason": result.reason.map { .string($0.rawValue) } ?? .null,
        ]
        return JSONValue.object(object).serialized() + "\n"
    }

    /// `replica.liststore: inbox at source version 12 (3 commits applied)` and a newline.
    static func line(_ result: Replica.PullResult, replica: String, catchUp: Bool) -> String {
        var text = "\(Output.printable(replica)): \(Output.printable(result.list)) at source version \(result.version)"
        if result.resynced {
            text += ", resynced by diff (\(result.reason?.rawValue ?? "unknown reason"))"
        } else if result.applied == 0 {
            text += " (up to date)"
        } else if catchUp {
            text += " (caught up in one changeset)"
        } else {
            text += " (\(StageSummary.plural(result.applied, "commit")) applied)"
        }
        return text + "\n"
    }

    private static func canonicalPath(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
    }
}
