import ListStoreCore
import Logging
import PostgresNIO

extension PostgresStore {
    /// The channel every commit notifies (with the list's name) when its transaction commits.
    static let commitChannel = "liststore_commit"

    /// A number that grows with every commit this store learns of: its own at once, and those of
    /// other processes on the same database as PostgreSQL delivers their `NOTIFY`. The first call
    /// starts listening on one pooled connection (with a pool of two connections or more; with one,
    /// other processes' commits are found by polling only), which is reopened after a second
    /// whenever it drops; each (re)start counts as a commit, since notifications sent meanwhile are
    /// lost. A closed store does not listen.
    ///
    /// ```swift
    /// let seen = store.commitGeneration()
    /// let heads = try await store.lists()
    /// await store.waitForCommit(after: seen, timeout: .seconds(1))
    /// ```
    /// - Complexity: O(1).
    public func commitGeneration() -> UInt64 {
        startListening()
        return commits.generation(of: location)
    }

    /// Returns when `commitGeneration()` has passed `generation`, after `timeout`, or when the task
    /// is cancelled. Notifications are a hint: a reader that must not miss a commit also polls.
    ///
    /// ```swift
    /// await store.waitForCommit(after: seen, timeout: .seconds(1))
    /// ```
    public func waitForCommit(after generation: UInt64, timeout: Duration) async {
        startListening()
        await commits.wait(path: location, unlessGenerationIsNot: generation, timeout: timeout)
    }

    private func startListening() {
        guard listens else { return }
        listener.withLock { listener in
            guard listener.task == nil, !listener.closed else { return }
            let (client, commits, location, logger) = (self.client, self.commits, self.location, self.logger)
            listener.task = Task {
                await Self.listen(client: client, signal: commits, key: location, logger: logger)
            }
        }
    }

    /// Listens for commits until the task is cancelled, reconnecting after a second when the
    /// connection drops.
    private static func listen(client: PostgresClient, signal: CommitSignal, key: String, logger: Logger) async {
        while !Task.isCancelled {
            do {
                try await client.withConnection { connection in
                    try await connection.listen(on: commitChannel) { notifications in
                        // Commits made before the listening started were not announced.
                        signal.notify(path: key)
                        for try await _ in notifications { signal.notify(path: key) }
                    }
                }
            } catch {
                if !Task.isCancelled {
                    logger.debug("listening for commits failed, retrying", metadata: ["error": "\(String(reflecting: error))"])
                }
            }
            try? await Task.sleep(for: .seconds(1))
        }
    }
}
