import Foundation
import ListJSON
import ListMerge

extension StoreTransaction {
    /// Where the replica list `list` stands: source, head version, pending and pushed local changes,
    /// the last push's conflicts; `nil` for a list that is not a replica.
    /// - Throws: `StoreError` `.listNotFound`, `.damaged` (a conflict report that does not decode).
    /// - Complexity: O(outbox) plus the size of the last conflict report.
    package func replicaStatus(of list: String) throws -> ReplicaStatus? {
        let info = try listRow(list, locking: false)
        guard let position = try replicaSource(listID: info.id) else { return nil }
        let counts = try outboxCounts(listID: info.id)
        return ReplicaStatus(
            list: list, source: position, headVersion: info.headVersion, clientID: try clientID(), pending: counts.pending,
            pushed: counts.pushed,
            lastConflicts: try lastConflicts(listID: info.id).map { try Conflict.storedReport($0, of: "the last push of list '\(list)'") }
                ?? [])
    }

    /// Which source the replica list `list` replicates, and up to which version; `nil` for a list
    /// that is not a replica or does not exist.
    /// - Throws: `StoreError` `.damaged`, `.io` when the rows cannot be read (never `.listNotFound`).
    /// - Complexity: O(1).
    package func replicaSource(of list: String) throws -> ReplicaSource? {
        do {
            return try replicaSource(listID: try listRow(list, locking: false).id)
        } catch StoreError.Code.listNotFound {
            return nil
        }
    }

    /// A list's head version and digest, whether it holds any section or local change, and its
    /// replica position; `nil` when the list does not exist.
    /// - Complexity: O(1): no snapshot is read.
    package func replicaHead(of list: String) throws -> ReplicaHead? {
        let info: ListRow
        do {
            info = try listRow(list, locking: false)
        } catch StoreError.Code.listNotFound {
            return nil
        }
        return ReplicaHead(
            position: try replicaSource(listID: info.id), version: info.headVersion, digest: info.headDigest,
            holdsData: try holdsSections(listID: info.id), hasLocalChanges: try replicaState(listID: info.id).hasLocalChanges)
    }

    /// Records that the outbox entry `answer.seq` of `list`, pushed under `client`, was pushed and
    /// how the source answered (the entry keeps no answer when it moved to another client id
    /// meanwhile); the answer's conflicts become the last push's.
    /// - Throws: `StoreError` `.listNotFound`.
    package func recordPushed(_ answer: PushAnswer, client: String, of list: String) throws {
        let info = try listRow(list, locking: true)
        // The source took the change, so its list has the blobs the change refers to: the
        // replica's copies of them are a cache from now on (`trimBlobs`).
        if let pushed = try outbox(of: info).first(where: { $0.seq == answer.seq && $0.client == client }),
            let references = try? _BlobMentions.references(in: pushed.intents), !references.isEmpty
        {
            try insertListBlobs(listID: info.id, hashes: Set(references.map(\.hash)), uploaded: false)
        }
        try setPushedVersion(answer.version, listID: info.id, seq: answer.seq, ifClient: client)
        try setLastConflicts(
            answer.conflicts.isEmpty ? nil : Array(Conflict.jsonValue(answer.conflicts).serialized().utf8), listID: info.id)
    }

    /// Moves the changes of `list` that a source refused under `id` to a new client id, because the
    /// source recorded `id` for a change other than this replica's (its store was copied or
    /// restored, or a push was forged): the entries from `id.seq` on that are still under
    /// `id.client` and were not answered move to `PushRule.clientID(replacing:)`; the store's later
    /// local changes get a new random id when the store's id was `id.client`. Entries the source
    /// answered stay where the source recorded them. Returns the id the entries moved to.
    /// - Throws: `StoreError` `.listNotFound`.
    package func takeNewClientID(for list: String, replacing id: PushID) throws -> String {
        let info = try listRow(list, locking: true)
        let client = PushRule.clientID(replacing: id)
        try replaceClientID(id.client, with: UUID().uuidString.lowercased())
        try moveOutbox(listID: info.id, from: id, to: client)
        return client
    }
}

extension Conflict {
    /// Decodes a conflict report as a store keeps it (`Conflict.jsonValue(_:)`, serialized).
    /// - Throws: `StoreError` `.damaged`, naming `what` the report is of.
    package static func storedReport(_ bytes: [UInt8], of what: String) throws -> [Conflict] {
        do {
            return try Conflict.conflicts(decoding: try JSONParser().parse(bytes))
        } catch {
            throw StoreError(.damaged, "the conflict report of \(what) does not decode: \(error)")
        }
    }
}
