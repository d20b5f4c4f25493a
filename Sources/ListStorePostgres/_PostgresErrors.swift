import ListStoreCore
import PostgresNIO

/// How the errors of postgres-nio become `StoreError`s.
enum _PostgresErrors {
    /// Runs `body`, letting `StoreError` and `CancellationError` through and mapping anything else:
    /// postgres-nio's errors as `storeError(_:_:)` says, data that does not decode as `.damaged`,
    /// anything else as `.io`.
    static func mapping<T: Sendable>(_ location: String, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as CallerError {
            throw error.error
        } catch let error as StoreError {
            throw error
        } catch let error as CancellationError {
            throw error
        } catch let error as PSQLError {
            throw storeError(error, location)
        } catch let error as PostgresDecodingError {
            throw StoreError(.damaged, "the store at \(location) is damaged: column \(error.columnName) (\(error.postgresType)) does not decode as \(error.targetType)")
        } catch {
            throw StoreError(.io, "the store at \(location) failed: \(String(reflecting: error))")
        }
    }

    /// The `StoreError` for a postgres-nio error.
    ///
    /// - A connection that broke, closed or could not be made, a server shutting down, restarting
    ///   or out of connections, a statement cancelled or past its timeout, a lock wait past
    ///   `lock_timeout`, a serialization failure or a deadlock: `.unavailable` (the transaction did
    ///   not commit; trying again may succeed). A real version conflict is found by the store's
    ///   logic itself, under the list's row lock.
    /// - A full disk: `.storageFull`.
    /// - A missing table or column: `.notAStore`.
    /// - Anything else the server refuses: `.io`.
    static func storeError(_ error: PSQLError, _ location: String) -> StoreError {
        guard error.code == .server, let state = error.serverInfo?[.sqlState] else {
            switch error.code {
            case .queryCancelled: return StoreError(.unavailable, "a statement on the store at \(location) was cancelled; nothing was changed")
            case .clientClosedConnection, .serverClosedConnection, .connectionError, .uncleanShutdown, .poolClosed:
                return StoreError(.unavailable, "the connection to the store at \(location) was lost (\(error.code)); nothing was changed")
            default: return StoreError(.io, "the store at \(location) failed: \(error.code)")
            }
        }
        let message = error.serverInfo?[.message] ?? "error \(state)"
        switch state {
        case "55P03":  // lock_not_available: a lock held past `lock_timeout`
            return StoreError(.unavailable, "the store at \(location) is busy: a lock was held past the lock timeout (\(message)); nothing was changed")
        case "57014":  // query_canceled: `statement_timeout`, or a cancel request
            return StoreError(.unavailable, "a statement on the store at \(location) was stopped (\(message)); nothing was changed")
        case "40001", "40P01":  // serialization_failure, deadlock_detected
            return StoreError(.unavailable, "the store at \(location) stopped a transaction that met another (\(message)); nothing was changed")
        case let state where state.hasPrefix("08") || state.hasPrefix("57P") || state == "53300" || state == "53400":
            // connection exceptions; admin_shutdown, crash_shutdown, cannot_connect_now (a server
            // shutting down, restarting or in recovery); too_many_connections; configuration_limit_exceeded
            return StoreError(.unavailable, "the store at \(location) cannot be reached now: \(message) (SQLSTATE \(state)); nothing was changed")
        case "53100":  // disk_full
            return StoreError(.storageFull, "the store at \(location) has no room: \(message) (SQLSTATE \(state)); nothing was changed")
        case "42P01", "42703":
            // undefined_table, undefined_column: this is not (or no longer) a ListStore database.
            return StoreError(.notAStore, "\(location) is not a ListStore database: \(message)")
        default:
            return StoreError(.io, "the store at \(location) failed: \(message) (SQLSTATE \(state))")
        }
    }
}
