/// A list's head and replica position, read at one instant: what ListSync's replicas read through
/// `ReplicaStore.replicaHead(of:)` (system programming interface `Replication`).
@_spi(Replication) public struct ReplicaHead: Sendable {
    /// The source position, `nil` for a list that is not a replica.
    public var position: ReplicaSource?
    /// The head version.
    public var version: Int
    /// The head digest.
    public var digest: ListDigest
    /// Whether the list holds any section.
    public var holdsData: Bool
    /// Whether local changes are in the outbox.
    public var hasLocalChanges: Bool

    /// A head as read by an engine.
    package init(position: ReplicaSource?, version: Int, digest: ListDigest, holdsData: Bool, hasLocalChanges: Bool) {
        self.position = position
        self.version = version
        self.digest = digest
        self.holdsData = holdsData
        self.hasLocalChanges = hasLocalChanges
    }
}
