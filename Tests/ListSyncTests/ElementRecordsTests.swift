import Foundation
import GRDB
import ListDiff
import ListDiffTestSupport
import ListJSON
import ListStore
import ListStoreTestSupport
import ListSync
import Testing

/// A replica on SQLite applies its source's entries reading only the sections they touch: the
/// other sections' element records, kept beside their rows, make the new digest. A first sync in
/// pages keeps every section's records; an applied entry keeps those of the sections it read; a
/// local change forgets those of the sections it changes; a section without records has them made
/// from its rows; `verify` compares kept records with the rows, and a replica whose kept records are
/// wrong (its digest from them is not the entry's) makes the digest again from its rows, keeps the
/// records again, and applies the entry.
@Suite(.heavyWork) struct ElementRecordsTests {
    /// How many section rows the store at `path` has, and how many of them keep element records.
    static func keptRecords(_ path: String) throws -> (sections: Int, kept: Int) {
        let kept = try records(path)
        return (kept.count, kept.count { $0 != nil })
    }

    /// The element records each section row of the store at `path` keeps, in the list's order.
    static func records(_ path: String) throws -> [Data?] {
        try DatabaseQueue(path: path).read { db in
            try Row.fetchAll(db, sql: "SELECT element_records FROM section ORDER BY position").map { $0["element_records"] as Data? }
        }
    }

    /// The sections of the store at `path` whose kept element records are not those of `sections`'
    /// elements (the list it holds), by identifier: each record is the byte `E`, the id's UTF-8 length
    /// (64-bit little-endian), the id and the SHA-256 of the content (the store file's documented form).
    static func wrongRecords(_ path: String, _ sections: [ListSection]) throws -> [String] {
        let kept = try records(path)
        return wrongRecords(kept, sections)
    }

    /// The sections whose `kept` records (`records(_:)`) are not those of `sections`' elements.
    static func wrongRecords(_ kept: [Data?], _ sections: [ListSection]) -> [String] {
        guard kept.count == sections.count else { return ["\(kept.count) sections, not \(sections.count)"] }
        var wrong: [String] = []
        for (records, section) in zip(kept, sections) {
            guard let records else { continue }
            var expected = Data()
            for element in section.elements {
                let id = Array(element.id.utf8)
                expected.append(0x45)
                withUnsafeBytes(of: UInt64(id.count).littleEndian) { expected.append(contentsOf: $0) }
                expected.append(contentsOf: id)
                expected.append(contentsOf: ContentHash(of: element.content).bytes)
            }
            if records != expected { wrong.append(section.model.id) }
        }
        return wrong
    }

    /// The version, document and SQLite type of the newest stored snapshot in the store file at `path`.
    static func newestStoredSnapshot(_ path: String) throws -> (version: Int, document: Data, type: String)? {
        try DatabaseQueue(path: path).read { db in
            try Row.fetchOne(db, sql: "SELECT version, snapshot, typeof(snapshot) AS type FROM stored_snapshot ORDER BY version DESC LIMIT 1")
                .map { (version: $0["version"] as Int, document: $0["snapshot"] as Data, type: $0["type"] as String) }
        }
    }

    /// Runs `sql` on the store file at `path`, as something other than ListStore would.
    static func tamper(_ path: String, _ sql: String, _ arguments: StatementArguments = []) throws {
        try DatabaseQueue(path: path).write { db in try db.execute(sql: sql, arguments: arguments) }
    }

    /// `sections` with the content of element `e` of section `s` replaced by `json`.
    static func updating(_ sections: [ListSection], _ s: Int, _ e: Int, _ json: JSONValue) -> [ListSection] {
        var sections = sections
        sections[s].elements[e] = ListItem(id: sections[s].elements[e].id, json: json)
        return sections
    }

    /// A new replica of `source`'s list "l" at `path`, first synced in pages (a copy: the source's
    /// history is pruned first).
    static func firstSync(of source: Store, into path: String) async throws {
        _ = try await source.prune("l", .keepLast(0))
        var options = ReplicaPullOptions()
        options.pageBytes = 2000
        let store = try Store(path: path)
        defer { try? store.close() }
        let result = try await Replica(store: store, list: "l").pull(from: LocalSource(source), options: options)
        #expect(result.resynced && result.pages != nil)
    }

