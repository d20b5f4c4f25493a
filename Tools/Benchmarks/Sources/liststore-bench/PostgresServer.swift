import Foundation

/// The PostgreSQL server of the pg scenarios: the database that `LISTSTORE_BENCH_PG` names.
///
/// A throwaway cluster for them starts with `Tools/throwaway-postgres` (as `.ci/run` does for the
/// tests); the README shows the one-liner.
enum PostgresServer {
    /// The database URL.
    /// - Throws: `PostgresServerError` when `LISTSTORE_BENCH_PG` is not set.
    static func url() throws -> String {
        guard let url = ProcessInfo.processInfo.environment["LISTSTORE_BENCH_PG"], !url.isEmpty else {
            throw PostgresServerError(
                message: "LISTSTORE_BENCH_PG is not set; run: LISTSTORE_BENCH_PG=$(Tools/throwaway-postgres start) "
                    + "swift run -c release --package-path Tools/Benchmarks liststore-bench pg-commit-1pct pg-followers; Tools/throwaway-postgres stop")
        }
        return url
    }
}

struct PostgresServerError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
