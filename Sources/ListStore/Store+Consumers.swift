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
    /// - Complexity: O(consumers of the list).
    @discardableResult
    public func registerConsumer(_ name: String, of list: String, at version: Int? = nil) throws -> ConsumerInfo {
        try writing { try $0.setConsumer(name, of: list, version: version, registering: true) }
    }

    /// Records that consumer `name` of `list` has applied `version`; pruning may now drop what lies
    /// before it.
    /// - Throws: as `registerConsumer`, and `.invalidArgument` when no consumer has that name.
    /// - Complexity: O(consumers of the list).
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
        try reading { try $0.consumers(of: list) }
    }

    /// `registerConsumer(_:of:at:)`, written off the cooperative thread pool (GRDB's async access).
    @discardableResult
    public func registerConsumer(_ name: String, of list: String, at version: Int? = nil) async throws -> ConsumerInfo {
        try await writing { try $0.setConsumer(name, of: list, version: version, registering: true) }
    }

    /// `acknowledge(consumer:of:version:)`, written off the cooperative thread pool.
    @discardableResult
    public func acknowledge(consumer name: String, of list: String, version: Int) async throws -> ConsumerInfo {
        try await writing { try $0.setConsumer(name, of: list, version: version, registering: false) }
    }

    /// `unregisterConsumer(_:of:)`, written off the cooperative thread pool.
    @discardableResult
    public func unregisterConsumer(_ name: String, of list: String) async throws -> Bool {
        try await writing { try $0.unregisterConsumer(name, of: list) }
    }

    /// `consumers(of:)`, read off the cooperative thread pool.
    public func consumers(of list: String) async throws -> [ConsumerInfo] {
        try await reading { try $0.consumers(of: list) }
    }
}
