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
    /// The rows its statements wrote (see `PostgresStore.wrote(rows:)`).
    private(set) var rowsWritten = 0

    /// The operation the transaction is part of, whose deadline bounds each statement.
    let operation: PostgresOperation

    init(_ store: PostgresStore, _ connection: PostgresConnection, _ operation: PostgresOperation) {
        self.store = store
        self.connection = connection
        self.operation = operation
    }

    var location: String { store.location }

    /// Runs `query` and waits for all its rows.
    @discardableResult
    func query(_ query: PostgresQuery) throws -> PostgresQueryResult {
        do {
            return try operation.run(query, on: connection, logger: store.logger, location: location).wait()
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
        let rows = try query(Self.query(sql, arguments)).metadata.rows ?? 0
        rowsWritten += rows
        return rows
    }

    func clientIDForLocalChanges() throws -> String { try clientID() }

    /// `sql` with its `?` placeholders numbered (`$1`, `$2`, …) and `arguments` bound: integers
    /// as `BIGINT`, bytes as `BYTEA`.
    static func query(_ sql: String, _ arguments: [SQLValue]) -> PostgresQuery {
        var binds = PostgresBindings(capacity: arguments.count)
        for argument in arguments {
            switch argument {
            case .null: binds.appendNull()
            case .integer(let value): binds.append(value)
            case .text(let text): binds.append(text)
            case .bytes, .utf8, .hash, .blob: binds.append(bytea(argument))
            }
        }
        return PostgresQuery(unsafeSQL: numbered(sql), binds: binds)
    }

    /// `sql` with its `?` placeholders numbered `$1`, `$2`, ….
    private static func numbered(_ sql: String) -> String {
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
        return numbered
    }

    /// Runs `batch` over arrays, at most `batch` rows per statement: each column is bound as an
    /// array of its values' type (`BIGINT`, `TEXT` or `BYTEA`).
    @discardableResult
    func run(_ batch: SQLBatch) throws -> Int {
        var changed = 0
        for start in stride(from: 0, to: batch.count, by: Self.batch) {
            let range = start..<min(start + Self.batch, batch.count)
            var binds = PostgresBindings(capacity: batch.values.count)
            for column in batch.values {
                switch column[start] {
                // A batch's column holds values of one type.
                case .integer: binds.append(column[range].map { if case .integer(let value) = $0 { value } else { preconditionFailure() } })
                case .text: binds.append(column[range].map { if case .text(let value) = $0 { value } else { preconditionFailure() } })
                default: binds.append(column[range].map(Self.bytea))
                }
            }
            changed += try rows(PostgresQuery(unsafeSQL: Self.numbered(batch.arrayStatement), binds: binds), as: Int.self).first ?? 0
        }
        rowsWritten += changed
        return changed
    }

    /// Bytes, an identifier's UTF-8 or a hash as `BYTEA`.
    private static func bytea(_ value: SQLValue) -> ByteBuffer {
        switch value {
        case .bytes(let bytes), .blob(let bytes): ByteBuffer(bytes: bytes)
        case .utf8(let text): ByteBuffer(string: text)
        case .hash(let hash): hash.withUnsafeBytes { ByteBuffer(bytes: $0) }
        case .null, .integer, .text: preconditionFailure("not bytes: \(value)")
        }
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

    // MARK: The store

    /// PostgreSQL checks its pages itself (and with `amcheck`, outside the store).
    func integrityProblems() throws -> [String] { [] }

    // MARK: Lists

    func headSections(listID: Int64) throws -> [ListSection] {
        var sections: [ListSection] = []
        var sectionIndex: [Int64: Int] = [:]
        for row in try query("SELECT id, identifier, content FROM section WHERE list_id = \(listID) ORDER BY position, id") {
            let (id, identifier, content) = try row.decode((Int64, ByteBuffer, ByteBuffer).self)
            sectionIndex[id] = sections.count
            sections.append(ListSection(model: ListItem(id: Self.string(identifier), content: Array(content.readableBytesView)), elements: []))
        }
        for row in try query(
            """
            SELECT e.section_id, e.identifier, e.content
            FROM section s JOIN element e ON e.section_id = s.id WHERE s.list_id = \(listID)
            ORDER BY s.position, s.id, e.position
            """)
        {
            let (sectionID, identifier, content) = try row.decode((Int64, ByteBuffer, ByteBuffer).self)
            guard let s = sectionIndex[sectionID] else { throw damaged("section row \(sectionID) changed while it was read") }
            sections[s].elements.append(ListItem(id: Self.string(identifier), content: Array(content.readableBytesView)))
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

    /// Reads the head of the list whose row is `listID` from its rows: ids, content hashes and
    /// positions, not contents.
    func loadHead(listID: Int64, version: Int, digestHex: String) throws -> StoredHead {
        var head = StoredHead.empty
        head.listID = listID
        head.version = version
        head.digest = ListDigest(hex: digestHex)
        var sectionIndex: [Int64: Int] = [:]
        for row in try query(
            "SELECT id, position, identifier, content_hash FROM section WHERE list_id = \(listID) ORDER BY position, id"
        ) {
            let (id, position, identifier, hash) = try row.decode((Int64, Int64, ByteBuffer, ByteBuffer).self)
            sectionIndex[id] = head.sections.count
            head.sections.append(
                HeadSection(
                    model: HeadItem(id: Self.string(identifier), hash: try Self.contentHash(hash, of: "section row \(id)")),
                    elements: []))
            head.sectionRows.append(id)
            head.sectionPositions.append(position)
        }
        var positions = [[Int64]](repeating: [], count: head.sections.count)
        for row in try query(
            """
            SELECT e.section_id, e.position, e.identifier, e.content_hash
            FROM section s JOIN element e ON e.section_id = s.id WHERE s.list_id = \(listID)
            ORDER BY s.position, s.id, e.position
            """)
        {
            let (sectionID, position, identifier, hash) = try row.decode((Int64, Int64, ByteBuffer, ByteBuffer).self)
            guard let s = sectionIndex[sectionID] else {
                throw damaged("section row \(sectionID) changed while it was locked")
            }
            head.sections[s].elements.append(
                HeadItem(id: Self.string(identifier), hash: try Self.contentHash(hash, of: "an element of section row \(sectionID)")))
            positions[s].append(position)
        }
        head.elementPositions = Array(positions.joined())
        return head
    }

    /// Keeps `head`, and notifies every listening session of the commit when the transaction
    /// commits (and not otherwise).
    func announce(_ head: StoredHead?, of list: String) throws {
        changedLists.insert(list)
        if let head, let epoch { newHeads[list] = (epoch, head) }
        try query("SELECT pg_notify(\(PostgresStore.commitChannel), \(list))")
    }

    // MARK: Internals

    /// The most rows one batched statement carries.
    private static let batch = 8192

    /// The UTF-8 text of a `BYTEA` identifier.
    private static func string(_ bytes: ByteBuffer) -> String {
        String(decoding: bytes.readableBytesView, as: UTF8.self)
    }

    private static func contentHash(_ bytes: ByteBuffer, of what: String) throws -> ContentHash {
        guard let hash = ContentHash(bytes: bytes.readableBytesView) else {
            throw StoreError(.damaged, "the content hash of \(what) is not a content hash")
        }
        return hash
    }

}
