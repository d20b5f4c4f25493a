import Foundation
import ListDiff
import ListStoreCore
import PostgresNIO

extension PostgresStore {
    /// Records `sections` as the new head of `list`, as `Store.commit(_:to:expectedVersion:author:message:)`
    /// does: diffs them against the head and writes the rows that changed and the journal entry (the
    /// staged changeset, with the content of inserted and updated items) in one transaction. A
    /// snapshot equal to the head writes nothing.
    ///
    /// ```swift
    /// let result = try await store.commit(sections, to: "inbox", expectedVersion: 7, author: "ana")
    /// if result.changed { print("version", result.version, "in", result.stageCount, "stages") }
    /// ```
    ///
    /// Writers of one list take turns: the transaction locks the list's row (`SELECT … FOR UPDATE`),
    /// and the first commits of a new list an advisory lock on its name, so two commits with the
    /// same `expectedVersion` never both land. The diff and the hashing run on the stores' own
    /// threads, not on the cooperative pool.
    ///
    /// - Parameters:
    ///   - sections: the whole new snapshot. Contents must be canonical JSON (`ListItem(id:json:)`
    ///     makes it so).
    ///   - list: the list's name (created by its first commit), by `Store`'s rules: 1 to 1,024 bytes
    ///     of UTF-8 without control characters; a new list's name also in NFC and without invisible
    ///     formatting characters.
    ///   - expectedVersion: when given, the commit happens only if the head is this version (0 for a
    ///     list that has none yet).
    ///   - author: optional, recorded in the journal (PostgreSQL text: no U+0000).
    ///   - message: optional, recorded in the journal (PostgreSQL text: no U+0000).
    /// - Returns: the new version, or the unchanged head when nothing changed.
    /// - Throws: `StoreError` `.versionConflict` (with `expectedVersion` and `currentVersion`; also
    ///   when the server reports a serialization failure or a deadlock), `.invalidSnapshot`,
    ///   `.invalidListName`, `.invalidArgument` (an author or message holding U+0000), `.damaged`,
    ///   `.io`; `CancellationError` when the task is cancelled before the transaction starts.
    ///   Nothing is written when it throws.
    /// - Complexity: O(n + k log k) time for n items and k changes; the head's rows are read (O(n))
    ///   and the c changed rows written in a fixed number of round trips (batched statements).
    @discardableResult
    public func commit(
        _ sections: [ListSection], to list: String, expectedVersion: Int? = nil, author: String? = nil,
        message: String? = nil
    ) async throws -> CommitResult {
        try await commit(to: list, expectedVersion: expectedVersion, author: author, message: message) { _, _ in sections }
    }

