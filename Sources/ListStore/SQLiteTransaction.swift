import Foundation
import GRDB
import ListDiff
import ListMerge

/// The SQLite driver of the store's logic (`StoreTransaction`): its steps run in place, inside the
/// caller's `IMMEDIATE` transaction on GRDB's writer connection, with prepared statements.
final class SQLiteTransaction: StoreTransaction {
    let store: Store
    let db: Database
    /// The heads this transaction wrote, kept by the store once it commits.
    private(set) var newHeads: [String: StoredHead] = [:]
    /// The lists this transaction changed (their heads, or what readers keep of them).
    private(set) var changedLists: Set<String> = []

    init(_ store: Store, _ db: Database) {
        self.store = store
        self.db = db
    }

    var location: String { store.path }

    /// What the store keeps of a committed transaction: the heads it wrote, and whether it changed
    /// a list.
    struct Outcome: Sendable {
        var newHeads: [String: StoredHead]
        var changed: Bool
    }

    var outcome: Outcome { Outcome(newHeads: newHeads, changed: !changedLists.isEmpty) }

    // MARK: Lists

    func headSections(of info: ListRow) throws -> [ListSection] {
        try store.currentHead(db, list: info.name).sections
    }

    func storedSnapshot(
        listID: Int64, after: Int, through: Int
    ) throws -> (
        version: Int, document: [UInt8]
    )? {
        let stored = try _RawStatement(
            db,
            "SELECT version, snapshot FROM stored_snapshot WHERE list_id = ? AND version > ? AND version <= ? ORDER BY version DESC LIMIT 1"
        )
        stored.bind(1, listID)
        stored.bind(2, after)
        stored.bind(3, through)
        defer { stored.reset() }
        guard try stored.step() else { return nil }
        return (Int(stored.int64(0)), stored.bytes(1))
    }

    func journalStages(
        listID: Int64, from: Int, through: Int
    ) throws -> [(
        version: Int, digest: ListDigest, stages: [UInt8]
    )] {
        let statement = try _RawStatement(
            db,
            "SELECT version, digest, stages FROM journal WHERE list_id = ? AND version >= ? AND version <= ? ORDER BY version"
        )
        statement.bind(1, listID)
        statement.bind(2, from)
        statement.bind(3, through)
        defer { statement.reset() }
        var rows: [(version: Int, digest: ListDigest, stages: [UInt8])] = []
        while try statement.step() {
            rows.append(
                (Int(statement.int64(0)), ListDigest(hex: statement.string(1)), statement.bytes(2)))
        }
        return rows
    }

    func journalSizes(listID: Int64, after: Int, through: Int, limit: Int) throws -> [Int] {
        let sizes = try _RawStatement(
            db, """
                SELECT length(CAST(stages AS BLOB)) FROM journal
                WHERE list_id = ? AND version > ? AND version <= ? ORDER BY version LIMIT ?
                """)
        sizes.bind(1, listID)
        sizes.bind(2, after)
        sizes.bind(3, through)
        sizes.bind(4, Int64(min(limit, Int(Int64.max))))
        defer { sizes.reset() }
        var result: [Int] = []
        while try sizes.step() { result.append(Int(sizes.int64(0))) }
        return result
    }

    func storedSnapshotVersions(listID: Int64) throws -> [Int] {
        try Int.fetchAll(db, sql: "SELECT version FROM stored_snapshot WHERE list_id = ? ORDER BY version", arguments: [listID])
    }

    func head(of info: ListRow) throws -> StoredHead {
        try store.loadHead(db, listID: info.id, version: info.headVersion, digest: info.headDigest)
    }

    // MARK: Commits

    func lockedHead(of list: String) throws -> StoredHead {
        // The transaction is IMMEDIATE: it holds the store's write lock already.
        try store.currentHead(db, list: list)
    }

