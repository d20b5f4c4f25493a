import ListMerge

// The row steps of replica lists, written once for the SQL engines: the outbox of local changes,
// the confirmed state, the position at the source and the conflicts of the last push.
extension SQLTransaction {
    // MARK: Outbox

    package func takeOutboxSeq(listID: Int64) throws -> (seq: Int, confirmedKept: Bool, version: Int, digest: ListDigest)? {
        try row(
            """
            UPDATE replica_source SET next_seq = next_seq + 1 WHERE list_id = ?
            RETURNING next_seq - 1, confirmed IS NOT NULL, version, digest
            """, [.integer(listID)]
        ).map { (try $0.int(0), try $0.bool(1), try $0.int(2), ListDigest(hex: try $0.string(3))) }
    }

    package func confirmedState(listID: Int64) throws -> [UInt8]? {
        try row("SELECT confirmed FROM replica_source WHERE list_id = ?", [.integer(listID)])?.optionalBytes(0)
    }

    package func keepConfirmed(_ document: [UInt8], listID: Int64) throws {
        try run("UPDATE replica_source SET confirmed = ? WHERE list_id = ?", [.bytes(document), .integer(listID)])
    }

    package func outbox(of info: ListRow) throws -> [OutboxEntry] {
        try rows(
            """
            SELECT seq, intents, author, message, created_at, local_version, pushed_version,
                coalesce(client_id, (SELECT client_id FROM store WHERE id = 1), '')
            FROM outbox WHERE list_id = ? ORDER BY seq
            """, [.integer(info.id)]
        ).map { row in
            try OutboxEntry.stored(
                seq: try row.int(0), intentsJSON: try row.bytes(1), author: try row.optionalString(2), message: try row.optionalString(3),
                createdAt: try row.string(4), localVersion: try row.int(5), pushedVersion: try row.optionalInt(6),
                client: try row.string(7), list: info.name)
        }
    }