    /// Commits the snapshot `makeTarget` makes from the locked head, in one transaction; then, in the
    /// same transaction, calls `alsoWrite` (even when nothing changed) with the list's row id (0 for
    /// a list that still has none) and the result. An error thrown by either rolls everything back.
    ///
    /// With `stages` (a journal entry's JSON, and what to call it in an error), `makeTarget` is not
    /// called: the stages are applied to the head, and the journal keeps the same JSON. With
    /// `queueLocalChange` (the default), a change to a replica list is a local change: its intents
    /// are queued in the list's outbox in the same transaction. `checkFirst` runs in the
    /// transaction once the list's row is locked, before anything is written, and may throw.
    func commit(
        to list: String, expectedVersion: Int?, author: String?, message: String?,
        replaying stages: (json: [UInt8], what: String)? = nil, queueLocalChange: Bool = true,
        checkFirst: ((PostgresConnection, StoredHead) async throws -> Void)? = nil,
        makeTarget: (PostgresConnection, StoredHead) async throws -> [ListSection],
        alsoWrite: ((PostgresConnection, _ listID: Int64, CommitResult) async throws -> Void)? = nil
    ) async throws -> CommitResult {
        if let problem = _Names.problem(with: list, "list") { throw StoreError(.invalidListName, problem) }
        for (what, text) in [("author", author), ("message", message)] where text?.utf8.contains(0) == true {
            throw StoreError(.invalidArgument, "a commit's \(what) must not contain U+0000 (PostgreSQL text cannot hold it)")
        }
        let (result, committed) = try await transaction(.writing) { connection -> (CommitResult, (epoch: Int, head: StoredHead)?) in
            let (head, epoch) = try await lockedHead(connection, list: list)
            try await checkFirst?(connection, head)
            if let expectedVersion, expectedVersion != head.version {
                throw StoreError(
                    .versionConflict,
                    "version conflict on list '\(list)': expected version \(expectedVersion), the head is \(head.version)",
                    expectedVersion: expectedVersion, currentVersion: head.version)
            }
            var target: [ListSection]?
            let prepared: (whole: CommitRows.WholeSections, plan: CommitPlan)
            if let stages {
                prepared = try await _BlockingThreads.shared.run { () throws -> (whole: CommitRows.WholeSections, plan: CommitPlan) in
                    let plan = try CommitPlan.replaying(stages.json, on: head) { stages.what }
                    let pairing = (plan.pairing.sectionTargetOf, plan.pairing.sectionSourceOf)
                    return (CommitRows.WholeSections(head: head, target: plan.target, sectionPairing: pairing), plan)
                }
            } else {
                let sections = try await makeTarget(connection, head)
                target = sections
                prepared = try await _BlockingThreads.shared.run { () -> (whole: CommitRows.WholeSections, plan: CommitPlan) in
                    (CommitRows.WholeSections(head: head, target: sections, sectionPairing: nil), CommitPlan.diffing(head, to: sections))
                }
            }
            let (whole, plan) = prepared
            let changeset = plan.changeset
            guard !changeset.isEmpty else {
                // Nothing is recorded, but a name no list may take is refused all the same.
                if head.version == 0, let problem = _Names.problem(withNew: list, "list") {
                    throw StoreError(.invalidListName, problem)
                }
                let unchanged = CommitResult(
                    list: list, version: head.version, parentVersion: head.version, changed: false, digest: head.digest,
                    stageCount: 0, changeCount: 0, changeset: changeset, rowsWritten: 0)
                try await alsoWrite?(connection, head.listID, unchanged)
                return (unchanged, head.version == 0 ? nil : (epoch, head))
            }
            // A failure in an inserted section makes `CommitRows` throw: no ids are taken for it.
            let reservedRows =
                whole.failure == nil
                ? try await reserveSectionRows(connection, count: whole.insertedSections.count)
                : [Int64](repeating: 0, count: whole.insertedSections.count)
            let committedAt = _Time.iso8601(Date())
            let (rows, stagesJSON, digest) = try await _BlockingThreads.shared.run {
                let rows = try CommitRows(
                    plan, whole: whole, reservedRows: reservedRows, head: head, list: list, committedAt: committedAt,
                    author: author, message: message)
                return (rows, rows.journal.stagesJSON, rows.journal.digest)
            }
            if head.version == 0, let problem = _Names.problem(withNew: list, "list") {
                throw StoreError(.invalidListName, problem)
            }
            let (written, listID) = try await write(
                rows, whole: whole, reservedRows: reservedRows, head: head, stagesJSON: stagesJSON, digest: digest, connection)
            var result = CommitResult(
                list: list, version: rows.journal.version, parentVersion: head.version, changed: true, digest: digest,
                stageCount: changeset.count, changeCount: changeset.counts.total, changeset: changeset, rowsWritten: written)
            if queueLocalChange, let target {
                // Read after the row lock, in a statement of its own: a list that a pull made a
                // replica while this commit waited for the lock is seen as one.
                result.pendingSeq = try await queueInOutbox(
                    connection, listID: listID, base: head, target: target, version: result.version, author: author, message: message)
            }
            try await alsoWrite?(connection, listID, result)
            // Delivered to every listening session when the transaction commits, and not otherwise.
            try await connection.query("SELECT pg_notify(\(Self.commitChannel), \(list))", logger: logger)
            return (result, (epoch, rows.head(listID: listID)))
        }
        // Only a head that is in the database is kept (the transaction committed).
        if let committed { heads.withLock { $0[list] = committed } }
        if result.changed { commits.notify(path: location) }
        return result
    }

