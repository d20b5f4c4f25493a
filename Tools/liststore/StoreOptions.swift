import ArgumentParser
import ListStore

/// `--db PATH`: the store file, shared by every store command.
struct StoreOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The store file (created by the first commit).", valueName: "path"))
    var db: String

    /// The store, for a command that writes (the file may not exist yet).
    func storeForWriting() throws -> Store {
        try OpenStores.open(db)
    }

    /// The store, for a command that only reads: a missing file is an error, and nothing is created.
    func existingStore() throws -> Store {
        let store = try storeForWriting()
        guard store.exists else {
            throw CommandFailure("no store at \(Output.quoted(db))", status: ExitStatus.missingInput)
        }
        return store
    }
}

/// `--list NAME`.
struct ListOption: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The list's name.", valueName: "name"))
    var list: String
}

/// Turns store errors into one-line failures with the documented exit codes.
enum StoreFailure {
    static func mapping<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as StoreError {
            throw CommandFailure(error.message, status: status(of: error.code))
        }
    }

    static func status(of code: StoreError.Code) -> ExitCode {
        switch code {
        case .versionConflict: ExitStatus.conflict
        case .storeNotFound: ExitStatus.missingInput
        case .damaged, .io: ExitStatus.ioError
        case .invalidListName, .invalidArgument: ExitStatus.usage
        default: ExitStatus.invalidData  // not a store, newer schema, unknown list or version, bad snapshot
        }
    }
}
