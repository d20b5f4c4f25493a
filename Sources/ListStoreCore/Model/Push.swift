import ListMerge

/// Who pushed a change: a replica store's client id and the change's sequence number in its outbox
/// (ListMerge's article "Offline Writes and Conflicts"). A source records each pair once.
public struct PushID: Hashable, Sendable, CustomStringConvertible {
    /// The replica store's client id (a lowercase UUID, see `Store.clientID()`).
    public var client: String
    /// The change's sequence number: 1, 2, 3, … per list.
    public var seq: Int

    /// A push id.
    public init(client: String, seq: Int) {
        self.client = client
        self.seq = seq
    }

    /// `client#seq`.
    public var description: String { "\(client)#\(seq)" }
}

/// One local change of a replica, sent to its source: the intents that turn the replica's list before
/// the change into the list after it, with who made it.
///
/// ```swift
/// let push = Push(id: PushID(client: try replica.clientID(), seq: 1), intents: intents, author: "ana")
/// let answer = try source.merge(push, into: "inbox")
/// ```
public struct Push: Hashable, Sendable {
    /// The client id and sequence number.
    public var id: PushID
    /// The change, by identity.
    public var intents: [Intent]
    /// Who made it, if they said.
    public var author: String?
    /// Why, if they said.
    public var message: String?
    /// The identity of the list the change was made for (`ListSummary.id`), when the replica knows
    /// it: a source whose list of that name has another identity (the list was deleted, and a new
    /// one took its name) refuses the push with `StoreError.Code.listNotFound`, so that a change is
    /// never merged into a list it was not made for. `nil`: merged into whatever list has the name.
    public var listID: String?

    /// A push.
    public init(id: PushID, intents: [Intent], author: String? = nil, message: String? = nil, listID: String? = nil) {
        self.listID = listID
        self.id = id
        self.intents = intents
        self.author = author
        self.message = message
    }
}

/// What a source did with a push: the version that holds it, and what its merge could not honour.
public struct PushAnswer: Hashable, Sendable {
    /// The list.
    public var list: String
    /// The source version that holds the change (the head when the merge changed nothing).
    public var version: Int
    /// The push's sequence number.
    public var seq: Int
    /// Whether the source had already merged this push: the answer is the recorded one, nothing was
    /// applied again.
    public var duplicate: Bool
    /// The merge's conflict report.
    public var conflicts: [Conflict]
    /// The fingerprint of the push the source recorded under this id (`Push.fingerprint`); `nil`
    /// for a push recorded before sources kept fingerprints. A replica compares it with its own
    /// change's before it takes the change as the source's.
    public var fingerprint: String?

    /// An answer.
    public init(list: String, version: Int, seq: Int, duplicate: Bool, conflicts: [Conflict], fingerprint: String? = nil) {
        self.list = list
        self.version = version
        self.seq = seq
        self.duplicate = duplicate
        self.conflicts = conflicts
        self.fingerprint = fingerprint
    }

    /// Whether this record is of `push`: the same sequence number, and the same fingerprint (or a
    /// record without one, made before sources kept them).
    public func records(_ push: Push) -> Bool {
        seq == push.id.seq && (fingerprint == nil || fingerprint == push.fingerprint)
    }
}