    // MARK: Internals

    /// Locks `list`'s row and reads its head (sections and elements in order, with their rows,
    /// positions and content hashes), and the store's epoch. For a list without a row, takes the
    /// advisory lock on its name first and looks again: a first commit that got there meanwhile has
    /// then committed. The head this store committed last is taken instead of the rows when the row
    /// still holds its version and digest and the epoch is the same (a restore advances it).
    func lockedHead(_ connection: PostgresConnection, list: String) async throws -> (StoredHead, epoch: Int) {
        var row = try await lockListRow(connection, list: list)
        if row == nil {
            try await connection.query(
                "SELECT pg_advisory_xact_lock(\(Self.newListLockClass), hashtext(\(list)))", logger: logger)
            row = try await lockListRow(connection, list: list)
        }
        guard let row else { return (.empty, try await Self.identity(connection, self).epoch) }
        let (listID, version, digestHex, epoch) = row
        if let cached = heads.withLock({ $0[list] }), cached.epoch == epoch, cached.head.listID == listID,
            cached.head.version == version, cached.head.digest.hex == digestHex
        {
            return (cached.head, epoch)
        }
        return (try await loadHead(connection, listID: listID, version: version, digestHex: digestHex), epoch)
    }

    /// Reads the head of the list whose row is `listID` from its rows.
    func loadHead(_ connection: PostgresConnection, listID: Int64, version: Int, digestHex: String) async throws -> StoredHead {
        var head = StoredHead.empty
        head.listID = listID
        head.version = version
        head.digest = ListDigest(hex: digestHex)

        var sectionIndex: [Int64: Int] = [:]
        let sectionRows = try await connection.query(
            """
            SELECT id, position, identifier, content, content_hash FROM section WHERE list_id = \(listID)
            ORDER BY position, id
            """, logger: logger)
        for try await (id, position, identifier, content, hash) in sectionRows.decode(
            (Int64, Int64, ByteBuffer, ByteBuffer, ByteBuffer).self)
        {
            sectionIndex[id] = head.sections.count
            head.sections.append(ListSection(
                model: ListItem(id: Self.string(identifier), content: Array(content.readableBytesView)), elements: []))
            head.sectionRows.append(id)
            head.sectionPositions.append(position)
            head.sectionHashes.append(try Self.contentHash(hash, of: "section row \(id)"))
        }
        var positions = [[Int64]](repeating: [], count: head.sections.count)
        var hashes = [[ContentHash]](repeating: [], count: head.sections.count)
        let elementRows = try await connection.query(
            """
            SELECT e.section_id, e.position, e.identifier, e.content, e.content_hash
            FROM section s JOIN element e ON e.section_id = s.id WHERE s.list_id = \(listID)
            ORDER BY s.position, s.id, e.position
            """, logger: logger)
        for try await (sectionID, position, identifier, content, hash) in elementRows.decode(
            (Int64, Int64, ByteBuffer, ByteBuffer, ByteBuffer).self)
        {
            guard let s = sectionIndex[sectionID] else {
                throw StoreError(.damaged, "the store at \(location) is damaged: section row \(sectionID) changed while it was locked")
            }
            head.sections[s].elements.append(ListItem(id: Self.string(identifier), content: Array(content.readableBytesView)))
            positions[s].append(position)
            hashes[s].append(try Self.contentHash(hash, of: "an element of section row \(sectionID)"))
        }
        head.elementPositions = Array(positions.joined())
        head.elementHashes = Array(hashes.joined())
        return head
    }