    /// A source holding a list of `sections` × `elements` messages, and a replica of it first synced
    /// in pages, in a new directory.
    static func replicated(sections: Int, elements: Int) async throws
        -> (directory: TemporaryDirectory, source: Store, replicaPath: String, list: [ListSection])
    {
        let directory = try TemporaryDirectory()
        let source = try Store(path: directory.file("source.liststore"))
        let replicaPath = directory.file("replica.liststore")
        let list = PagedSyncTests.bigList(sections: sections, elements: elements)
        try await source.commit(list, to: "l")
        try await firstSync(of: source, into: replicaPath)
        return (directory, source, replicaPath, list)
    }

    /// Pulls into the replica at `path` with a store opened anew (so no head is kept in memory, as
    /// in a new process), and returns the replica's digest.
    static func pull(_ source: Store, into path: String) async throws -> String {
        let store = try Store(path: path)
        defer { try? store.close() }
        _ = try await Replica(store: store, list: "l").pull(from: LocalSource(source))
        return try await store.summary(of: "l").digest.hex
    }

    @Test func randomEntriesAppliedToHeadsReadInPartMakeTheSourceDigests() async throws {
        let directory = try TemporaryDirectory()
        let source = try Store(path: directory.file("source.liststore"))
        let replicaPath = directory.file("replica.liststore")
        var random = RandomSnapshots(seed: 0xE1E_4EC, duplicates: true)
        var current = random.snapshot(maxSections: 12, maxElements: 30)
        while current.count < 6 { current = random.snapshot(maxSections: 12, maxElements: 30) }
        try await source.commit(listSections(current), to: "l")
        try await Self.firstSync(of: source, into: replicaPath)
        let kept = try Self.keptRecords(replicaPath)
        #expect(kept.sections == current.count && kept.kept == kept.sections)
        var partial = 0
        for round in 0..<300 {
            // Mostly changes within sections (read in part), some that move sections (read whole),
            // and several entries per pull now and then.
            current = random.edit(current, intensity: round % 5 == 0 ? 0.3 : 0.05)
            try await source.commit(listSections(current), to: "l")
            if round % 7 == 3 {
                current = random.edit(current, intensity: 0.05)
                try await source.commit(listSections(current), to: "l")
            }
            let digest = try await Self.pull(source, into: replicaPath)
            let expected = try await source.summary(of: "l").digest.hex
            #expect(digest == expected, "round \(round)")
            guard digest == expected else { return }
            let records = try Self.records(replicaPath)
            if records.allSatisfy({ $0 != nil }) { partial += 1 }
            #expect(Self.wrongRecords(records, listSections(current)) == [], "round \(round)")
            if round % 100 == 99 { #expect(try await Store(path: replicaPath).verify().isValid) }
        }
        // Most entries were applied in part (a whole head forgets the records of what it changes).
        #expect(partial > 150)
        let replica = try Store(path: replicaPath)
        #expect(try await replica.snapshot(of: "l").sections == listSections(current))
        #expect(try await replica.verify().isValid)
    }

    @Test func aLocalChangeForgetsTheRecordsOfWhatItChangesAndTheNextPullMakesThemAgain() async throws {
        let (directory, source, replicaPath, list) = try await Self.replicated(sections: 6, elements: 20)
        defer { withExtendedLifetime(directory) {} }
        #expect(try Self.keptRecords(replicaPath) == (6, 6))

        // A local change to section 2: its records are forgotten, the others' stay.
        let local = try Store(path: replicaPath)
        try await local.commit(Self.updating(list, 2, 3, ["mine": true]), to: "l")
        try local.close()
        #expect(try Self.keptRecords(replicaPath) == (6, 5))
        #expect(try Self.wrongRecords(replicaPath, Self.updating(list, 2, 3, ["mine": true])) == [])
        // The source changes section 4; the pull rebases the local change and is pushed later.
        let changed = Self.updating(list, 4, 0, ["theirs": true])
        try await source.commit(changed, to: "l")
        let store = try Store(path: replicaPath)
        _ = try await Replica(store: store, list: "l").pull(from: LocalSource(source))
        #expect(try await store.snapshot(of: "l").sections == Self.updating(changed, 2, 3, ["mine": true]))
        #expect(try await store.verify().isValid)
        try store.close()
    }

    @Test func sectionsWithoutRecordsHaveThemMadeFromTheirRows() async throws {
        let (directory, source, replicaPath, list) = try await Self.replicated(sections: 8, elements: 10)
        defer { withExtendedLifetime(directory) {} }
        // As in a store made before records were kept.
        try Self.tamper(replicaPath, "UPDATE section SET element_records = NULL")
        #expect(try Self.keptRecords(replicaPath) == (8, 0))
        let changed = Self.updating(list, 5, 5, ["changed": true])
        try await source.commit(changed, to: "l")
        #expect(try await Self.pull(source, into: replicaPath) == (try await source.summary(of: "l").digest.hex))
        #expect(try Self.keptRecords(replicaPath) == (8, 8))
        let replica = try Store(path: replicaPath)
        #expect(try await replica.snapshot(of: "l").sections == changed)
        #expect(try await replica.verify().isValid)
    }

    @Test(arguments: ["wrong", "garbled"]) func wrongRecordsAreFoundByVerifyAndMadeAgainFromTheRows(_ kind: String) async throws {
        let (directory, source, replicaPath, list) = try await Self.replicated(sections: 4, elements: 10)
        defer { withExtendedLifetime(directory) {} }
        // Section 1 keeps the records of section 0's elements, or bytes that are not records.
        try Self.tamper(
            replicaPath,
            kind == "wrong"
                ? "UPDATE section SET element_records = (SELECT element_records FROM section WHERE position = 0) WHERE position = (SELECT min(position) FROM section WHERE position > 0)"
                : "UPDATE section SET element_records = x'4501' WHERE position = (SELECT min(position) FROM section WHERE position > 0)")
        let verified = try await Store(path: replicaPath).verify()
        #expect(!verified.isValid)
        #expect(verified.lists.first?.problem?.contains("element records kept for section 's1'") == true)
        // An entry touching section 3: the digest made from the kept records is not the source's, so
        // it is made again from the rows, which are right, and the records are kept again from them.
        let changed = Self.updating(list, 3, 0, ["changed": true])
        try await source.commit(changed, to: "l")
        let store = try Store(path: replicaPath)
        let result = try await Replica(store: store, list: "l").pull(from: LocalSource(source))
        #expect(!result.resynced && result.applied == 1)
        #expect(try await store.summary(of: "l").digest == (try await source.summary(of: "l").digest))
        #expect(try await store.snapshot(of: "l").sections == changed)
        #expect(try await store.verify().isValid)
        try store.close()
    }

    /// The commit of a replayed entry that is due to store a snapshot (here the 16th after a first
    /// sync, whose journal entry holds the list) writes it from the rows in runs and in pieces: the
    /// stored document is the bytes `documentJSON` gives for the same list, and time travel and
    /// `verify` read it.
    @Test func aSnapshotDueAfterAReplayedEntryIsWrittenFromTheRowsInPieces() async throws {
        let (directory, source, replicaPath, list) = try await Self.replicated(sections: 5, elements: 1000)
        defer { withExtendedLifetime(directory) {} }
        var current = list
        var due: (version: Int, sections: [ListSection])?
        for k in 0..<20 {
            current = Self.updating(current, k % 5, k * 37 % 1000, ["edit": .number(JSONNumber(k))])
            try await source.commit(current, to: "l")
            _ = try await Self.pull(source, into: replicaPath)
            guard let stored = try Self.newestStoredSnapshot(replicaPath), due == nil else { continue }
            let replica = try Store(path: replicaPath)
            let summary = try await replica.summary(of: "l")
            #expect(stored.version == summary.version)
            let expected = ListSnapshot(list: "l", version: summary.version, digest: summary.digest, sections: current)
            #expect(stored.document == Data(expected.documentJSON))
            // Written in pieces (a TEXT value would be the document gathered).
            #expect(stored.type == "blob")
            due = (stored.version, current)
            try replica.close()
        }
        let (version, sections) = try #require(due)
        let replica = try Store(path: replicaPath)
        #expect(try await replica.snapshot(of: "l", at: version).sections == sections)
        #expect(try await replica.verify().isValid)
        try replica.close()
    }
}
