import ListStoreCore
import PostgresNIO

extension PostgresStore {
    /// Registers a consumer of `list`, so that pruning keeps every journal entry after `version`
    /// (default: the oldest retained version) until the consumer acknowledges a later one.
    /// Registering again under the same name moves its version. As `Store.registerConsumer`.
    ///
    /// ```swift
    /// try await store.registerConsumer("laptop", of: "inbox")
    /// // … after applying version 42:
    /// try await store.acknowledge(consumer: "laptop", of: "inbox", version: 42)
    /// ```
    /// - Throws: `StoreError` `.invalidArgument` (a name that is empty, over 1,024 bytes, holds
    ///   control or invisible formatting characters, or is not in NFC), `.listNotFound`,
    ///   `.versionNotFound` (a version after the head), `.io`; `CancellationError` when the task is
    ///   cancelled before the write starts.
    /// - Complexity: O(consumers of the list), one transaction that locks the list's row.
    @discardableResult
    public func registerConsumer(_ name: String, of list: String, at version: Int? = nil) async throws -> ConsumerInfo {
        try await setConsumer(name, of: list, version: version, registering: true)
    }

    /// Records that consumer `name` of `list` has applied `version`; pruning may now drop what lies
    /// before it.
    ///
    /// ```swift
    /// try await store.acknowledge(consumer: "laptop", of: "inbox", version: 42)
    /// ```
    /// - Throws: as `registerConsumer`, and `.invalidArgument` when no consumer has that name.
    /// - Complexity: O(consumers of the list), one transaction that locks the list's row.
    @discardableResult
    public func acknowledge(consumer name: String, of list: String, version: Int) async throws -> ConsumerInfo {
        try await setConsumer(name, of: list, version: version, registering: false)
    }

    /// Removes a consumer; returns whether it was registered.
    ///
    /// ```swift
    /// try await store.unregisterConsumer("laptop", of: "inbox")
    /// ```
    /// - Throws: `StoreError` `.listNotFound`, `.io`; `CancellationError` when the task is cancelled
    ///   before the write starts.
    /// - Complexity: O(1), one transaction.
    @discardableResult
    public func unregisterConsumer(_ name: String, of list: String) async throws -> Bool {
        try await transaction(.writing) { connection in
            let info = try await listInfo(connection, list: list)
            let rows = try await connection.query(
                "DELETE FROM consumer WHERE list_id = \(info.id) AND name = \(name) RETURNING 1", logger: logger
            ).collect()
            return !rows.isEmpty
        }
    }

    /// The consumers of `list`, by name.
    ///
    /// ```swift
    /// let slowest = try await store.consumers(of: "inbox").map(\.version).min()
    /// ```
    /// - Throws: `StoreError` `.listNotFound`, `.io`; `CancellationError` when the task is cancelled
    ///   before the read starts.
    /// - Complexity: O(consumers).
    public func consumers(of list: String) async throws -> [ConsumerInfo] {
        try await transaction(.readOnly) { connection in
            try await consumers(connection, list: try await listInfo(connection, list: list))
        }
    }

    func consumers(_ connection: PostgresConnection, list info: ListRow) async throws -> [ConsumerInfo] {
        let rows = try await connection.query(
            """
            SELECT name, version, registered_at, acknowledged_at FROM consumer WHERE list_id = \(info.id)
            ORDER BY name COLLATE "C"
            """, logger: logger)
        var consumers: [ConsumerInfo] = []
        for try await (name, version, registeredAt, acknowledgedAt) in rows.decode((String, Int, String, String).self) {
            consumers.append(ConsumerInfo(
                name: name, list: info.name, version: version, registeredAt: registeredAt, acknowledgedAt: acknowledgedAt))
        }
        return consumers
    }

    private func setConsumer(_ name: String, of list: String, version: Int?, registering: Bool) async throws -> ConsumerInfo {
        if let problem = registering ? _Names.problem(withNew: name, "consumer") : _Names.problem(with: name, "consumer") {
            throw StoreError(.invalidArgument, problem)
        }
        return try await transaction(.writing) { connection in
            let info = try await listInfo(connection, list: list, locking: true)
            let version = version ?? info.baseVersion
            // A consumer may stand below the base (pruning was forced past it), never above the head.
            guard version >= 0, version <= info.headVersion else {
                throw StoreError(
                    .versionNotFound,
                    "version \(version) of list '\(list)' is not in its history (versions \(info.baseVersion) to \(info.headVersion))")
            }
            if registering {
                try await connection.query(
                    """
                    INSERT INTO consumer (list_id, name, version, registered_at, acknowledged_at)
                    VALUES (\(info.id), \(name), \(version), \(unescaped: _PostgresTime.now), \(unescaped: _PostgresTime.now))
                    ON CONFLICT (list_id, name) DO UPDATE SET version = excluded.version, acknowledged_at = excluded.acknowledged_at
                    """, logger: logger)
            } else {
                let updated = try await connection.query(
                    """
                    UPDATE consumer SET version = \(version), acknowledged_at = \(unescaped: _PostgresTime.now)
                    WHERE list_id = \(info.id) AND name = \(name) RETURNING 1
                    """, logger: logger
                ).collect()
                guard updated.count == 1 else {
                    throw StoreError(.invalidArgument, "no consumer named '\(name)' is registered on list '\(list)'")
                }
            }
            guard let written = try await consumers(connection, list: info).first(where: { $0.name == name }) else {
                throw StoreError(.damaged, "consumer '\(name)' of list '\(list)' vanished while it was written")
            }
            return written
        }
    }
}
