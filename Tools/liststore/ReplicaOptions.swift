import ArgumentParser
import Foundation
import ListStore
import ListStorePostgres
import ListSync

/// `(--db SRC | --from URL [--token T] [--ca-cert F] [--max-answer-mib N] [--long-poll]) (--list L | --lists P) --replica R`:
/// which replica of which source `pull`, `push` and `sync` work on (one list, or a replica set: every
/// list a pattern names); the source is a store of this machine or a server (`liststore serve`).
struct ReplicaOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The source store (it must exist): a file or a postgres:// URL.", valueName: "path-or-url"))
    var db: String?

    @Option(name: .long, help: ArgumentHelp("The source server ('liststore serve'), e.g. http://host:8080.", valueName: "url"))
    var from: String?

    @Option(name: .long, help: ArgumentHelp("The server's token (default: $LISTSTORE_TOKEN).", valueName: "token"))
    var token: String?

    @Option(
        name: .customLong("ca-cert"),
        help: ArgumentHelp(
            "Trust the server's certificate only if this PEM certificate authority signed it (for an https:// --from).",
            valueName: "file"))
    var caCert: String?

    @Option(name: .customLong("max-answer-mib"), help: ArgumentHelp("The largest answer accepted from the server, in MiB (default: 512).", valueName: "n"))
    var maxAnswerMiB: Int?

    @Flag(
        name: .customLong("long-poll"),
        help: "Follow the list (--follow) by long polls of its journal instead of its event stream: for many followers behind a shared cache.")
    var longPoll = false

    @Option(name: .long, help: ArgumentHelp("The list's name.", valueName: "name"))
    var list: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Every list this pattern names, as one replica set over one cursor ('users/ana/**'; '*' within a segment, '**' for any segments).",
            valueName: "pattern"))
    var lists: String?

    /// The one list (after `validate()`, when `--lists` is not given).
    var listName: String { list ?? "" }

    @Option(
        name: .long,
        help: ArgumentHelp("The replica store: a file or a postgres:// URL (created by the first pull or sync).", valueName: "path-or-url"))
    var replica: String

    /// The replica's store for messages: its path, or its URL without the password.
    var replicaName: String {
        PostgresStore.Configuration.isURL(replica) ? PostgresStore.Configuration.redacted(replica) : replica
    }

    /// The replica's store on either engine; with `existing`, a missing store is an error.
    func replicaStore(existing: Bool) async throws -> EngineStore {
        try await StoreOptions(db: replica).engine(existing: existing)
    }

    func validate() throws {
        guard (db == nil) != (from == nil) else { throw ValidationError("give the source as either --db or --from") }
        if list != nil && lists != nil { throw ValidationError("--list and --lists do not go together: one list, or a set of them") }
        if longPoll && (from == nil || list == nil) { throw ValidationError("--long-poll follows one list (--list) of a server (--from)") }
        if list == nil && lists == nil { throw ValidationError("give the list as --list, or a set of lists as --lists") }
        if let lists {
            do {
                guard try ListPattern(lists).claimNames.isEmpty else { throw ValidationError("--lists names lists, not claims ({…}): \(lists)") }
            } catch let error as ValidationError {
                throw error
            } catch {
                throw ValidationError("--lists: \(error)")
            }
        }
        if token != nil && from == nil { throw ValidationError("--token goes with --from") }
        if caCert != nil && from == nil { throw ValidationError("--ca-cert goes with --from") }
        if let maxAnswerMiB {
            if from == nil { throw ValidationError("--max-answer-mib goes with --from") }
            if !(1...(1 << 20)).contains(maxAnswerMiB) { throw ValidationError("--max-answer-mib must be 1…1048576") }
        }
    }

    /// A source that was checked to hold the list.
    enum Source {
        /// A store this process opens: a file of this machine, or a PostgreSQL database.
        case store(any ReplicaStore)
        /// A server.
        case server(HTTPSource)

        /// The source as a replica set reads it.
        var feedSource: any FeedSource {
            switch self {
            case .store(let store): LocalSource(store)
            case .server(let server): server
            }
        }

        /// The source as a replica reads it.
        var listSource: any ListSource {
            switch self {
            case .store(let store): LocalSource(store)
            case .server(let server): server
            }
        }

        /// How a follower waits out a failure: a server may go away for a while (a restart, a
        /// deploy); a local store does not.
        var retryPolicy: RetryPolicy? {
            if case .server = self { return .standard }
            return nil
        }
    }

    /// The source, checked first: a missing or bad store, an unreachable server, a refused token, or
    /// a source without the list fails before anything is created. A `--db` that is the replica's
    /// own store is refused (64).
    ///
    /// - Throws: `CommandFailure` with the documented exit code.
    func connect() async throws -> Source {
        let list = list
        if let db {
            let source = try await StoreOptions(db: db).engine(existing: true)
            if let list {
                _ = try await source.call { try await $0.summary(of: list) }
            } else {
                _ = try await source.call { try await $0.identity() }
            }
            if source.engine is PostgresStore {
                guard db != replica else {
                    throw CommandFailure("the replica cannot be the source store \(Output.quoted(source.engine.location))", status: ExitStatus.usage)
                }
                return .store(source.engine)
            }
            guard Self.canonicalPath(db) != Self.canonicalPath(replica) else {
                throw CommandFailure("the replica cannot be the source store \(Output.quoted(db))", status: ExitStatus.usage)
            }
            return .store(source.engine)
        }
        let token = token ?? ProcessInfo.processInfo.environment["LISTSTORE_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
        var source: HTTPSource
        do {
            source = try HTTPSource(from ?? "", token: token)
        } catch {
            // Not an http(s) URL, or one with credentials, a query or a fragment.
            throw CommandFailure("\(error)", status: ExitStatus.usage)
        }
        if let maxAnswerMiB { source.maxAnswerBytes = maxAnswerMiB << 20 }
        source.followsByLongPolls = longPoll
        if let caCert {
            do {
                source.certificateAuthorities = try HTTPSource.CertificateAuthorities(pemFile: caCert)
            } catch {
                throw CommandFailure("--ca-cert: \(error)", status: ExitStatus.missingInput)
            }
        }
        do {
            if let list {
                _ = try await source.summary(of: list)
            } else {
                // The token's lists: a refused token fails here.
                _ = try await source.lists(matching: ListPattern("**"))
            }
        } catch {
            throw SyncFailure.mapped(error)
        }
        return .server(source)
    }

    private static func canonicalPath(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
    }
}
