/// A consumer registered on a list: pruning keeps the journal after the version it acknowledged.
public struct ConsumerInfo: Hashable, Sendable {
    /// The consumer's name (unique per list).
    public var name: String
    /// The list it follows.
    public var list: String
    /// The last version it acknowledged having applied.
    public var version: Int
    /// When it registered (ISO 8601, UTC).
    public var registeredAt: String
    /// When it last acknowledged (ISO 8601, UTC).
    public var acknowledgedAt: String

    /// A consumer's record as an engine read it (package-visible: ListStorePostgres makes them).
    package init(name: String, list: String, version: Int, registeredAt: String, acknowledgedAt: String) {
        self.name = name
        self.list = list
        self.version = version
        self.registeredAt = registeredAt
        self.acknowledgedAt = acknowledgedAt
    }
}
