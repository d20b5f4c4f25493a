import Foundation
import ListJSON
import ListMerge
import ListStoreCore
import PostgresNIO

extension PostgresStore {
    /// Merges a replica's local change into `list`, as `Store.merge(_:into:)` does:
    /// rebases the push's intents onto the head with the rules of `Rebase` and commits the result as
    /// an ordinary version, in one transaction that also records the push's id and its conflict
    /// report. A push whose id is recorded is answered from the record (`duplicate`) and applies
    /// nothing, so a replica may send a push again whenever it did not hear the answer.
    ///
    /// ```swift
    /// let answer = try await store.merge(push, into: "inbox")
    /// answer.version        // the version that holds the change
    /// answer.conflicts      // what could not be honoured as written
    /// ```
    ///
    /// - Returns: the version holding the change (the head when the merge changed nothing), and the
    ///   conflicts.
    /// The push's id is checked first by the same rule (`PushRule`): the same id recorded with
    /// other content is refused with `.pushMismatch`, a sequence number that is not the client's
    /// next with `.pushOutOfOrder`.
    ///
    /// - Throws: `StoreError` `.listNotFound`, `.invalidSnapshot` (a change that would make the list
    ///   invalid), `.invalidArgument` (a client id that is empty, longer than 1,024 bytes or holds
    ///   control characters, a sequence number below 1, an author or message holding U+0000),
    ///   `.pushMismatch`, `.pushOutOfOrder`, `.io`, `.damaged`; `CancellationError` when the task is
    ///   cancelled before the transaction starts. Nothing is written when it throws.
    /// - Complexity: O(n + m) for n items and m intents (see `Rebase`), plus the commit's diff.
    public func merge(_ push: Push, into list: String) async throws -> PushAnswer {
        let id = push.id
        if let problem = PushRule.problem(with: id) { throw StoreError(.invalidArgument, problem) }
        let fingerprint = push.fingerprint
        var recorded: PushAnswer?
        var conflicts: [Conflict] = []
        let result = try await commit(
            to: list, expectedVersion: nil, author: push.author, message: push.message,
            makeTarget: { connection, head in
                guard head.listID != 0 else { throw StoreError(.listNotFound, "no list named '\(list)' in \(location)") }
                let record = try await recordedPushes(connection, listID: head.listID, client: id.client, seqs: id.seq...id.seq, list: list).first
                var latest: Int?
                let rows = try await connection.query(
                    "SELECT max(seq) FROM push WHERE list_id = \(head.listID) AND client_id = \(id.client)", logger: logger)
                for try await seq in rows.decode(Int?.self) { latest = seq }
                let verdict = try PushRule.verdict(
                    for: push, fingerprint: fingerprint, recorded: (record != nil, record?.fingerprint), latestSeq: latest)
                if verdict == .answerFromRecord, var record {
                    record.duplicate = true
                    recorded = record
                    return head.sections
                }
                let rebase = try await _BlockingThreads.shared.run { Rebase(push.intents, onto: head.sections) }
                conflicts = rebase.conflicts
                return rebase.snapshot
            },
            alsoWrite: { connection, listID, result in
                guard recorded == nil else { return }
                let report = ByteBuffer(bytes: Array(Conflict.jsonValue(conflicts).serialized().utf8))
                try await connection.query(
                    """
                    INSERT INTO push (list_id, client_id, seq, version, conflicts, pushed_at, fingerprint)
                    VALUES (\(listID), \(id.client), \(id.seq), \(result.version), \(report), \(_Time.iso8601(Date())), \(fingerprint))
                    """, logger: self.logger)
                if result.changed {
                    try await connection.query(
                        """
                        UPDATE journal SET push_client = \(id.client), push_seq = \(id.seq),
                            conflicts = \(conflicts.isEmpty ? nil : report)
                        WHERE list_id = \(listID) AND version = \(result.version)
                        """, logger: self.logger)
                }
            })
        return recorded
            ?? PushAnswer(list: list, version: result.version, seq: id.seq, duplicate: false, conflicts: conflicts, fingerprint: fingerprint)
    }

    /// The pushes of `client` with a sequence number in `seqs` that `list` recorded, in order, each
    /// with the version that holds it and its conflicts (`duplicate` is false); at most 1,000, as
    /// `Store.pushes(from:to:seqs:)`.
    ///
    /// ```swift
    /// let recorded = try await source.pushes(from: client, to: "inbox", seqs: 4...9)
    /// ```
    /// - Throws: `StoreError` `.listNotFound`, `.damaged`, `.io`; `CancellationError` when the task is
    ///   cancelled before the read starts.
    /// - Complexity: O(log p + k) for p recorded pushes and k returned (plus their reports).
    public func pushes(from client: String, to list: String, seqs: ClosedRange<Int>) async throws -> [PushAnswer] {
        try await transaction(.readOnly) { connection in
            let info = try await listInfo(connection, list: list)
            return try await recordedPushes(connection, listID: info.id, client: client, seqs: seqs, list: list)
        }
    }

    /// The recorded pushes of `client` with a sequence number in `seqs`, in order, at most 1,000.
    private func recordedPushes(
        _ connection: PostgresConnection, listID: Int64, client: String, seqs: ClosedRange<Int>, list: String
    ) async throws -> [PushAnswer] {
        // A client id no push may carry was never recorded.
        guard PushRule.problem(with: PushID(client: client, seq: 1)) == nil else { return [] }
        let rows = try await connection.query(
            """
            SELECT seq, version, conflicts, fingerprint FROM push
            WHERE list_id = \(listID) AND client_id = \(client) AND seq BETWEEN \(seqs.lowerBound) AND \(seqs.upperBound)
            ORDER BY seq LIMIT 1000
            """, logger: logger)
        var answers: [PushAnswer] = []
        for try await (seq, version, report, fingerprint) in rows.decode((Int, Int, ByteBuffer, String?).self) {
            answers.append(PushAnswer(
                list: list, version: version, seq: seq, duplicate: false,
                conflicts: try Self.decodeConflicts(report, of: "push \(PushID(client: client, seq: seq)) of list '\(list)'"),
                fingerprint: fingerprint))
        }
        return answers
    }
}