    /// The first key of the advisory locks that first commits of a list take (the second is the
    /// hash of its name); the two-key space does not overlap the migrations' one-key lock.
    static let newListLockClass: Int32 = 0x4C49_5354

    /// Locks `list`'s row; its id, version and digest, and the store's epoch.
    private func lockListRow(_ connection: PostgresConnection, list: String) async throws -> (Int64, Int, String, Int)? {
        let rows = try await connection.query(
            """
            SELECT l.id, l.head_version, l.head_digest, s.epoch FROM list l, store s
            WHERE l.name = \(list) AND s.id = 1 FOR UPDATE OF l
            """, logger: logger)
        for try await row in rows.decode((Int64, Int, String, Int).self) { return row }
        return nil
    }

    private static func contentHash(_ bytes: ByteBuffer, of what: String) throws -> ContentHash {
        guard let hash = ContentHash(bytes: bytes.readableBytesView) else {
            throw StoreError(.damaged, "the content hash of \(what) is not a content hash")
        }
        return hash
    }

    /// Takes `count` ids of the section table's identity sequence.
    private func reserveSectionRows(_ connection: PostgresConnection, count: Int) async throws -> [Int64] {
        guard count > 0 else { return [] }
        let rows = try await connection.query(
            "SELECT nextval(pg_get_serial_sequence('section', 'id')) FROM generate_series(1, \(count))", logger: logger)
        var ids: [Int64] = []
        ids.reserveCapacity(count)
        for try await id in rows.decode(Int64.self) { ids.append(id) }
        guard ids.count == count else { throw StoreError(.damaged, "the section id sequence gave \(ids.count) ids, not \(count)") }
        return ids
    }

    /// The most rows one batched statement carries.
    private static let batch = 8192

