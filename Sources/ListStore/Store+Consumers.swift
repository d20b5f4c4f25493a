import Foundation
import GRDB

extension Store {
    /// Registers a consumer of `list`, so that pruning keeps every journal entry after `version`
    /// (default: the oldest retained version) until the consumer acknowledges a later one.
    /// Registering again under the same name moves its version.
    ///
    /// ```swift
    /// try store.registerConsumer("laptop", of: "inbox")
    /// // … after applying version 42:
    /// try store.acknowledge(consumer: "laptop", of: "inbox", version: 42)
    /// ```
    /// - Throws: `StoreError` `.invalidArgument` (a name that is empty, over 1,024 bytes, holds
    ///   control or invisible formatting characters, or is not in NFC), `.listNotFound`, `.versionNotFound` (a version after the head),
    ///   `.storeNotFound`, `.io`.
    @discardableResult
    public func registerConsumer(_ name: String, of list: String, at version: Int? = nil) throws -> ConsumerInfo {
        try writing { try $0.setConsumer(name, of: list, version: version, registering: true) }
    }

    /// Records that consumer `name` of `list` has applied `version`; pruning may now drop what lies
    /// before it.
    /// - Throws: as `registerConsumer`, and `.invalidArgument` when no consumer has that name.
    @discardableResult
    public func acknowledge(consumer name: String, of list: String, version: Int) throws -> ConsumerInfo {
        try writing { try $0.setConsumer(name, of: list, version: version, registering: false) }
    }

    /// Removes a consumer; returns whether it was registered.
    /// - Throws: `StoreError` `.listNotFound`, `.storeNotFound`, `.io`.
    @discardableResult
    public func unregisterConsumer(_ name: String, of list: String) throws -> Bool {
        try writing { try $0.unregisterConsumer(name, of: list) }
    }

    /// The consumers of `list`, by name.
    /// - Throws: `StoreError` `.listNotFound`, `.storeNotFound`, `.io`.
    /// - Complexity: O(consumers).
    public func consumers(of list: String) throws -> [ConsumerInfo] {
        let pool = try existingPool()
        return try Store.mapErrors(path: path) {
            try pool.read { db in try consumers(db, list: try listInfo(db, list: list)) }
        }
    }

    func consumers(_ db: Database, list info: ListRow) throws -> [ConsumerInfo] {
        try Row.fetchAll(
            db, sql: "SELECT name, version, registered_at, acknowledged_at FROM consumer WHERE list_id = ? ORDER BY name",
            arguments: [info.id]
        ).map { row in
            ConsumerInfo(
                name: row["name"], list: info.name, version: row["version"], registeredAt: row["registered_at"],
                acknowledgedAt: row["acknowledged_at"])
        }
    }
}
