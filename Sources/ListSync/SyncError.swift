import ListStore

/// Why a consumer must resync instead of replaying the journal.
public enum ResyncReason: String, Hashable, Sendable, Codable, CustomStringConvertible {
    /// The journal after the consumer's version was pruned.
    case pruned
    /// The cursor was issued by another store (another UUID).
    case differentStore
    /// The store was reset or restored since (its epoch changed).
    case epochChanged
    /// What the consumer holds does not match the source's digest at its version (a replica changed
    /// locally, or a replayed commit did not reproduce the source's digest).
    case digestMismatch
    /// The consumer's version is newer than the source's head (the source went back in time).
    case aheadOfSource
    /// The replica list already held data without recording which source version it equals.
    case noCursor
    /// The list the replica followed was deleted at the source, and another list took its name:
    /// the replica now follows the new list, and its local changes were reported as `listDeleted`
    /// conflicts instead of being merged into it.
    case listReplaced
    /// The source's history is not the one the follower's cursor is of: it was restored from a
    /// backup without `advance-epoch`, and handed the cursor's feed position to another event.
    case historyChanged
    /// The next journal entry is larger than the client holds at once (`HTTPSource.maxPageBytes`):
    /// the replica copies the source's head in pages instead.
    case tooLarge

    /// The raw value.
    public var description: String { rawValue }
}

/// An error of a consumer.
public enum SyncError: Error, Sendable, CustomStringConvertible {
    /// The journal cannot bring the consumer up to date: it must resync (a replica does so by diff).
    case resyncRequired(ResyncReason, message: String)
    /// Applying source `version` gave a digest other than the source's.
    case diverged(version: Int, expected: ListDigest, actual: ListDigest)
    /// The source could not be reached or answered nonsense (a network source). `transient` says
    /// whether trying again later may heal it: no connection, a timeout, a connection lost before the
    /// answer was complete, a server answering 502, 503 or 504 (a server being restarted or
    /// deployed). An answer that is not the expected document, larger than the client accepts, or a
    /// redirect to another origin is not transient.
    case transport(String, transient: Bool = false)
    /// The source refused the credentials (a network source answering 401).
    case unauthorized(String)
    /// Refused because it would lose or misdirect data, and nothing was changed: a push or sync to
    /// a store that is not the replica's source, a pull that would turn a list with a history of
    /// its own (or a replica of another store) into a replica of this source without
    /// `ReplicaPullOptions.replacing`, a pull that would make a store follow itself through a
    /// cycle.
    case refused(String)

    /// One line for people.
    public var description: String {
        switch self {
        case .resyncRequired(let reason, let message): "resync required (\(reason)): \(message)"
        case .diverged(let version, let expected, let actual):
            "diverged at source version \(version): expected digest \(expected.hex), got \(actual.hex)"
        case .transport(let message, _), .unauthorized(let message), .refused(let message): message
        }
    }

    /// Whether trying again later may heal this error (a `.transport` error marked transient).
    public var isTransient: Bool {
        if case .transport(_, let transient) = self { return transient }
        return false
    }

    /// The reason, for `.resyncRequired` (and `.digestMismatch` for `.diverged`).
    public var resyncReason: ResyncReason? {
        switch self {
        case .resyncRequired(let reason, _): reason
        case .diverged: .digestMismatch
        case .transport, .unauthorized, .refused: nil
        }
    }
}