    /// Writes a commit's rows in the caller's transaction: deletes, section rows, element rows (the
    /// moved ones deleted from their old slots and inserted at their new ones, as an `UPDATE` of
    /// many keys could meet a key not yet vacated), the list row and the journal entry.
    /// - Returns: the number of rows written, counted as `Store` counts them (a move is one row), and
    ///   the list's row id.
    private func write(
        _ rows: CommitRows, whole: CommitRows.WholeSections, reservedRows: [Int64], head: StoredHead, stagesJSON: [UInt8],
        digest: ListDigest, _ connection: PostgresConnection
    ) async throws -> (written: Int, listID: Int64) {
        let journal = rows.journal
        var written = 0
        var listID = head.listID
        if listID == 0 {
            let inserted = try await connection.query(
                """
                INSERT INTO list (name, head_version, head_digest, base_version, created_at)
                VALUES (\(journal.list), 0, '', 0, \(journal.committedAt)) RETURNING id
                """, logger: logger)
            for try await id in inserted.decode(Int64.self) { listID = id }
            written += 1
        }

        if !whole.deletedSectionRows.isEmpty {
            written += try await count(
                connection,
                "WITH d AS (DELETE FROM element WHERE section_id = ANY(\(whole.deletedSectionRows)) RETURNING 1) SELECT count(*) FROM d")
            try expect(
                try await count(
                    connection,
                    """
                    WITH d AS (DELETE FROM section WHERE list_id = \(listID) AND id = ANY(\(whole.deletedSectionRows)) RETURNING 1)
                    SELECT count(*) FROM d
                    """),
                whole.deletedSectionRows.count, "section rows")
            written += whole.deletedSectionRows.count
        }

        let vacated = rows.deletedElements + rows.movedElements.map { $0.from! }
        for chunk in Self.chunks(vacated.count) {
            let slots = vacated[chunk]
            try expect(
                try await count(
                    connection,
                    """
                    WITH d AS (DELETE FROM element e USING unnest(\(slots.map(\.section)), \(slots.map(\.position))) AS v(s, p)
                        WHERE e.section_id = v.s AND e.position = v.p RETURNING 1)
                    SELECT count(*) FROM d
                    """),
                slots.count, "element rows")
        }
        written += rows.deletedElements.count

        if !rows.insertedSections.isEmpty {
            let sections = rows.insertedSections
            try await connection.query(
                """
                INSERT INTO section (id, list_id, position, identifier, content, content_hash) OVERRIDING SYSTEM VALUE
                SELECT u.id, \(listID), u.position, u.identifier, u.content, u.hash
                FROM unnest(\(sections.map(\.row)), \(sections.map(\.position)),
                    \(sections.map { Self.bytes(rows.target[$0.target].model.id) }),
                    \(sections.map { ByteBuffer(bytes: rows.target[$0.target].model.content) }),
                    \(sections.map { ByteBuffer(bytes: rows.sectionHashes[$0.target].bytes) })) AS u(id, position, identifier, content, hash)
                """, logger: logger)
            written += sections.count
        }
        if !rows.updatedSections.isEmpty {
            let sections = rows.updatedSections
            try expect(
                try await count(
                    connection,
                    """
                    WITH w AS (UPDATE section s SET position = u.position, content = u.content, content_hash = u.hash
                        FROM unnest(\(sections.map(\.row)), \(sections.map(\.position)),
                            \(sections.map { ByteBuffer(bytes: rows.target[$0.target].model.content) }),
                            \(sections.map { ByteBuffer(bytes: rows.sectionHashes[$0.target].bytes) })) AS u(id, position, content, hash)
                        WHERE s.id = u.id AND s.list_id = \(listID) RETURNING 1)
                    SELECT count(*) FROM w
                    """),
                sections.count, "section rows")
            written += sections.count
        }

        // Element rows: those of whole new sections, new ones of paired sections, and moved ones.
        var elements = ElementColumns()
        if whole.failure == nil {
            for (k, t) in whole.insertedSections.enumerated() {
                let positions = whole.elementPositions(ofInserted: k)
                let hashes = whole.elementHashes(ofInserted: k)
                for (e, element) in whole.target[t].elements.enumerated() {
                    elements.append(
                        section: reservedRows[k], position: positions[positions.startIndex + e], identifier: element.id,
                        content: element.content, hash: hashes[hashes.startIndex + e])
                }
            }
        }
        for element in rows.insertedElements + rows.movedElements {
            elements.append(
                section: element.slot.section, position: element.slot.position, identifier: rows.identifier(of: element),
                content: rows.content(of: element), hash: rows.elementHashes[element.flat])
        }
        for chunk in Self.chunks(elements.sections.count) {
            try await connection.query(
                """
                INSERT INTO element (section_id, position, identifier, content, content_hash)
                SELECT * FROM unnest(\(Array(elements.sections[chunk])), \(Array(elements.positions[chunk])),
                    \(Array(elements.identifiers[chunk])), \(Array(elements.contents[chunk])), \(Array(elements.hashes[chunk])))
                """, logger: logger)
        }
        written += elements.sections.count

        for chunk in Self.chunks(rows.updatedElements.count) {
            let updated = rows.updatedElements[chunk]
            try expect(
                try await count(
                    connection,
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
        written += rows.updatedElements.count

        var point: (version: Int64, bytes: Int64)?
        for try await row in try await connection.query(
            """
            UPDATE list SET head_version = \(journal.version), head_digest = \(digest.hex),
                bytes_since_snapshot = bytes_since_snapshot + \(stagesJSON.count)
            WHERE id = \(listID) RETURNING snapshot_version, bytes_since_snapshot
            """, logger: logger
        ).decode((Int64, Int64).self) {
            point = row
        }
        guard let point else { throw StoreError(.damaged, "the store at \(location) is damaged: list '\(journal.list)' is missing") }
        if _StoredSnapshotPolicy.isDue(
            version: journal.version, pointVersion: Int(point.version), bytesSince: Int(point.bytes),
            elementCount: journal.elementCount)
        {
            // The snapshot at this version becomes the list's newest stored point (`_StoredSnapshotPolicy`).
            let snapshot = ListSnapshot(list: journal.list, version: journal.version, digest: digest, sections: rows.target)
            try await connection.query(
                """
                WITH c AS (INSERT INTO stored_snapshot (list_id, version, snapshot)
                    VALUES (\(listID), \(journal.version), \(ByteBuffer(bytes: snapshot.documentJSON))))
                UPDATE list SET snapshot_version = \(journal.version), bytes_since_snapshot = 0 WHERE id = \(listID)
                """, logger: logger)
            written += 1
        }
        try await connection.query(
            """
            INSERT INTO journal (list_id, version, parent_version, committed_at, digest, author, message,
                section_count, element_count, stages)
            VALUES (\(listID), \(journal.version), \(journal.parentVersion), \(journal.committedAt), \(digest.hex),
                \(journal.author), \(journal.message), \(journal.sectionCount), \(journal.elementCount),
                \(ByteBuffer(bytes: stagesJSON)))
            """, logger: logger)
        return (written + 2, listID)
    }

    /// The columns of element rows to insert.
    private struct ElementColumns {
        var sections: [Int64] = []
        var positions: [Int64] = []
        var identifiers: [ByteBuffer] = []
        var contents: [ByteBuffer] = []
        var hashes: [ByteBuffer] = []

        mutating func append(section: Int64, position: Int64, identifier: String, content: [UInt8], hash: ContentHash) {
            sections.append(section)
            positions.append(position)
            identifiers.append(PostgresStore.bytes(identifier))
            contents.append(ByteBuffer(bytes: content))
            hashes.append(ByteBuffer(bytes: hash.bytes))
        }
    }

    /// `0..<count` in ranges of at most `batch`.
    private static func chunks(_ count: Int) -> [Range<Int>] {
        stride(from: 0, to: count, by: batch).map { $0..<min($0 + batch, count) }
    }

    /// The UTF-8 bytes of an identifier, as the BYTEA column holds them.
    static func bytes(_ text: String) -> ByteBuffer { ByteBuffer(bytes: Array(text.utf8)) }

    /// Runs a statement that answers one count.
    private func count(_ connection: PostgresConnection, _ query: PostgresQuery) async throws -> Int {
        for try await count in try await connection.query(query, logger: logger).decode(Int.self) { return count }
        return 0
    }

    /// Throws `.damaged` unless a statement touched the rows it had to.
    private func expect(_ count: Int, _ wanted: Int, _ what: String) throws {
        guard count == wanted else {
            throw StoreError(.damaged, "the store at \(location) is damaged: \(wanted) \(what) to write, \(count) found")
        }
    }
}

extension PostgresStore {
    /// Changes a copy of the head of `list` and commits it, atomically, as `Store.edit` does: `body`
    /// runs inside the transaction that holds the list's row lock, so no other writer commits in
    /// between (keep it short).
    ///
    /// ```swift
    /// try await store.edit("inbox", author: "ana") { draft in
    ///     try draft.moveSection(ExactString("done"), to: 0)
    /// }
    /// ```
    /// - Throws: what `body` throws (nothing is written), and what `commit` throws.
    /// - Complexity: that of `commit`, plus `body`.
    @discardableResult
    public func edit(
        _ list: String, expectedVersion: Int? = nil, author: String? = nil, message: String? = nil,
        _ body: @Sendable (inout ListDraft<ListItem, ListItem>) throws -> Void
    ) async throws -> CommitResult {
        try await commit(to: list, expectedVersion: expectedVersion, author: author, message: message) { _, head in
            var draft = ListDraft(sections: head.sections)
            try _PostgresErrors.callers { try body(&draft) }
            return draft.sections
        }
    }
}
