import Foundation
import ListDiff
import ListJSON
import ListMerge
import ListStoreCore
import NIOPosix
import PostgresNIO

/// The PostgreSQL driver of the store's logic (`SQLTransaction`): it runs on a thread of
/// `PostgresTransaction.threads` (NIO's thread pool), inside a transaction its store began on one
/// pooled connection, and waits there for each statement's round trip, so that the logic written
/// once for both engines stays synchronous and no thread of the cooperative pool ever waits.
/// Batched statements (`unnest` over arrays) keep a commit to a fixed number of round trips.
final class PostgresTransaction: SQLTransaction {
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

    // MARK: Statements

    var dialect: SQLDialect { .postgres }

    func rows(_ sql: String, _ arguments: [SQLValue]) throws -> [SQLRow] {
        try query(Self.query(sql, arguments)).map { row in SQLRow(try row.map(Self.value), location: location) }
    }

    @discardableResult
    func run(_ sql: String, _ arguments: [SQLValue]) throws -> Int {
        try query(Self.query(sql, arguments)).metadata.rows ?? 0
    }

    func clientIDForLocalChanges() throws -> String { try clientID() }

    /// `sql` with its `?` placeholders numbered (`$1`, `$2`, …) and `arguments` bound: integers
    /// as `BIGINT`, bytes as `BYTEA`.
    static func query(_ sql: String, _ arguments: [SQLValue]) -> PostgresQuery {
        var numbered = ""
        var count = 0
        for character in sql {
            if character == "?" {
                count += 1
                numbered += "$\(count)"
            } else {
                numbered.append(character)
            }
        }
        var binds = PostgresBindings(capacity: arguments.count)
        for argument in arguments {
            switch argument {
            case .null: binds.appendNull()
            case .integer(let value): binds.append(value)
            case .text(let text): binds.append(text)
            case .bytes(let bytes): binds.append(ByteBuffer(bytes: bytes))
            }
        }
        return PostgresQuery(unsafeSQL: numbered, binds: binds)
    }

    /// A column of a row: integers and booleans (1 or 0) as integers, `BYTEA` as bytes, the rest
    /// as text.
    static func value(_ cell: PostgresCell) throws -> SQLValue {
        guard cell.bytes != nil else { return .null }
        switch cell.dataType {
        case .int2, .int4, .int8: return .integer(try cell.decode(Int64.self))
        case .bool: return .integer(try cell.decode(Bool.self) ? 1 : 0)
        case .bytea: return .bytes(Array(try cell.decode(ByteBuffer.self).readableBytesView))
        default: return .text(try cell.decode(String.self))
        }
    }

    /// Runs one of the read path's statements (unprepared: this path parses it each time).
    func execute<Statement: PostgresPreparedStatement>(_ statement: Statement) throws -> [Statement.Row] {
        try query(PostgresQuery(unsafeSQL: Statement.sql, binds: try statement.makeBindings())).map {
            try statement.decodeRow($0)
        }
    }

    // MARK: The store

    /// PostgreSQL checks its pages itself (and with `amcheck`, outside the store).
    func integrityProblems() throws -> [String] { [] }

    // MARK: Lists

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

    func head(of info: ListRow) throws -> StoredHead {
        try loadHead(listID: info.id, version: info.headVersion, digestHex: info.headDigest.hex)
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
