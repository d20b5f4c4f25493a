import ListMerge

/// A local change of a replica list that its confirmed state does not hold yet: pending
/// until a push, then pushed until a pull confirms it.
public struct OutboxEntry: Hashable, Sendable {
    /// The change's sequence number (1, 2, 3, … per list).
    public var seq: Int
    /// The change, by identity: the intents from the list before it to the list after it.
    public var intents: [Intent]
    /// Who made it, if they said.
    public var author: String?
    /// Why, if they said.
    public var message: String?
    /// When it was committed (ISO 8601, UTC, milliseconds).
    public var createdAt: String
    /// The replica's version the change made.
    public var localVersion: Int
    /// The source version a push was recorded as; `nil` until it is pushed.
    public var pushedVersion: Int?
    /// The client id the change is pushed under: the store's client id when the change was made,
    /// or a newer one when the source had recorded this id and sequence number for another change.
    public var client: String

    /// An outbox entry, as the store describes it.
    public init(
        seq: Int, intents: [Intent], author: String?, message: String?, createdAt: String, localVersion: Int,
        pushedVersion: Int?, client: String
    ) {
        self.client = client
        self.seq = seq
        self.intents = intents
        self.author = author
        self.message = message
        self.createdAt = createdAt
        self.localVersion = localVersion
        self.pushedVersion = pushedVersion
    }
}

extension OutboxEntry {
    /// The push that sends this change: its client id and sequence number, intents, author and
    /// message.
    public var push: Push {
        Push(id: PushID(client: client, seq: seq), intents: intents, author: author, message: message)
    }
}

/// Where a replica list stands: its source and confirmed version, its local changes, and
/// the conflicts its last push was answered with.
public struct ReplicaStatus: Hashable, Sendable {
    /// The replica list.
    public var list: String
    /// The source and the source version of the confirmed state.
    public var source: ReplicaSource
    /// The replica's head version (local).
    public var headVersion: Int
    /// The client id the replica's store pushes under.
    public var clientID: String
    /// Local changes not pushed yet.
    public var pending: Int
    /// Local changes pushed but not yet in the confirmed state.
    public var pushed: Int
    /// The conflicts the source reported for the last push (empty when it merged cleanly).
    public var lastConflicts: [Conflict]

    /// A status.
    public init(
        list: String, source: ReplicaSource, headVersion: Int, clientID: String, pending: Int, pushed: Int,
        lastConflicts: [Conflict]
    ) {
        self.list = list
        self.source = source
        self.headVersion = headVersion
        self.clientID = clientID
        self.pending = pending
        self.pushed = pushed
        self.lastConflicts = lastConflicts
    }
}
