/// For a list that replicates a list of another store: which store and list it follows, and the
/// source version (with its digest) that the replica's head equals.
public struct ReplicaSource: Hashable, Sendable {
    /// The source store, as it identified itself when this version was applied.
    public var store: StoreIdentity
    /// The source list's name.
    public var list: String
    /// The source version the replica's head equals.
    public var version: Int
    /// That version's digest (equal to the replica head's digest).
    public var digest: ListDigest

    /// A replica position.
    public init(store: StoreIdentity, list: String, version: Int, digest: ListDigest) {
        self.store = store
        self.list = list
        self.version = version
        self.digest = digest
    }
}
