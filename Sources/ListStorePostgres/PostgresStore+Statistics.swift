import ListStoreCore
import PostgresNIO

// The planner's statistics after large writes. PostgreSQL's autovacuum analyzes a table again once
// a tenth of it changed, but only at its next round (every minute by default), and until then plans
// a table that was empty when it was last analyzed as empty: after the first commit of a large
// list, every follower's reads were planned for empty tables (`liststore-bench pg-commit-1pct
// pg-followers`: one follower's deliveries p50 86 ms, 18 ms once analyzed). So a store analyzes its
// tables itself, in the background, once the rows its commits wrote since it last did reach a tenth
// of what the tables then held (at least `analyzeAfterRows`).

extension PostgresStore {
    /// What a store knows of the planner's statistics: the rows written since its last `ANALYZE`,
    /// the rows the tables held then, and the `ANALYZE` under way.
    struct Statistics {
        var written = 0
        var known = 0
        var running: Task<Void, Never>?
    }

    /// The fewest rows written that make the statistics due.
    static var analyzeAfterRows: Int { 10_000 }

    /// Counts `rows` written by a committed transaction, and analyzes the tables in the background
    /// when that makes the statistics due (one `ANALYZE` at a time; rows written meanwhile count
    /// toward the next).
    func wrote(rows: Int) {
        guard rows > 0 else { return }
        statistics.withLock { $0.written += rows }
        analyzeIfDue()
    }

    /// Starts an `ANALYZE` in the background when the statistics are due and none is under way.
    private func analyzeIfDue() {
        statistics.withLock { statistics in
            guard statistics.running == nil, statistics.written >= max(Self.analyzeAfterRows, statistics.known / 10) else { return }
            statistics.written = 0
            statistics.running = Task { [self] in await analyze() }
        }
    }

    /// Waits for the `ANALYZE` under way, if any.
    package func statisticsSettled() async {
        await statistics.withLock { $0.running }?.value
    }

    /// Runs `ANALYZE` on the tables the store's reads plan over, then notes how many rows they
    /// hold; a failure (the store closing, the server gone) is logged and leaves them as they were.
    private func analyze() async {
        let logger = self.logger
        let tables = "list, section, element, journal, feed, stored_snapshot, push, outbox"
        var known: Int?
        do {
            known = try await withConnection { connection, _ in
                _ = try await connection.query("ANALYZE \(unescaped: tables)", logger: logger)
                let rows = try await connection.query(
                    "SELECT coalesce(sum(greatest(reltuples, 0)), 0)::bigint FROM pg_class WHERE relname IN ('section', 'element', 'journal', 'feed')",
                    logger: logger)
                for try await count in rows.decode(Int.self) { return count }
                return 0
            }
        } catch {
            logger.debug("the planner's statistics were not made again", metadata: ["error": "\(error)"])
        }
        statistics.withLock { statistics in
            statistics.running = nil
            if let known { statistics.known = known }
        }
        if !Task.isCancelled { analyzeIfDue() }
    }
}
