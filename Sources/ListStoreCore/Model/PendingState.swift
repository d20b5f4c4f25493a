import ListMerge

/// What a replica list holds for a pull with local changes: what ListSync's replicas read through
/// `ReplicaStore.pendingState(of:)` (system programming interface `Replication`).
@_spi(Replication) public struct PendingState: Sendable {
    /// The source and the confirmed source version.
    public var position: ReplicaSource
    /// The replica's head version.
    public var headVersion: Int
    /// The confirmed state: the source's snapshot at `position.version`.
    public var confirmed: [ListSection]
    /// The outbox, oldest first.
    public var outbox: [OutboxEntry]
    /// The store's client id.
    public var clientID: String

    /// A pending state as read by an engine.
    package init(position: ReplicaSource, headVersion: Int, confirmed: [ListSection], outbox: [OutboxEntry], clientID: String) {
        self.position = position
        self.headVersion = headVersion
        self.confirmed = confirmed
        self.outbox = outbox
        self.clientID = clientID
    }
}