    func write(_ whole: CommitRows.WholeSections) throws -> (reservedRows: [Int64], written: Int) {
        var written = 0
        let deleteSectionElements = try _RawStatement(db, "DELETE FROM element WHERE section_id = ?")
        let deleteSection = try _RawStatement(db, "DELETE FROM section WHERE id = ?")
        for row in whole.deletedSectionRows {
            deleteSectionElements.bind(1, row)
            written += try deleteSectionElements.execute()
            deleteSection.bind(1, row)
            try expectOne(try deleteSection.execute(), "section row \(row)")
            written += 1
        }
        guard !whole.insertedSections.isEmpty, whole.failure == nil else { return ([], written) }

        let maxRow = try _RawStatement(db, "SELECT coalesce(max(id), 0) FROM section")
        _ = try maxRow.step()
        let firstRow = maxRow.int64(0) + 1
        maxRow.reset()
        let rows = (0..<Int64(whole.insertedSections.count)).map { firstRow + $0 }
        let insertElement = try _RawStatement(
            db,
            "INSERT INTO element (section_id, position, identifier, content, content_hash) VALUES (?, ?, ?, ?, ?)"
        )
        for (k, t) in whole.insertedSections.enumerated() {
            let positions = whole.elementPositions(ofInserted: k)
            let hashes = whole.elementHashes(ofInserted: k)
            for (e, element) in whole.target[t].elements.enumerated() {
                insertElement.bind(1, rows[k])
                insertElement.bind(2, positions[positions.startIndex + e])
                insertElement.bind(3, text: element.id)
                insertElement.bind(4, textBytes: element.content)
                insertElement.bind(5, hash: hashes[hashes.startIndex + e])
                try insertElement.execute()
                written += 1
            }
        }
        return (rows, written)
    }

    func insertList(_ name: String, createdAt: String) throws -> Int64 {
        let insert = try _RawStatement(
            db,
            "INSERT INTO list (name, head_version, head_digest, base_version, created_at) VALUES (?, 0, '', 0, ?)"
        )
        insert.bind(1, text: name)
        insert.bind(2, text: createdAt)
        try insert.execute()
        return db.lastInsertedRowID
    }

    func write(_ rows: CommitRows, listID: Int64) throws -> Int {
        let deleteElement = try _RawStatement(
            db, "DELETE FROM element WHERE section_id = ? AND position = ?")
        for slot in rows.deletedElements {
            deleteElement.bind(1, slot.section)
            deleteElement.bind(2, slot.position)
            try expectOne(try deleteElement.execute(), "element row")
        }

        let insertSection = try _RawStatement(
            db,
            "INSERT INTO section (id, list_id, position, identifier, content, content_hash) VALUES (?, ?, ?, ?, ?, ?)"
        )
        for section in rows.insertedSections {
            let model = rows.target[section.target].model
            insertSection.bind(1, section.row)
            insertSection.bind(2, listID)
            insertSection.bind(3, section.position)
            insertSection.bind(4, text: model.id)
            insertSection.bind(5, textBytes: model.content)
            insertSection.bind(6, hash: rows.sectionHashes[section.target])
            try insertSection.execute()
        }
        let updateSection = try _RawStatement(
            db, "UPDATE section SET position = ?, content = ?, content_hash = ? WHERE id = ?")
        for section in rows.updatedSections {
            updateSection.bind(1, section.position)
            updateSection.bind(2, textBytes: rows.target[section.target].model.content)
            updateSection.bind(3, hash: rows.sectionHashes[section.target])
            updateSection.bind(4, section.row)
            try expectOne(try updateSection.execute(), "section row \(section.row)")
        }

        let insertElement = try _RawStatement(
            db,
            "INSERT INTO element (section_id, position, identifier, content, content_hash) VALUES (?, ?, ?, ?, ?)"
        )
        for element in rows.insertedElements {
            insertElement.bind(1, element.slot.section)
            insertElement.bind(2, element.slot.position)
            insertElement.bind(3, text: rows.identifier(of: element))
            insertElement.bind(4, textBytes: rows.content(of: element))
            insertElement.bind(5, hash: rows.elementHashes[element.flat])
            try insertElement.execute()
        }
        let updateElement = try _RawStatement(
            db, "UPDATE element SET content = ?, content_hash = ? WHERE section_id = ? AND position = ?")
        for element in rows.updatedElements {
            updateElement.bind(1, textBytes: rows.content(of: element))
            updateElement.bind(2, hash: rows.elementHashes[element.flat])
            updateElement.bind(3, element.slot.section)
            updateElement.bind(4, element.slot.position)
            try expectOne(try updateElement.execute(), "element row")
        }
        let moveElement = try _RawStatement(
            db, "UPDATE element SET section_id = ?, position = ? WHERE section_id = ? AND position = ?")
        let moveAndUpdateElement = try _RawStatement(
            db,
            "UPDATE element SET section_id = ?, position = ?, content = ?, content_hash = ? WHERE section_id = ? AND position = ?"
        )
        for element in rows.movedElements {
            let from = element.from!
            let statement = element.contentChanged ? moveAndUpdateElement : moveElement
            statement.bind(1, element.slot.section)
            statement.bind(2, element.slot.position)
            var k: Int32 = 3
            if element.contentChanged {
                statement.bind(3, textBytes: rows.content(of: element))
                statement.bind(4, hash: rows.elementHashes[element.flat])
                k = 5
            }
            statement.bind(k, from.section)
            statement.bind(k + 1, from.position)
            try expectOne(try statement.execute(), "element row")
        }
        return rows.deletedElements.count + rows.insertedSections.count + rows.updatedSections.count
            + rows.insertedElements.count + rows.updatedElements.count + rows.movedElements.count
    }

