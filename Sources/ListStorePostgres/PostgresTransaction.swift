import Foundation
import ListDiff
import ListJSON
import ListMerge
import ListStoreCore
import NIOPosix
import PostgresNIO

/// The PostgreSQL driver of the store's logic (`StoreTransaction`): it runs on a thread of
/// `PostgresTransaction.threads` (NIO's thread pool), inside a transaction its store began on one
/// pooled connection, and waits there for each statement's round trip, so that the logic written
/// once for both engines stays synchronous and no thread of the cooperative pool ever waits.
/// Batched statements (`unnest` over arrays) keep a commit to a fixed number of round trips.
final class PostgresTransaction: StoreTransaction {
    /// The threads transactions run on: at most this many write transactions of a process run at
    /// once (more wait for a thread before they touch a row; they hold no lock meanwhile).
    static let threads: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: 32)
        pool.start()
        return pool
    }()

    let store: PostgresStore
    let connection: PostgresConnection
    /// The store's epoch, read with the first locked head.
    private var epoch: Int?
    /// The heads this transaction wrote, with the epoch they were written in.
    private(set) var newHeads: [String: (epoch: Int, head: StoredHead)] = [:]
    /// The lists this transaction changed (their heads, or what readers keep of them).
    private(set) var changedLists: Set<String> = []

    init(_ store: PostgresStore, _ connection: PostgresConnection) {
        self.store = store
        self.connection = connection
    }

    var location: String { store.location }

    /// Runs `query` and waits for all its rows.
    @discardableResult
    func query(_ query: PostgresQuery) throws -> PostgresQueryResult {
        do {
            return try connection.query(query, logger: store.logger).wait()
        } catch let error as PSQLError {
            // Mapped here, so that the store's logic tells a failed connection (`.io`) from damage.
            throw _PostgresErrors.storeError(error, location)
        }
    }

    /// Runs `query` and decodes its rows as `T`.
    func rows<T: PostgresDecodable>(_ query: PostgresQuery, as: T.Type = T.self) throws -> [T] {
        try self.query(query).map { try $0.decode(T.self) }
    }

    /// Runs one of the read path's statements (unprepared: this path parses it each time).
    func execute<Statement: PostgresPreparedStatement>(_ statement: Statement) throws -> [Statement.Row] {
        try query(PostgresQuery(unsafeSQL: Statement.sql, binds: try statement.makeBindings())).map {
            try statement.decodeRow($0)
        }
    }

    // MARK: The store

    func identity() throws -> StoreIdentity {
        guard let row = try query("SELECT uuid, epoch FROM store WHERE id = 1").first else {
            throw damaged("it has no identity row")
        }
        let (uuid, epoch) = try row.decode((String, Int).self)
        return StoreIdentity(uuid: uuid, epoch: epoch)
    }

    func advanceEpoch(clientID: String) throws {
        try query("UPDATE store SET epoch = epoch + 1, client_id = \(clientID) WHERE id = 1")
    }

    /// PostgreSQL checks its pages itself (and with `amcheck`, outside the store).
    func integrityProblems() throws -> [String] { [] }

    func listNames() throws -> [String] {
        try rows("SELECT name FROM list ORDER BY name COLLATE \"C\"", as: String.self)
    }

    func summaries(of list: String?) throws -> [ListSummary] {
        try execute(_PostgresStatements.Summaries(name: list)).map(Self.summary)
    }

    /// A list's summary from a row of `_PostgresStatements.Summaries`.
    static func summary(_ row: _PostgresStatements.Summaries.Row) -> ListSummary {
        ListSummary(
            name: row.0, version: row.1, digest: ListDigest(hex: row.2), sectionCount: row.4, elementCount: row.5, baseVersion: row.3)
    }

    // MARK: Lists

    func listRow(_ list: String, locking: Bool) throws -> ListRow {
        let rows =
            locking
            ? try execute(_PostgresStatements.LockedListInfo(name: list))
            : try execute(_PostgresStatements.ListInfo(name: list))
        guard let row = rows.first else {
            throw StoreError.listNotFound(list, in: location)
        }
        return ListRow(
            id: row.0, name: list, headVersion: row.1, headDigest: ListDigest(hex: row.2),
            baseVersion: row.3,
            baseSnapshot: row.4.map { Array($0.readableBytesView) })
    }

    func headSections(of info: ListRow) throws -> [ListSection] {
        var sections: [ListSection] = []
        var current: Int64?
        for row in try execute(_PostgresStatements.HeadRows(listID: info.id)) {
            if row.0 != current {
                current = row.0
                sections.append(
                    ListSection(
                        model: ListItem(
                            id: PostgresStore.string(row.1), content: Array(row.2.readableBytesView)),
                        elements: []))
            }
            if let identifier = row.3, let content = row.4 {
                sections[sections.count - 1].elements.append(
                    ListItem(id: PostgresStore.string(identifier), content: Array(content.readableBytesView)))
            }
        }
        return sections
    }

    func storedSnapshot(
        listID: Int64, after: Int, through: Int
    ) throws -> (
        version: Int, document: [UInt8]
    )? {
        try query(
            """
            SELECT version, snapshot FROM stored_snapshot WHERE list_id = \(listID) AND version > \(Int64(after))
                AND version <= \(Int64(through)) ORDER BY version DESC LIMIT 1
            """
        ).first.map { row in
            let (version, snapshot) = try row.decode((Int64, ByteBuffer).self)
            return (Int(version), Array(snapshot.readableBytesView))
        }
    }

    func journalStages(
        listID: Int64, from: Int, through: Int
    ) throws -> [(
        version: Int, digest: ListDigest, stages: [UInt8]
    )] {
        try query(
            """
            SELECT version, digest, stages FROM journal WHERE list_id = \(listID) AND version >= \(Int64(from))
                AND version <= \(Int64(through)) ORDER BY version
            """
        ).map { row in
            let (version, digest, stages) = try row.decode((Int64, String, ByteBuffer).self)
            return (Int(version), ListDigest(hex: digest), Array(stages.readableBytesView))
        }
    }

    func journalSizes(listID: Int64, after: Int, through: Int, limit: Int) throws -> [Int] {
        try execute(_PostgresStatements.EntrySizes(range: .init(listID: listID, after: after, through: through, limit: limit)))
    }

    func entries(of info: ListRow, after: Int, through: Int, limit: Int) throws -> [JournalEntry] {
        let statement = _PostgresStatements.Entries(
            range: .init(listID: info.id, after: after, through: through, limit: min(limit, Int(Int64.max))))
        return try execute(statement).map { row in
            let (version, parent, committedAt, digest, author, message, sectionCount, elementCount, stages, pushClient, pushSeq, conflicts) = row
            return JournalEntry(
                list: info.name, version: version, parentVersion: parent, committedAt: committedAt, digest: ListDigest(hex: digest),
                author: author, message: message, sectionCount: sectionCount, elementCount: elementCount,
                stagesJSON: Array(stages.readableBytesView), pushID: pushClient.map { PushID(client: $0, seq: pushSeq ?? 0) },
                conflicts: try conflicts.map { try Conflict.storedReport(Array($0.readableBytesView), of: "version \(version) of list '\(info.name)'") } ?? [])
        }
    }

    func storedSnapshotVersions(listID: Int64) throws -> [Int] {
        try rows("SELECT version FROM stored_snapshot WHERE list_id = \(listID) ORDER BY version", as: Int64.self).map { Int($0) }
    }

    func head(of info: ListRow) throws -> StoredHead {
        try loadHead(listID: info.id, version: info.headVersion, digestHex: info.headDigest.hex)
    }

    func clientID() throws -> String {
        guard let id = try rows("SELECT client_id FROM store WHERE id = 1", as: String.self).first else {
            throw damaged("it has no client id")
        }
        return id
    }

    // MARK: Commits

    /// Locks the list's row and reads its head (the one this store committed last when the row
    /// still holds its version and digest and the epoch is the same: a restore advances it). For a
    /// list without a row, takes the advisory lock on its name first and looks again: a first
    /// commit that got there meanwhile has then committed.
    func lockedHead(of list: String) throws -> StoredHead {
        var row = try lockListRow(list)
        if row == nil {
            try query(
                "SELECT pg_advisory_xact_lock(\(PostgresStore.newListLockClass), hashtext(\(list)))")
            row = try lockListRow(list)
        }
        guard let (listID, version, digestHex, epoch) = row else {
            epoch = try rows("SELECT epoch FROM store WHERE id = 1", as: Int.self).first
            return .empty
        }
        self.epoch = epoch
        if let cached = store.heads.withLock({ $0[list] }), cached.epoch == epoch,
            cached.head.listID == listID,
            cached.head.version == version, cached.head.digest.hex == digestHex
        {
            return cached.head
        }
        let head = try loadHead(listID: listID, version: version, digestHex: digestHex)
        store.heads.withLock { $0[list] = (epoch, head) }
        return head
    }

    private func lockListRow(_ list: String) throws -> (Int64, Int, String, Int)? {
        try query(
            """
            SELECT l.id, l.head_version, l.head_digest, s.epoch FROM list l, store s
            WHERE l.name = \(list) AND s.id = 1 FOR UPDATE OF l
            """
        ).first.map { try $0.decode((Int64, Int, String, Int).self) }
    }

    /// Reads the head of the list whose row is `listID` from its rows.
    func loadHead(listID: Int64, version: Int, digestHex: String) throws -> StoredHead {
        var head = StoredHead.empty
        head.listID = listID
        head.version = version
        head.digest = ListDigest(hex: digestHex)
        var sectionIndex: [Int64: Int] = [:]
        for row in try query(
            "SELECT id, position, identifier, content, content_hash FROM section WHERE list_id = \(listID) ORDER BY position, id"
        ) {
            let (id, position, identifier, content, hash) = try row.decode(
                (Int64, Int64, ByteBuffer, ByteBuffer, ByteBuffer).self)
            sectionIndex[id] = head.sections.count
            head.sections.append(
                ListSection(
                    model: ListItem(
                        id: PostgresStore.string(identifier), content: Array(content.readableBytesView)),
                    elements: []))
            head.sectionRows.append(id)
            head.sectionPositions.append(position)
            head.sectionHashes.append(try Self.contentHash(hash, of: "section row \(id)"))
        }
        var positions = [[Int64]](repeating: [], count: head.sections.count)
        var hashes = [[ContentHash]](repeating: [], count: head.sections.count)
        for row in try query(
            """
            SELECT e.section_id, e.position, e.identifier, e.content, e.content_hash
            FROM section s JOIN element e ON e.section_id = s.id WHERE s.list_id = \(listID)
            ORDER BY s.position, s.id, e.position
            """)
        {
            let (sectionID, position, identifier, content, hash) = try row.decode(
                (Int64, Int64, ByteBuffer, ByteBuffer, ByteBuffer).self)
            guard let s = sectionIndex[sectionID] else {
                throw damaged("section row \(sectionID) changed while it was locked")
            }
            head.sections[s].elements.append(
                ListItem(id: PostgresStore.string(identifier), content: Array(content.readableBytesView)))
            positions[s].append(position)
            hashes[s].append(try Self.contentHash(hash, of: "an element of section row \(sectionID)"))
        }
        head.elementPositions = Array(positions.joined())
        head.elementHashes = Array(hashes.joined())
        return head
    }

    func write(_ whole: CommitRows.WholeSections) throws -> (reservedRows: [Int64], written: Int) {
        var written = 0
        if !whole.deletedSectionRows.isEmpty {
            written += try count(
                "WITH d AS (DELETE FROM element WHERE section_id = ANY(\(whole.deletedSectionRows)) RETURNING 1) SELECT count(*) FROM d"
            )
            try expect(
                try count(
                    """
                    WITH d AS (DELETE FROM section WHERE id = ANY(\(whole.deletedSectionRows)) RETURNING 1)
                    SELECT count(*) FROM d
                    """),
                whole.deletedSectionRows.count, "section rows")
            written += whole.deletedSectionRows.count
        }
        let count = whole.insertedSections.count
        guard count > 0, whole.failure == nil else { return ([], written) }
        let reserved = try rows(
            "SELECT nextval(pg_get_serial_sequence('section', 'id')) FROM generate_series(1, \(count))",
            as: Int64.self)
        guard reserved.count == count else {
            throw damaged("the section id sequence gave \(reserved.count) ids, not \(count)")
        }
        var elements = ElementColumns()
        for (k, t) in whole.insertedSections.enumerated() {
            let positions = whole.elementPositions(ofInserted: k)
            let hashes = whole.elementHashes(ofInserted: k)
            for (e, element) in whole.target[t].elements.enumerated() {
                elements.append(
                    section: reserved[k], position: positions[positions.startIndex + e],
                    identifier: element.id,
                    content: element.content, hash: hashes[hashes.startIndex + e])
            }
        }
        try insert(elements)
        return (reserved, written + elements.sections.count)
    }

    func insertList(_ name: String, createdAt: String) throws -> Int64 {
        let ids = try rows(
            """
            INSERT INTO list (name, head_version, head_digest, base_version, created_at)
            VALUES (\(name), 0, '', 0, \(createdAt)) RETURNING id
            """, as: Int64.self)
        guard let id = ids.first else { throw damaged("list '\(name)' was not inserted") }
        return id
    }

    /// Writes the rest of a commit's rows: the moved element rows are deleted from their old slots
    /// and inserted at their new ones, as an `UPDATE` of many keys could meet a key not yet vacated.
    func write(_ rows: CommitRows, listID: Int64) throws -> Int {
        let vacated = rows.deletedElements + rows.movedElements.map { $0.from! }
        for chunk in Self.chunks(vacated.count) {
            let slots = vacated[chunk]
            try expect(
                try count(
                    """
                    WITH d AS (DELETE FROM element e USING unnest(\(slots.map(\.section)), \(slots.map(\.position))) AS v(s, p)
                        WHERE e.section_id = v.s AND e.position = v.p RETURNING 1)
                    SELECT count(*) FROM d
                    """),
                slots.count, "element rows")
        }
        if !rows.insertedSections.isEmpty {
            let sections = rows.insertedSections
            try query(
                """
                INSERT INTO section (id, list_id, position, identifier, content, content_hash) OVERRIDING SYSTEM VALUE
                SELECT u.id, \(listID), u.position, u.identifier, u.content, u.hash
                FROM unnest(\(sections.map(\.row)), \(sections.map(\.position)),
                    \(sections.map { PostgresStore.bytes(rows.target[$0.target].model.id) }),
                    \(sections.map { ByteBuffer(bytes: rows.target[$0.target].model.content) }),
                    \(sections.map { ByteBuffer(bytes: rows.sectionHashes[$0.target].bytes) })) AS u(id, position, identifier, content, hash)
                """)
        }
        if !rows.updatedSections.isEmpty {
            let sections = rows.updatedSections
            try expect(
                try count(
                    """
                    WITH w AS (UPDATE section s SET position = u.position, content = u.content, content_hash = u.hash
                        FROM unnest(\(sections.map(\.row)), \(sections.map(\.position)),
                            \(sections.map { ByteBuffer(bytes: rows.target[$0.target].model.content) }),
                            \(sections.map { ByteBuffer(bytes: rows.sectionHashes[$0.target].bytes) })) AS u(id, position, content, hash)
                        WHERE s.id = u.id AND s.list_id = \(listID) RETURNING 1)
                    SELECT count(*) FROM w
                    """),
                sections.count, "section rows")
        }
        var elements = ElementColumns()
        for element in rows.insertedElements + rows.movedElements {
            elements.append(
                section: element.slot.section, position: element.slot.position,
                identifier: rows.identifier(of: element),
                content: rows.content(of: element), hash: rows.elementHashes[element.flat])
        }
        try insert(elements)
        for chunk in Self.chunks(rows.updatedElements.count) {
            let updated = rows.updatedElements[chunk]
            try expect(
                try count(
                    """
                    WITH w AS (UPDATE element e SET content = u.content, content_hash = u.hash
                        FROM unnest(\(updated.map(\.slot.section)), \(updated.map(\.slot.position)),
                            \(updated.map { ByteBuffer(bytes: rows.content(of: $0)) }),
                            \(updated.map { ByteBuffer(bytes: rows.elementHashes[$0.flat].bytes) })) AS u(s, p, content, hash)
                        WHERE e.section_id = u.s AND e.position = u.p RETURNING 1)
                    SELECT count(*) FROM w
                    """),
                updated.count, "element rows")
        }
        return rows.deletedElements.count + rows.insertedSections.count + rows.updatedSections.count
            + rows.insertedElements.count + rows.updatedElements.count + rows.movedElements.count
    }

    func setHead(
        listID: Int64, version: Int, digest: ListDigest, journalBytes: Int
    ) throws -> (snapshotVersion: Int, bytesSinceSnapshot: Int) {
        let point = try query(
            """
            UPDATE list SET head_version = \(version), head_digest = \(digest.hex),
                bytes_since_snapshot = bytes_since_snapshot + \(journalBytes)
            WHERE id = \(listID) RETURNING snapshot_version, bytes_since_snapshot
            """
        ).first.map { try $0.decode((Int, Int).self) }
        guard let point else { throw damaged("list row \(listID) is missing") }
        return point
    }

    func insertStoredSnapshot(_ snapshot: ListSnapshot, listID: Int64) throws {
        try query(
            """
            WITH c AS (INSERT INTO stored_snapshot (list_id, version, snapshot)
                VALUES (\(listID), \(snapshot.version), \(ByteBuffer(bytes: snapshot.documentJSON))))
            UPDATE list SET snapshot_version = \(snapshot.version), bytes_since_snapshot = 0 WHERE id = \(listID)
            """)
    }

    func insertJournal(
        _ journal: CommitRows.Journal, listID: Int64, stagesJSON: [UInt8], digest: ListDigest
    ) throws {
        for (what, text) in [("author", journal.author), ("message", journal.message)] where text?.utf8.contains(0) == true {
            throw StoreError(.invalidArgument, "a commit's \(what) must not contain U+0000 (PostgreSQL text cannot hold it)")
        }
        try query(
            """
            INSERT INTO journal (list_id, version, parent_version, committed_at, digest, author, message,
                section_count, element_count, stages)
            VALUES (\(listID), \(journal.version), \(journal.parentVersion), \(journal.committedAt), \(digest.hex),
                \(journal.author), \(journal.message), \(journal.sectionCount), \(journal.elementCount),
                \(ByteBuffer(bytes: stagesJSON)))
            """)
    }

    /// Keeps `head`, and notifies every listening session of the commit when the transaction
    /// commits (and not otherwise).
    func announce(_ head: StoredHead?, of list: String) throws {
        changedLists.insert(list)
        if let head, let epoch { newHeads[list] = (epoch, head) }
        try query("SELECT pg_notify(\(PostgresStore.commitChannel), \(list))")
    }

    // MARK: Outbox

    func takeOutboxSeq(
        listID: Int64
    ) throws -> (
        seq: Int, confirmedKept: Bool, version: Int, digest: ListDigest
    )? {
        try query(
            """
            UPDATE replica_source SET next_seq = next_seq + 1 WHERE list_id = \(listID)
            RETURNING next_seq - 1, confirmed IS NOT NULL, version, digest
            """
        ).first.map { row in
            let (seq, kept, version, digest) = try row.decode((Int, Bool, Int, String).self)
            return (seq, kept, version, ListDigest(hex: digest))
        }
    }

    func confirmedState(listID: Int64) throws -> [UInt8]? {
        try rows("SELECT confirmed FROM replica_source WHERE list_id = \(listID)", as: ByteBuffer?.self).first?.map {
            Array($0.readableBytesView)
        }
    }

    func outbox(of info: ListRow) throws -> [OutboxEntry] {
        try query(
            """
            SELECT seq, intents, author, message, created_at, local_version, pushed_version,
                coalesce(client_id, (SELECT client_id FROM store WHERE id = 1), '')
            FROM outbox WHERE list_id = \(info.id) ORDER BY seq
            """
        ).map { row in
            let (seq, bytes, author, message, createdAt, localVersion, pushedVersion, client) = try row.decode(
                (Int, ByteBuffer, String?, String?, String, Int, Int?, String).self)
            return try OutboxEntry.stored(
                seq: seq, intentsJSON: Array(bytes.readableBytesView), author: author, message: message, createdAt: createdAt,
                localVersion: localVersion, pushedVersion: pushedVersion, client: client, list: info.name)
        }
    }

    func keepConfirmed(_ document: [UInt8], listID: Int64) throws {
        try query(
            "UPDATE replica_source SET confirmed = \(ByteBuffer(bytes: document)) WHERE list_id = \(listID)"
        )
    }

    func insertOutbox(
        listID: Int64, seq: Int, intentsJSON: [UInt8], author: String?, message: String?,
        createdAt: String, localVersion: Int
    ) throws {
        try query(
            """
            INSERT INTO outbox (list_id, seq, intents, author, message, created_at, local_version, client_id)
            VALUES (\(listID), \(seq), \(ByteBuffer(bytes: intentsJSON)), \(author), \(message), \(createdAt), \(localVersion),
                (SELECT client_id FROM store WHERE id = 1))
            """)
    }

    // MARK: Replica lists

    func replicaSource(listID: Int64) throws -> ReplicaSource? {
        try query(
            "SELECT store_uuid, store_epoch, list_name, version, digest FROM replica_source WHERE list_id = \(listID)"
        )
        .first.map {
            Self.replicaSource(try $0.decode((String, Int, String, Int, String).self))
        }
    }

    func replicaState(listID: Int64) throws -> (hasLocalChanges: Bool, sourceVersion: Int?) {
        let state = try query(
            """
            SELECT EXISTS (SELECT 1 FROM outbox WHERE list_id = \(listID)),
                (SELECT version FROM replica_source WHERE list_id = \(listID))
            """
        ).first.map { try $0.decode((Bool, Int?).self) }
        return state ?? (false, nil)
    }

    func setReplicaSource(_ source: ReplicaSource, listID: Int64, updatedAt: String) throws {
        try query(
            """
            INSERT INTO replica_source (list_id, store_uuid, store_epoch, list_name, version, digest, updated_at)
            VALUES (\(listID), \(source.store.uuid), \(source.store.epoch), \(source.list), \(source.version),
                \(source.digest.hex), \(updatedAt))
            ON CONFLICT (list_id) DO UPDATE SET store_uuid = excluded.store_uuid, store_epoch = excluded.store_epoch,
                list_name = excluded.list_name, version = excluded.version, digest = excluded.digest,
                updated_at = excluded.updated_at
            """)
    }

    func moveReplicaSource(
        listID: Int64, to position: ReplicaSource, confirmed: [UInt8]?, lastConflicts: [UInt8]?,
        updatedAt: String
    ) throws {
        try query(
            """
            UPDATE replica_source SET store_uuid = \(position.store.uuid), store_epoch = \(position.store.epoch),
                list_name = \(position.list), version = \(position.version), digest = \(position.digest.hex),
                confirmed = \(confirmed.map { ByteBuffer(bytes: $0) }), updated_at = \(updatedAt),
                last_conflicts = COALESCE(\(lastConflicts.map { ByteBuffer(bytes: $0) }), last_conflicts)
            WHERE list_id = \(listID)
            """)
    }

    func deleteOutbox(listID: Int64, seqs: [Int]) throws {
        guard !seqs.isEmpty else { return }
        try query("DELETE FROM outbox WHERE list_id = \(listID) AND seq = ANY(\(seqs))")
    }

    func setPushedVersion(_ version: Int?, listID: Int64, seq: Int, ifClient client: String?) throws {
        try query(
            """
            UPDATE outbox SET pushed_version = \(version)
            WHERE list_id = \(listID) AND seq = \(seq) AND (\(client)::text IS NULL OR client_id = \(client))
            """)
    }

    func outboxCount(listID: Int64) throws -> Int {
        try count("SELECT count(*) FROM outbox WHERE list_id = \(listID)")
    }

    func outboxCounts(listID: Int64) throws -> (pending: Int, pushed: Int) {
        try query("SELECT count(*) - count(pushed_version), count(pushed_version) FROM outbox WHERE list_id = \(listID)")
            .first.map { try $0.decode((Int, Int).self) } ?? (0, 0)
    }

    func lastConflicts(listID: Int64) throws -> [UInt8]? {
        try rows("SELECT last_conflicts FROM replica_source WHERE list_id = \(listID)", as: ByteBuffer?.self).first?.map {
            Array($0.readableBytesView)
        }
    }

    func setLastConflicts(_ report: [UInt8]?, listID: Int64) throws {
        try query("UPDATE replica_source SET last_conflicts = \(report.map { ByteBuffer(bytes: $0) }) WHERE list_id = \(listID)")
    }

    func holdsSections(listID: Int64) throws -> Bool {
        try rows("SELECT EXISTS (SELECT 1 FROM section WHERE list_id = \(listID))", as: Bool.self).first ?? false
    }

    func replaceClientID(_ old: String, with new: String) throws {
        try query("UPDATE store SET client_id = \(new) WHERE id = 1 AND client_id = \(old)")
    }

    func moveOutbox(listID: Int64, from id: PushID, to client: String) throws {
        try query(
            """
            UPDATE outbox SET client_id = \(client)
            WHERE list_id = \(listID) AND client_id = \(id.client) AND seq >= \(id.seq) AND pushed_version IS NULL
            """)
    }

    // MARK: Consumers and pruning

    func consumers(of info: ListRow) throws -> [ConsumerInfo] {
        try query(
            """
            SELECT name, version, registered_at, acknowledged_at FROM consumer WHERE list_id = \(info.id)
            ORDER BY name COLLATE "C"
            """
        ).map { row in
            let (name, version, registeredAt, acknowledgedAt) = try row.decode(
                (String, Int, String, String).self)
            return ConsumerInfo(
                name: name, list: info.name, version: version, registeredAt: registeredAt,
                acknowledgedAt: acknowledgedAt)
        }
    }

    func insertConsumer(_ name: String, listID: Int64, version: Int, at time: String) throws {
        try query(
            """
            INSERT INTO consumer (list_id, name, version, registered_at, acknowledged_at)
            VALUES (\(listID), \(name), \(version), \(time), \(time))
            ON CONFLICT (list_id, name) DO UPDATE SET version = excluded.version, acknowledged_at = excluded.acknowledged_at
            """)
    }

    func updateConsumer(_ name: String, listID: Int64, version: Int, at time: String) throws -> Bool {
        try query(
            """
            UPDATE consumer SET version = \(version), acknowledged_at = \(time)
            WHERE list_id = \(listID) AND name = \(name) RETURNING 1
            """
        ).count == 1
    }

    func deleteConsumer(_ name: String, listID: Int64) throws -> Bool {
        try !query("DELETE FROM consumer WHERE list_id = \(listID) AND name = \(name) RETURNING 1")
            .isEmpty
    }

    func deleteJournal(listID: Int64, through version: Int) throws -> Int {
        try count(
            "WITH d AS (DELETE FROM journal WHERE list_id = \(listID) AND version <= \(version) RETURNING 1) SELECT count(*) FROM d"
        )
    }

    func setBase(listID: Int64, version: Int, snapshot: [UInt8]) throws {
        try query(
            "UPDATE list SET base_version = \(version), base_snapshot = \(ByteBuffer(bytes: snapshot)) WHERE id = \(listID)"
        )
    }

    func dropStoredSnapshots(listID: Int64, through version: Int) throws {
        try query(
            "DELETE FROM stored_snapshot WHERE list_id = \(listID) AND version <= \(Int64(version))")
        try query(
            """
            UPDATE list SET snapshot_version = \(Int64(version)),
                bytes_since_snapshot = (SELECT coalesce(sum(octet_length(stages)), 0) FROM journal
                    WHERE list_id = \(listID) AND version > \(Int64(version)))
            WHERE id = \(listID) AND snapshot_version < \(Int64(version))
            """)
    }

    // MARK: Pushes

    func recordedPushes(
        listID: Int64, list: String, client: String, seqs: ClosedRange<Int>
    ) throws
        -> [PushAnswer]
    {
        // A client id no push may carry was never recorded.
        guard PushRule.problem(with: PushID(client: client, seq: 1)) == nil else { return [] }
        return try query(
            """
            SELECT seq, version, conflicts, fingerprint FROM push
            WHERE list_id = \(listID) AND client_id = \(client) AND seq BETWEEN \(seqs.lowerBound) AND \(seqs.upperBound)
            ORDER BY seq LIMIT 1000
            """
        ).map { row in
            let (seq, version, report, fingerprint) = try row.decode((Int, Int, ByteBuffer, String?).self)
            return PushAnswer(
                list: list, version: version, seq: seq, duplicate: false,
                conflicts: try Conflict.storedReport(
                    Array(report.readableBytesView), of: "push \(PushID(client: client, seq: seq)) of list '\(list)'"),
                fingerprint: fingerprint)
        }
    }

    func latestPushSeq(listID: Int64, client: String) throws -> Int? {
        try rows(
            "SELECT max(seq) FROM push WHERE list_id = \(listID) AND client_id = \(client)", as: Int?.self
        ).first ?? nil
    }

    func insertPush(
        listID: Int64, id: PushID, version: Int, conflictsJSON: [UInt8], pushedAt: String,
        fingerprint: String
    ) throws {
        try query(
            """
            INSERT INTO push (list_id, client_id, seq, version, conflicts, pushed_at, fingerprint)
            VALUES (\(listID), \(id.client), \(id.seq), \(version), \(ByteBuffer(bytes: conflictsJSON)), \(pushedAt), \(fingerprint))
            """)
    }

    func markJournal(
        listID: Int64, version: Int, pushedAs id: PushID?, conflictsJSON: [UInt8]?
    )
        throws
    {
        try query(
            """
            UPDATE journal SET push_client = \(id?.client), push_seq = \(id?.seq), conflicts = \(conflictsJSON.map { ByteBuffer(bytes: $0) })
            WHERE list_id = \(listID) AND version = \(version)
            """)
    }

    // MARK: Internals

    /// The columns of element rows to insert.
    private struct ElementColumns {
        var sections: [Int64] = []
        var positions: [Int64] = []
        var identifiers: [ByteBuffer] = []
        var contents: [ByteBuffer] = []
        var hashes: [ByteBuffer] = []

        mutating func append(
            section: Int64, position: Int64, identifier: String, content: [UInt8], hash: ContentHash
        ) {
            sections.append(section)
            positions.append(position)
            identifiers.append(PostgresStore.bytes(identifier))
            contents.append(ByteBuffer(bytes: content))
            hashes.append(ByteBuffer(bytes: hash.bytes))
        }
    }

    /// Inserts element rows, at most `batch` per statement.
    private func insert(_ elements: ElementColumns) throws {
        for chunk in Self.chunks(elements.sections.count) {
            try query(
                """
                INSERT INTO element (section_id, position, identifier, content, content_hash)
                SELECT * FROM unnest(\(Array(elements.sections[chunk])), \(Array(elements.positions[chunk])),
                    \(Array(elements.identifiers[chunk])), \(Array(elements.contents[chunk])), \(Array(elements.hashes[chunk])))
                """)
        }
    }

    /// The most rows one batched statement carries.
    private static let batch = 8192

    /// `0..<count` in ranges of at most `batch`.
    private static func chunks(_ count: Int) -> [Range<Int>] {
        stride(from: 0, to: count, by: batch).map { $0..<min($0 + batch, count) }
    }

    /// Runs a statement that answers one count.
    private func count(_ statement: PostgresQuery) throws -> Int {
        try rows(statement, as: Int.self).first ?? 0
    }

    /// Throws `.damaged` unless a statement touched the rows it had to.
    private func expect(_ count: Int, _ wanted: Int, _ what: String) throws {
        guard count == wanted else { throw damaged("\(wanted) \(what) to write, \(count) found") }
    }

    private static func contentHash(_ bytes: ByteBuffer, of what: String) throws -> ContentHash {
        guard let hash = ContentHash(bytes: bytes.readableBytesView) else {
            throw StoreError(.damaged, "the content hash of \(what) is not a content hash")
        }
        return hash
    }

    private func damaged(_ what: String) -> StoreError {
        StoreError(.damaged, "the store at \(location) is damaged: \(what)")
    }
}

extension PostgresTransaction {
    /// A replica position from its row: store uuid and epoch, source list, version and digest.
    static func replicaSource(_ row: (String, Int, String, Int, String)) -> ReplicaSource {
        ReplicaSource(store: StoreIdentity(uuid: row.0, epoch: row.1), list: row.2, version: row.3, digest: ListDigest(hex: row.4))
    }
}
