import ArgumentParser
import Foundation
import ListStore
import ListStorePostgres

/// `--db PATH|URL`: the store, shared by every store command: a SQLite file, or a PostgreSQL
/// database (`postgres://…`); `LISTSTORE_DB` when `--db` is not given.
struct StoreOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The store: a file (created by the first commit) or a postgres:// URL (default: $LISTSTORE_DB).",
            valueName: "path-or-url"))
    var db: String?

    /// `--db`, or `LISTSTORE_DB`.
    /// - Throws: `CommandFailure` (usage) when neither names a store.
    func location() throws -> String {
        if let db { return db }
        if let db = ProcessInfo.processInfo.environment["LISTSTORE_DB"], !db.isEmpty { return db }
        throw CommandFailure("no store given: pass --db PATH (or a postgres:// URL), or set LISTSTORE_DB", status: ExitStatus.usage)
    }

    /// The store on either engine. With `existing` (a command that only reads), a missing store
    /// is an error and nothing is created; otherwise the first write creates it.
    /// - Throws: `CommandFailure` with the documented exit code (66 for a missing store).
    func engine(existing: Bool) async throws -> EngineStore {
        let location = try location()
        if PostgresStore.Configuration.isURL(location) { return EngineStore(try await OpenStores.open(postgres: location, creating: !existing)) }
        let store = try await OpenStores.open(location)
        if existing, !store.exists {
            throw CommandFailure("no store at \(Output.quoted(store.path))", status: ExitStatus.missingInput)
        }
        return EngineStore(store)
    }
}

/// A store of either engine for a command: each call runs one of the engine's methods, with store
/// errors mapped to exit codes.
struct EngineStore {
    let engine: any ReplicaStore

    init(_ engine: any ReplicaStore) { self.engine = engine }

    /// Runs `body` with the engine and returns its result.
    /// - Throws: `CommandFailure` with the exit code of a store error; other errors as they are.
    func call<T>(_ body: (any ReplicaStore) async throws -> T) async throws -> T {
        try await StoreFailure.mapping { try await body(engine) }
    }
}

/// `--list NAME`.
struct ListOption: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The list's name.", valueName: "name"))
    var list: String
}

/// Turns store errors into one-line failures with the documented exit codes.
enum StoreFailure {
    static func mapping<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as StoreError {
            throw CommandFailure(error.message, status: status(of: error.code))
        }
    }

    static func status(of code: StoreError.Code) -> ExitCode {
        switch code {
        case .versionConflict, .uploadGivenUp: ExitStatus.conflict
        case .storeNotFound: ExitStatus.missingInput
        case .damaged, .io, .storageFull, .unavailable, .outcomeUnknown: ExitStatus.ioError
        case .invalidListName, .invalidArgument: ExitStatus.usage
        default: ExitStatus.invalidData  // not a store, newer schema, unknown list or version, bad snapshot
        }
    }
}
