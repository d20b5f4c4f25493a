import ListStore
import ListSync

/// Turns the errors of a pull (of either store, or of the replication itself) into one-line failures
/// with the documented exit codes.
enum SyncFailure {
    /// `error` as a `CommandFailure` (errors that are not the store's or the replica's pass through).
    static func mapped(_ error: any Error) -> any Error {
        switch error {
        case let error as StoreError:
            CommandFailure(error.message, status: StoreFailure.status(of: error.code))
        case let error as SyncError:
            switch error {
            case .diverged: CommandFailure("the replica " + error.description, status: ExitStatus.ioError)
            case .transport: CommandFailure(error.description, status: ExitStatus.ioError)
            case .unauthorized: CommandFailure(error.description, status: ExitStatus.unauthorized)
            case .resyncRequired: CommandFailure(error.description, status: ExitStatus.failure)
            case .refused: CommandFailure(error.description, status: ExitStatus.invalidData)
            }
        default:
            error
        }
    }
}