    package func insertOutbox(
        listID: Int64, seq: Int, intentsJSON: [UInt8], author: String?, message: String?, createdAt: String, localVersion: Int
    ) throws {
        try run(
            """
            INSERT INTO outbox (list_id, seq, intents, author, message, created_at, local_version, client_id)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .integer(listID), SQLValue(seq), .bytes(intentsJSON), SQLValue(author), SQLValue(message), .text(createdAt),
                SQLValue(localVersion), .text(try clientIDForLocalChanges()),
            ])
    }

    package func deleteOutbox(listID: Int64, seqs: [Int]) throws {
        try inRuns(of: seqs) { chunk, placeholders in
            try run("DELETE FROM outbox WHERE list_id = ? AND seq IN (\(placeholders))", [.integer(listID)] + chunk.map(SQLValue.init))
        }
    }

    package func setPushedVersion(_ version: Int?, listID: Int64, seq: Int, ifClient client: String?) throws {
        try run(
            "UPDATE outbox SET pushed_version = ? WHERE list_id = ? AND seq = ? AND (CAST(? AS TEXT) IS NULL OR client_id = ?)",
            [SQLValue(version), .integer(listID), SQLValue(seq), SQLValue(client), SQLValue(client)])
    }

    package func outboxCount(listID: Int64) throws -> Int {
        try row("SELECT count(*) FROM outbox WHERE list_id = ?", [.integer(listID)])?.int(0) ?? 0
    }

    package func outboxCounts(listID: Int64) throws -> (pending: Int, pushed: Int) {
        try row("SELECT count(*) - count(pushed_version), count(pushed_version) FROM outbox WHERE list_id = ?", [.integer(listID)])
            .map { (try $0.int(0), try $0.int(1)) } ?? (0, 0)
    }

    package func moveOutbox(listID: Int64, from id: PushID, to client: String) throws {
        try run(
            "UPDATE outbox SET client_id = ? WHERE list_id = ? AND client_id = ? AND seq >= ? AND pushed_version IS NULL",
            [.text(client), .integer(listID), .text(id.client), SQLValue(id.seq)])
    }

    // MARK: Position and conflicts

    package func replicaSource(listID: Int64) throws -> ReplicaSource? {
        try row(
            "SELECT store_uuid, store_epoch, list_name, version, digest, list_uid FROM replica_source WHERE list_id = ?",
            [.integer(listID)]
        )
            .map { row in
                ReplicaSource(
                    store: StoreIdentity(uuid: try row.string(0), epoch: try row.int(1)), list: try row.string(2),
                    version: try row.int(3), digest: ListDigest(hex: try row.string(4)), listID: try row.optionalString(5))
            }
    }

    package func replicaState(listID: Int64) throws -> (hasLocalChanges: Bool, sourceVersion: Int?) {
        try row(
            "SELECT EXISTS (SELECT 1 FROM outbox WHERE list_id = ?), (SELECT version FROM replica_source WHERE list_id = ?)",
            [.integer(listID), .integer(listID)]
        ).map { (try $0.bool(0), try $0.optionalInt(1)) } ?? (false, nil)
    }

    package func setReplicaSource(_ source: ReplicaSource, listID: Int64, updatedAt: String) throws {
        try run(
            """
            INSERT INTO replica_source (list_id, store_uuid, store_epoch, list_name, version, digest, updated_at, list_uid)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (list_id) DO UPDATE SET store_uuid = excluded.store_uuid, store_epoch = excluded.store_epoch,
                list_name = excluded.list_name, version = excluded.version, digest = excluded.digest,
                updated_at = excluded.updated_at, list_uid = coalesce(excluded.list_uid, replica_source.list_uid)
            """,
            [
                .integer(listID), .text(source.store.uuid), SQLValue(source.store.epoch), .text(source.list), SQLValue(source.version),
                .text(source.digest.hex), .text(updatedAt), SQLValue(source.listID),
            ])
        // The client id is made for this store (on SQLite, for its file) from the replica's first pull on.
        _ = try clientIDForLocalChanges()
    }

    package func moveReplicaSource(
        listID: Int64, to position: ReplicaSource, confirmed: [UInt8]?, lastConflicts: [UInt8]?, updatedAt: String
    ) throws {
        try run(
            """
            UPDATE replica_source SET store_uuid = ?, store_epoch = ?, list_name = ?, version = ?, digest = ?,
                confirmed = ?, updated_at = ?, last_conflicts = coalesce(?, last_conflicts), list_uid = coalesce(?, list_uid)
            WHERE list_id = ?
            """,
            [
                .text(position.store.uuid), SQLValue(position.store.epoch), .text(position.list), SQLValue(position.version),
                .text(position.digest.hex), SQLValue(confirmed), .text(updatedAt), SQLValue(lastConflicts),
                SQLValue(position.listID), .integer(listID),
            ])
    }

    // MARK: Replica sets

    package func replicaSet(_ pattern: String) throws
        -> (store: StoreIdentity, position: Int, place: String?, lastConflicts: [UInt8]?, updatedAt: String)?
    {
        try row(
            "SELECT store_uuid, store_epoch, position, last_conflicts, updated_at, cursor FROM replica_set WHERE pattern = ?",
            [.text(pattern)]
        ).map { row in
            (
                StoreIdentity(uuid: try row.string(0), epoch: try row.int(1)), try row.int(2), try row.optionalString(5),
                try row.optionalBytes(3), try row.string(4)
            )
        }
    }

    package func setReplicaSet(
        _ pattern: String, store: StoreIdentity, position: Int, place: String, lastConflicts: [UInt8]?, updatedAt: String
    ) throws {
        try run(
            """
            INSERT INTO replica_set (pattern, store_uuid, store_epoch, position, last_conflicts, updated_at, cursor)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (pattern) DO UPDATE SET store_uuid = excluded.store_uuid, store_epoch = excluded.store_epoch,
                position = excluded.position, last_conflicts = coalesce(excluded.last_conflicts, replica_set.last_conflicts),
                updated_at = excluded.updated_at, cursor = excluded.cursor
            """,
            [
                .text(pattern), .text(store.uuid), SQLValue(store.epoch), SQLValue(position), SQLValue(lastConflicts), .text(updatedAt),
                .text(place),
            ])
    }

    package func lastConflicts(listID: Int64) throws -> [UInt8]? {
        try row("SELECT last_conflicts FROM replica_source WHERE list_id = ?", [.integer(listID)])?.optionalBytes(0)
    }

    package func setLastConflicts(_ report: [UInt8]?, listID: Int64) throws {
        try run("UPDATE replica_source SET last_conflicts = ? WHERE list_id = ?", [SQLValue(report), .integer(listID)])
    }
}
