import Crypto
import ListJSON
import ListMerge

extension Push {
    /// The push's fingerprint: the SHA-256, in lowercase hex, of its intents, author and message as
    /// one canonical JSON document (`{"author":…,"intents":[…],"message":…}`). A source records it
    /// with the push's id, so that the same id with other content is told apart from a retry: two
    /// replicas that share a client id (a copied file, a restored backup) never have one's change
    /// taken for the other's.
    ///
    /// ```swift
    /// let fingerprint = push.fingerprint     // e.g. "3f9a…" (64 hex digits)
    /// ```
    /// - Complexity: O(size of the intents).
    public var fingerprint: String {
        let document = JSONValue.object([
            "author": author.map(JSONValue.string) ?? .null,
            "intents": Intent.jsonValue(intents),
            "message": message.map(JSONValue.string) ?? .null,
        ])
        return _Hex.string(SHA256.hash(data: document.serializedBytes()).withUnsafeBytes { Array($0) })
    }
}

/// The rule a source applies to a push before it merges it, written once for every
/// engine: the engine reads its record and this rule decides.
///
/// - The client id is an exact string of 1 to 1,024 bytes of UTF-8 without control characters, and
///   the sequence number is positive: anything else is refused (`.invalidArgument`) by every engine
///   alike (SQLite would cut a string at U+0000, PostgreSQL text cannot hold it).
/// - A push whose (client, seq) is recorded with the same fingerprint is a retry: answered from the
///   record, nothing applied. With another fingerprint it is another change under an id already
///   used (a copied or restored replica, or a forged push): refused with `.pushMismatch`, nothing
///   applied, and the replica takes a new client id.
/// - A push not recorded must be its client's next on that list: the first of a client may carry any
///   sequence number (a replica's numbering goes on across the client ids it takes), each later one
///   must follow the client's latest recorded one. A gap, or a number below the latest that was
///   never recorded, is refused with `.pushOutOfOrder` and records nothing, so it poisons nothing.
package enum PushRule {
    /// What the source does with a push.
    package enum Verdict: Equatable {
        /// A retry: answer from the record.
        case answerFromRecord
        /// A new change: merge it and record it.
        case merge
    }

    /// The client id a replica moves its unanswered changes to when the source recorded `id` for
    /// another change: derived from `id` alone (a UUID-shaped SHA-256 of it), so that two copies of
    /// one replica that hold the same changes move them to the same id, and the second to push them
    /// is answered "already merged" instead of applying them twice. Copies whose changes differ meet
    /// again under the derived id, and the one refused there moves on from it the same way.
    package static func clientID(replacing id: PushID) -> String {
        let digest = SHA256.hash(data: Array("liststore client \(id.client) \(id.seq)".utf8)).withUnsafeBytes { Array($0.prefix(16)) }
        var bytes = digest
        bytes[6] = bytes[6] & 0x0F | 0x50  // version 5 (name-based), variant 10: a UUID in form
        bytes[8] = bytes[8] & 0x3F | 0x80
        let hex = _Hex.string(bytes)
        let parts = [hex.prefix(8), hex.dropFirst(8).prefix(4), hex.dropFirst(12).prefix(4), hex.dropFirst(16).prefix(4), hex.dropFirst(20)]
        return parts.joined(separator: "-")
    }

    /// Why `id` cannot be recorded, or `nil`.
    package static func problem(with id: PushID) -> String? {
        guard !id.client.isEmpty, id.client.utf8.count <= 1024 else {
            return "a push's client id must have 1 to 1024 bytes, not \(id.client.utf8.count)"
        }
        if id.client.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) {
            return "a push's client id must not contain control characters: \(id.client.debugDescription)"
        }
        guard id.seq >= 1 else { return "a push's sequence number must be at least 1, not \(id.seq)" }
        return nil
    }

    /// Decides what to do with `push` (whose fingerprint is `fingerprint`), given the source's record
    /// for its id (`recorded`: whether there is one, and its fingerprint, `nil` for a push recorded
    /// before fingerprints were) and the latest sequence number recorded for its client on the list.
    ///
    /// - Throws: `StoreError` `.invalidArgument`, `.pushMismatch`, `.pushOutOfOrder`.
    package static func verdict(
        for push: Push, fingerprint: String, recorded: (found: Bool, fingerprint: String?), latestSeq: Int?
    ) throws -> Verdict {
        let id = push.id
        if let problem = problem(with: id) { throw StoreError(.invalidArgument, problem) }
        if recorded.found {
            if let kept = recorded.fingerprint, kept != fingerprint {
                throw StoreError(
                    .pushMismatch,
                    "push \(id.seq) of client \(id.client) was recorded with other content: another replica pushed under this client id (a copied or restored replica takes a new one)")
            }
            return .answerFromRecord
        }
        if let latest = latestSeq, id.seq - 1 != latest {
            throw StoreError(
                .pushOutOfOrder,
                id.seq > latest
                    ? "push \(id.seq) of client \(id.client) skips ahead: the client's latest recorded push is \(latest)"
                    : "push \(id.seq) of client \(id.client) comes after its push \(latest) and was never recorded")
        }
        return .merge
    }
}
