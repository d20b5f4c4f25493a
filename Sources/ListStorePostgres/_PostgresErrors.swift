import ListStoreCore
import PostgresNIO

/// How the errors of postgres-nio become `StoreError`s.
enum _PostgresErrors {
    /// Runs `body`, letting `StoreError` and `CancellationError` through and mapping anything else:
    /// a lock or serialization failure is a `.versionConflict` (another writer got there first),
    /// data that does not decode is `.damaged`, anything else (a server that cannot be reached,
    /// refuses, or fails a statement) is `.io`.
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
    static func storeError(_ error: PSQLError, _ location: String) -> StoreError {
        guard error.code == .server, let state = error.serverInfo?[.sqlState] else {
            if error.code == .queryCancelled {
                return StoreError(.io, "a statement on \(location) was cancelled")
            }
            return StoreError(.io, "cannot reach the store at \(location): \(error.code)")
        }
        let message = error.serverInfo?[.message] ?? "error \(state)"
        switch state {
        case "40001", "40P01", "55P03":
            // serialization_failure, deadlock_detected, lock_not_available: another writer won.
            return StoreError(.versionConflict, "another writer changed the store at \(location) at the same time: \(message)")
        case "42P01", "42703":
            // undefined_table, undefined_column: this is not (or no longer) a ListStore database.
            return StoreError(.notAStore, "\(location) is not a ListStore database: \(message)")
        default:
            return StoreError(.io, "the store at \(location) failed: \(message) (SQLSTATE \(state))")
        }
    }
}
