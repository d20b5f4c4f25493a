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

    /// Decides what to do with `push` (whose fingerprint is `fingerprint`, made only when a record
    /// holds one to compare), given the source's record for its id (`recorded`: whether there is
    /// one, and its fingerprint, `nil` for a push recorded before fingerprints were) and the latest
    /// sequence number recorded for its client on the list.
    ///
    /// - Throws: `StoreError` `.invalidArgument`, `.pushMismatch`, `.pushOutOfOrder`.
    package static func verdict(
        for push: Push, fingerprint: @autoclosure () -> String, recorded: (found: Bool, fingerprint: String?), latestSeq: Int?
    ) throws -> Verdict {
        let id = push.id
        if let problem = problem(with: id) { throw StoreError(.invalidArgument, problem) }
        if recorded.found {
            if let kept = recorded.fingerprint, kept != fingerprint() {
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

/// One row of a source's record of pushes to a list: one push, or a run of a client's pushes that
/// pruning folded into one row (`coversFrom` its first sequence number, `seq` its last).
///
/// A folded run keeps what a retry of any of its pushes needs to be answered exactly once: that
/// each was merged, a version that holds them all (the last one's), and each one's fingerprint, so
/// that another change under a number already used (a replica restored in place from a backup, whose
/// file looks unchanged) is still told apart from a retry. Their conflict reports go with the journal
/// they were pruned with.
///
/// Not API: package-visible for the engines, which store it; the rules that read and fold it are
/// written once here and in `StoreTransaction`.
package struct PushRecord: Hashable, Sendable {
    /// What stands for "recorded without a fingerprint" among a run's fingerprints.
    package static let noFingerprint = String(repeating: "0", count: 64)

    /// The client id.
    package var client: String
    /// The push's sequence number (a run's last).
    package var seq: Int
    /// A folded run's first sequence number; `nil` for one push.
    package var coversFrom: Int?
    /// The version holding the push (a run's last push).
    package var version: Int
    /// The merge's conflict report (none for a run).
    package var conflicts: [Conflict]
    /// The fingerprint of each push the row answers for, from `firstSeq` to `seq`, as the table
    /// keeps a run's: 64 lowercase hexadecimal digits each, in order, `noFingerprint` for a push
    /// recorded before sources kept them.
    package var fingerprints: [UInt8]
    /// When the push (a run's last) was merged, ISO 8601.
    package var pushedAt: String

    /// A row; `fingerprints` must hold 64 digits for each push it answers for.
    /// - Throws: `StoreError` `.damaged` otherwise.
    package init(
        client: String, seq: Int, coversFrom: Int? = nil, version: Int, conflicts: [Conflict], fingerprints: [UInt8], pushedAt: String
    ) throws {
        self.client = client
        self.seq = seq
        self.coversFrom = coversFrom
        self.version = version
        self.conflicts = conflicts
        self.fingerprints = fingerprints
        self.pushedAt = pushedAt
        // A damaged row may hold any numbers: the count of pushes it stands for is computed without
        // overflowing.
        let first = coversFrom ?? seq
        let (span, overflow) = seq.subtractingReportingOverflow(first)
        guard first <= seq, !overflow, span < Int.max / 64 - 1, fingerprints.count == 64 * (span + 1),
              fingerprints.allSatisfy({ _Hex.value($0) != nil })
        else {
            throw StoreError(.damaged, "the record of push \(seq) of client \(client) does not hold one fingerprint for each push it stands for")
        }
    }

    /// One push's row.
    package init(client: String, seq: Int, version: Int, conflicts: [Conflict], fingerprint: String?, pushedAt: String) throws {
        try self.init(
            client: client, seq: seq, version: version, conflicts: conflicts, fingerprints: Array((fingerprint ?? Self.noFingerprint).utf8),
            pushedAt: pushedAt)
    }

    /// The first sequence number this row answers for.
    package var firstSeq: Int { coversFrom ?? seq }

    /// The fingerprint recorded for push `seq` of this row; `nil` for one recorded without.
    package func fingerprint(of seq: Int) -> String? {
        let start = 64 * (seq - firstSeq)
        let digits = String(decoding: fingerprints[start..<start + 64], as: UTF8.self)
        return digits == Self.noFingerprint ? nil : digits
    }

    /// The answers this row gives for the sequence numbers of `seqs` it covers, in order, at most
    /// `limit`.
    /// - Complexity: O(answers).
    package func answers(for seqs: ClosedRange<Int>, list: String, limit: Int) -> [PushAnswer] {
        let (from, through) = (max(firstSeq, seqs.lowerBound), min(seq, seqs.upperBound))
        guard from <= through, limit > 0 else { return [] }
        // Sequence numbers go up to Int.max: the last one asked for is counted without overflow.
        let (capped, overflow) = from.addingReportingOverflow(limit - 1)
        return (from...(overflow ? through : min(through, capped))).map {
            PushAnswer(list: list, version: version, seq: $0, duplicate: false, conflicts: conflicts, fingerprint: fingerprint(of: $0))
        }
    }

    /// How pruning folds a client's records: `records`, the client's rows merged into versions up
    /// to the list's new base, in any order, become one row for the whole run, except the client's
    /// latest push (`latestSeq`), which keeps its own row (the next push must follow it, and a
    /// replica may still be waiting for its report). `nil` when there is nothing to fold: no row
    /// before the latest, or one row that is already a run.
    ///
    /// A client's pushes are recorded in order with no gap (`PushRule`), and versions grow with
    /// their sequence numbers, so the rows merged up to a version are a run from the client's first.
    /// - Throws: `StoreError` `.damaged` for rows that are not such a run.
    /// - Complexity: O(r log r) for r rows, plus O(p) for the p pushes they stand for (a run is
    ///   written again whole when rows join it).
    package static func fold(_ records: [PushRecord], latestSeq: Int) throws -> PushRecord? {
        let foldable = records.filter { $0.seq < latestSeq }.sorted { $0.seq < $1.seq }
        guard let first = foldable.first, let last = foldable.last else { return nil }
        if foldable.count == 1, first.coversFrom != nil { return nil }
        var fingerprints: [UInt8] = []
        for (row, next) in zip(foldable, foldable.dropFirst().map(Optional.some) + [nil]) {
            guard next.map({ $0.firstSeq == row.seq + 1 }) ?? true else {
                throw StoreError(.damaged, "the record of pushes of client \(row.client) has a gap or overlap at push \(row.seq)")
            }
            fingerprints += row.fingerprints
        }
        return try PushRecord(
            client: last.client, seq: last.seq, coversFrom: first.firstSeq, version: foldable.map(\.version).max()!, conflicts: [],
            fingerprints: fingerprints, pushedAt: last.pushedAt)
    }
}