    func setHead(
        listID: Int64, version: Int, digest: ListDigest, journalBytes: Int
    ) throws -> (snapshotVersion: Int, bytesSinceSnapshot: Int) {
        let update = try _RawStatement(
            db,
            """
            UPDATE list SET head_version = ?, head_digest = ?, bytes_since_snapshot = bytes_since_snapshot + ? WHERE id = ?
            RETURNING snapshot_version, bytes_since_snapshot
            """)
        update.bind(1, version)
        update.bind(2, text: digest.hex)
        update.bind(3, journalBytes)
        update.bind(4, listID)
        defer { update.reset() }
        guard try update.step() else { throw damaged("list row \(listID) is missing") }
        return (Int(update.int64(0)), Int(update.int64(1)))
    }

    func insertStoredSnapshot(_ snapshot: ListSnapshot, listID: Int64) throws {
        let insert = try _RawStatement(
            db, "INSERT INTO stored_snapshot (list_id, version, snapshot) VALUES (?, ?, ?)")
        insert.bind(1, listID)
        insert.bind(2, snapshot.version)
        insert.bind(3, textBytes: snapshot.documentJSON)
        try insert.execute()
        let mark = try _RawStatement(
            db, "UPDATE list SET snapshot_version = ?, bytes_since_snapshot = 0 WHERE id = ?")
        mark.bind(1, snapshot.version)
        mark.bind(2, listID)
        try mark.execute()
    }

