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
    /// The identity of the source list (`ListSummary.id`): a new list that takes the name of a
    /// deleted one has another, and the replica does not take it for the list it followed. `nil`
    /// until a pull learns it (a source that does not tell). A position written without one keeps
    /// the identity the replica recorded.
    public var listID: String?

    /// A replica position.
    public init(store: StoreIdentity, list: String, version: Int, digest: ListDigest, listID: String? = nil) {
        self.listID = listID
        self.store = store
        self.list = list
        self.version = version
        self.digest = digest
    }
}
