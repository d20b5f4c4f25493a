import Foundation
import ListJSON
import ListMerge

// The store's public operations that are not commits, pushes or replica steps, written once over a
// driver's transaction: each engine's public method opens its transaction and calls one of these.

extension StoreTransaction {
    /// The lists of the store, by name (byte order).
    /// - Complexity: O(lists).
    package func lists() throws -> [ListSummary] {
        try summaries(of: nil)
    }

    /// One list's summary.
    /// - Throws: `StoreError` `.listNotFound`.
    /// - Complexity: O(1).
    package func summary(of list: String) throws -> ListSummary {
        try _Names.checkFindable(list, in: location)
        guard let summary = try summaries(of: list).first else {
            throw StoreError.listNotFound(list, in: location)
        }
        return summary
    }

    /// The head of `list`, or with `version`, that version of its retained history.
    /// - Throws: `StoreError` `.listNotFound`, `.versionNotFound`, `.damaged`.
    /// - Complexity: see `snapshot(of:at:)` over a list row.
    package func snapshot(of list: String, at version: Int?) throws -> ListSnapshot {
        try snapshot(of: try listRow(list, locking: false), at: version).snapshot
    }

    /// One minimal staged changeset from `version` to `otherVersion` (default: the head).
    /// - Throws: as `snapshot(of:at:)`.
    /// - Complexity: two snapshots and one diff.
    package func changeset(
        of list: String, from version: Int, to otherVersion: Int?
    ) throws -> (from: ListSnapshot, to: ListSnapshot, changeset: ListChangeset) {
        let info = try listRow(list, locking: false)
        let from = try snapshot(of: info, at: version).snapshot
        let to = try snapshot(of: info, at: otherVersion).snapshot
        return (from, to, ListChangeset(source: from.sections, target: to.sections))
    }

    /// The consumers of `list`, by name.
    /// - Throws: `StoreError` `.listNotFound`.
    package func consumers(of list: String) throws -> [ConsumerInfo] {
        try consumers(of: try listRow(list, locking: false))
    }

    /// The pushes of `client` to `list` with a sequence number in `seqs`, at most 1,000; none for a
    /// client id no push may carry.
    /// - Throws: `StoreError` `.listNotFound`, `.damaged`.
    package func pushes(from client: String, to list: String, seqs: ClosedRange<Int>) throws -> [PushAnswer] {
        let info = try listRow(list, locking: false)
        guard PushRule.problem(with: PushID(client: client, seq: 1)) == nil else { return [] }
        return try recordedPushes(listID: info.id, list: list, client: client, seqs: seqs)
    }

    /// The local changes of the replica list `list` not yet confirmed, oldest first.
    /// - Throws: `StoreError` `.listNotFound`, `.damaged`.
    package func outbox(of list: String) throws -> [OutboxEntry] {
        try outbox(of: try listRow(list, locking: false))
    }

    /// The pending state of the replica list `list`; `nil` when it is not a replica or does not
    /// exist.
    package func pendingState(of list: String) throws -> PendingState? {
        do {
            return try pendingState(of: try listRow(list, locking: false))
        } catch StoreError.Code.listNotFound {
            return nil
        }
    }

    /// Bumps the epoch and gives the store a new client id: a restored store must not push under
    /// sequence numbers a source recorded for changes made after its backup.
    /// - Returns: the new identity.
    package func advanceEpoch() throws -> StoreIdentity {
        try advanceEpoch(clientID: UUID().uuidString.lowercased())
        return try identity()
    }

    /// Checks the store: the engine's own integrity check, then each list (or only `list`) by
    /// `verifyList`. Damage gives a report, not an error, whenever the rows can be read at all; an
    /// `.io` failure (a lost connection) is thrown, and so is the cancellation of the task that
    /// runs the check (between lists, or where a driver interrupts a statement).
    /// - Throws: `StoreError` `.listNotFound` (for `list`), `.io`; `CancellationError`.
    /// - Complexity: O(journal + n) per list.
    package func verify(list: String?, progress: ((VerificationProgress) -> Void)?) throws -> VerificationReport {
        var report = VerificationReport(integrityProblems: try integrityProblems(), lists: [])
        let names: [String]
        if let list {
            names = [try listRow(list, locking: false).name]
        } else {
            do {
                names = try listNames()
            } catch let error as StoreError where error.code == .io {
                throw error
            } catch let error as CancellationError {
                throw error
            } catch {
                report.integrityProblems.append("the list table cannot be read: \(error)")
                return report
            }
        }
        for name in names {
            try Task.checkCancellation()
            report.lists.append(try verifyList(name, progress: progress))
        }
        return report
    }
}

extension OutboxEntry {
    /// An outbox entry from its stored row, its intents decoded from their JSON.
    /// - Throws: `StoreError.damaged` when the intents do not decode.
    package static func stored(
        seq: Int, intentsJSON: [UInt8], author: String?, message: String?, createdAt: String, localVersion: Int,
        pushedVersion: Int?, client: String, list: String
    ) throws -> OutboxEntry {
        let intents: [Intent]
        do {
            intents = try Intent.intents(decoding: try JSONParser().parse(intentsJSON))
        } catch {
            throw StoreError(.damaged, "local change \(seq) of list '\(list)' does not decode: \(error)")
        }
        return OutboxEntry(
            seq: seq, intents: intents, author: author, message: message, createdAt: createdAt, localVersion: localVersion,
            pushedVersion: pushedVersion, client: client)
    }
}