    func insertJournal(
        _ journal: CommitRows.Journal, listID: Int64, stagesJSON: [UInt8], digest: ListDigest
    ) throws {
        let insert = try _RawStatement(
            db,
            """
            INSERT INTO journal (list_id, version, parent_version, committed_at, digest, author, message,
                section_count, element_count, stages) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        insert.bind(1, listID)
        insert.bind(2, journal.version)
        insert.bind(3, journal.parentVersion)
        insert.bind(4, text: journal.committedAt)
        insert.bind(5, text: digest.hex)
        insert.bind(6, optionalText: journal.author)
        insert.bind(7, optionalText: journal.message)
        insert.bind(8, journal.sectionCount)
        insert.bind(9, journal.elementCount)
        insert.bind(10, textBytes: stagesJSON)
        try insert.execute()
    }

    func announce(_ head: StoredHead?, of list: String) throws {
        changedLists.insert(list)
        if let head { newHeads[list] = head }
    }

    // MARK: Outbox

    func takeOutboxSeq(
        listID: Int64
    ) throws -> (
        seq: Int, confirmedKept: Bool, version: Int, digest: ListDigest
    )? {
        guard
            let row = try Row.fetchOne(
                db,
                sql:
                    "SELECT next_seq, confirmed IS NOT NULL, version, digest FROM replica_source WHERE list_id = ?",
                arguments: [listID])
        else { return nil }
        let seq: Int = row[0]
        try db.execute(
            sql: "UPDATE replica_source SET next_seq = ? WHERE list_id = ?", arguments: [seq + 1, listID])
        return (seq, row[1], row[2], ListDigest(hex: row[3]))
    }

    func confirmedState(listID: Int64) throws -> [UInt8]? {
        try String.fetchOne(db, sql: "SELECT confirmed FROM replica_source WHERE list_id = ?", arguments: [listID]).map { Array($0.utf8) }
    }

    func keepConfirmed(_ document: [UInt8], listID: Int64) throws {
        try db.execute(
            sql: "UPDATE replica_source SET confirmed = ? WHERE list_id = ?",
            arguments: [String(decoding: document, as: UTF8.self), listID])
    }

    func insertOutbox(
        listID: Int64, seq: Int, intentsJSON: [UInt8], author: String?, message: String?,
        createdAt: String, localVersion: Int
    ) throws {
        try db.execute(
            sql: """
                INSERT INTO outbox (list_id, seq, intents, author, message, created_at, local_version, client_id)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                listID, seq, String(decoding: intentsJSON, as: UTF8.self), author, message, createdAt,
                localVersion,
                try clientIDOfThisFile(),
            ])
    }

    // MARK: Replica lists

    func replicaSource(listID: Int64) throws -> ReplicaSource? {
        guard
            let row = try Row.fetchOne(
                db,
                sql:
                    "SELECT store_uuid, store_epoch, list_name, version, digest FROM replica_source WHERE list_id = ?",
                arguments: [listID])
        else { return nil }
        return ReplicaSource(
            store: StoreIdentity(uuid: row[0], epoch: row[1]), list: row[2], version: row[3],
            digest: ListDigest(hex: row[4]))
    }

    func replicaState(listID: Int64) throws -> (hasLocalChanges: Bool, sourceVersion: Int?) {
        let row = try Row.fetchOne(
            db,
            sql:
                "SELECT EXISTS (SELECT 1 FROM outbox WHERE list_id = ?), (SELECT version FROM replica_source WHERE list_id = ?)",
            arguments: [listID, listID])
        return (row?[0] ?? false, row?[1])
    }

    func setReplicaSource(_ source: ReplicaSource, listID: Int64, updatedAt: String) throws {
        try db.execute(
            sql: """
                INSERT INTO replica_source (list_id, store_uuid, store_epoch, list_name, version, digest, updated_at)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (list_id) DO UPDATE SET store_uuid = excluded.store_uuid, store_epoch = excluded.store_epoch,
                    list_name = excluded.list_name, version = excluded.version, digest = excluded.digest,
                    updated_at = excluded.updated_at
                """,
            arguments: [
                listID, source.store.uuid, source.store.epoch, source.list, source.version,
                source.digest.hex, updatedAt,
            ])
        // The file the client id is made for, from the replica's first pull on.
        _ = try clientIDOfThisFile()
    }

    func moveReplicaSource(
        listID: Int64, to position: ReplicaSource, confirmed: [UInt8]?, lastConflicts: [UInt8]?,
        updatedAt: String
    ) throws {
        try db.execute(
            sql: """
                UPDATE replica_source SET store_uuid = ?, store_epoch = ?, list_name = ?, version = ?, digest = ?,
                    confirmed = ?, updated_at = ?, last_conflicts = coalesce(?, last_conflicts) WHERE list_id = ?
                """,
            arguments: [
                position.store.uuid, position.store.epoch, position.list, position.version,
                position.digest.hex,
                confirmed.map { String(decoding: $0, as: UTF8.self) }, updatedAt,
                lastConflicts.map { String(decoding: $0, as: UTF8.self) }, listID,
            ])
    }

    func deleteOutbox(listID: Int64, seqs: [Int]) throws {
        for seq in seqs {
            try db.execute(
                sql: "DELETE FROM outbox WHERE list_id = ? AND seq = ?", arguments: [listID, seq])
        }
    }

    func setPushedVersion(_ version: Int?, listID: Int64, seq: Int, ifClient client: String?) throws {
        try db.execute(
            sql: "UPDATE outbox SET pushed_version = ?1 WHERE list_id = ?2 AND seq = ?3 AND (?4 IS NULL OR client_id = ?4)",
            arguments: [version, listID, seq, client])
    }

    func outboxCount(listID: Int64) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM outbox WHERE list_id = ?", arguments: [listID])
            ?? 0
    }

    func outboxCounts(listID: Int64) throws -> (pending: Int, pushed: Int) {
        let row = try Row.fetchOne(
            db, sql: "SELECT COUNT(*) - COUNT(pushed_version), COUNT(pushed_version) FROM outbox WHERE list_id = ?", arguments: [listID])
        return (row?[0] ?? 0, row?[1] ?? 0)
    }

    func lastConflicts(listID: Int64) throws -> [UInt8]? {
        try String.fetchOne(db, sql: "SELECT last_conflicts FROM replica_source WHERE list_id = ?", arguments: [listID]).map { Array($0.utf8) }
    }

    func setLastConflicts(_ report: [UInt8]?, listID: Int64) throws {
        try db.execute(
            sql: "UPDATE replica_source SET last_conflicts = ? WHERE list_id = ?",
            arguments: [report.map { String(decoding: $0, as: UTF8.self) }, listID])
    }

    func holdsSections(listID: Int64) throws -> Bool {
        try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM section WHERE list_id = ?)", arguments: [listID]) ?? false
    }

    func replaceClientID(_ old: String, with new: String) throws {
        try db.execute(sql: "UPDATE store SET client_id = ? WHERE id = 1 AND client_id = ?", arguments: [new, old])
    }

    func moveOutbox(listID: Int64, from id: PushID, to client: String) throws {
        try db.execute(
            sql: "UPDATE outbox SET client_id = ? WHERE list_id = ? AND client_id = ? AND seq >= ? AND pushed_version IS NULL",
            arguments: [client, listID, id.client, id.seq])
    }

    // MARK: Consumers and pruning

    func insertConsumer(_ name: String, listID: Int64, version: Int, at time: String) throws {
        try db.execute(
            sql: """
                INSERT INTO consumer (list_id, name, version, registered_at, acknowledged_at) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (list_id, name) DO UPDATE SET version = excluded.version, acknowledged_at = excluded.acknowledged_at
                """,
            arguments: [listID, name, version, time, time])
    }

    func updateConsumer(_ name: String, listID: Int64, version: Int, at time: String) throws -> Bool {
        try db.execute(
            sql: "UPDATE consumer SET version = ?, acknowledged_at = ? WHERE list_id = ? AND name = ?",
            arguments: [version, time, listID, name])
        return db.changesCount == 1
    }

    func deleteConsumer(_ name: String, listID: Int64) throws -> Bool {
        try db.execute(
            sql: "DELETE FROM consumer WHERE list_id = ? AND name = ?", arguments: [listID, name])
        return db.changesCount > 0
    }

    func deleteJournal(listID: Int64, through version: Int) throws -> Int {
        try db.execute(
            sql: "DELETE FROM journal WHERE list_id = ? AND version <= ?", arguments: [listID, version])
        return db.changesCount
    }

    func setBase(listID: Int64, version: Int, snapshot: [UInt8]) throws {
        let update = try _RawStatement(
            db, "UPDATE list SET base_version = ?, base_snapshot = ? WHERE id = ?")
        update.bind(1, version)
        update.bind(2, textBytes: snapshot)
        update.bind(3, listID)
        _ = try update.execute()
    }

    func dropStoredSnapshots(listID: Int64, through version: Int) throws {
        try db.execute(
            sql: "DELETE FROM stored_snapshot WHERE list_id = ? AND version <= ?",
            arguments: [listID, version])
        try db.execute(
            sql: """
                UPDATE list SET snapshot_version = ?1,
                    bytes_since_snapshot = (SELECT coalesce(sum(length(CAST(stages AS BLOB))), 0) FROM journal
                        WHERE list_id = ?2 AND version > ?1)
                WHERE id = ?2 AND snapshot_version < ?1
                """, arguments: [version, listID])
    }

    // MARK: Pushes

    func latestPushSeq(listID: Int64, client: String) throws -> Int? {
        try Int.fetchOne(
            db, sql: "SELECT MAX(seq) FROM push WHERE list_id = ? AND client_id = ?",
            arguments: [listID, client])
    }

    func insertPush(
        listID: Int64, id: PushID, version: Int, conflictsJSON: [UInt8], pushedAt: String,
        fingerprint: String
    ) throws {
        try db.execute(
            sql: """
                INSERT INTO push (list_id, client_id, seq, version, conflicts, pushed_at, fingerprint)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                listID, id.client, id.seq, version, String(decoding: conflictsJSON, as: UTF8.self),
                pushedAt, fingerprint,
            ])
    }

    func markJournal(
        listID: Int64, version: Int, pushedAs id: PushID?, conflictsJSON: [UInt8]?
    )
        throws
    {
        try db.execute(
            sql:
                "UPDATE journal SET push_client = ?, push_seq = ?, conflicts = ? WHERE list_id = ? AND version = ?",
            arguments: [
                id?.client, id?.seq, conflictsJSON.map { String(decoding: $0, as: UTF8.self) }, listID,
                version,
            ])
    }

    // MARK: Internals

    private func expectOne(_ changes: Int, _ what: String) throws {
        guard changes == 1 else { throw damaged("\(what) is missing from the tables") }
    }

    private func damaged(_ what: String) -> StoreError {
        StoreError(.damaged, "the store at \(store.path) is damaged: \(what)")
    }
}
