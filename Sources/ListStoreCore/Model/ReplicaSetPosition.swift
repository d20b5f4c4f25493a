import ListMerge

/// Where a replica set stands: the source store whose feed it follows, the feed position it applied
/// up to, and the pending changes its pulls could not keep (to lists the source deleted).
///
/// A replica store keeps one per set it follows (a pattern of list names), written in the same
/// transaction as each commit or deletion the set applies (see ListSync's `ReplicaSet`).
///
/// ```swift
/// if let position = try await store.replicaSetPosition(of: "users/ana/**") {
///     print(position.store.uuid, position.position, position.lastConflicts.keys)
/// }
/// ```
public struct ReplicaSetPosition: Sendable, Hashable {
    /// The set's pattern of list names.
    public var pattern: String
    /// The source store (its identity when the set last applied an event).
    public var store: StoreIdentity
    /// The source feed's position the set applied up to (0 when its source sealed its cursor: a
    /// journal server's cursor for a user says nothing of the feed).
    public var position: Int
    /// Where the set applied up to, as its source wrote it: the place of its feed cursor (ListSync's
    /// `FeedCursor.place`), which the set sends back to resume.
    public var place: String
    /// The conflict report of the last pulls that dropped a list with pending changes, by list
    /// name: each change as a `listDeleted` conflict, with its content (empty when none).
    public var lastConflicts: [String: [Conflict]]
    /// When it last moved (ISO 8601).
    public var updatedAt: String

    /// A position as the store records it.
    public init(
        pattern: String, store: StoreIdentity, position: Int, place: String? = nil, lastConflicts: [String: [Conflict]] = [:],
        updatedAt: String
    ) {
        self.place = place ?? "\(position)"
        self.pattern = pattern
        self.store = store
        self.position = position
        self.lastConflicts = lastConflicts
        self.updatedAt = updatedAt
    }
}
