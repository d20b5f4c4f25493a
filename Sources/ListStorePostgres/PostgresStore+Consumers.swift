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
        try await writing { try $0.setConsumer(name, of: list, version: version, registering: true) }
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
        try await writing { try $0.setConsumer(name, of: list, version: version, registering: false) }
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
        try await writing { try $0.unregisterConsumer(name, of: list) }
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
        try await writing(.readOnly) { try $0.consumers(of: list) }
    }
}
