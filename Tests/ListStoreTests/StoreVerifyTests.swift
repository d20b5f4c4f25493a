import Foundation
import GRDB
import ListDiffTestSupport
import ListStore
import ListStoreTestSupport
import Testing

@Suite(.heavyWork) struct StoreVerifyTests {
    /// A store with a list "l" of 10 versions.
    private func history(_ path: String) throws -> Store {
        let store = try Store(path: path)
        var random = RandomSnapshots(seed: 77)
        var current = random.snapshot(maxSections: 4, maxElements: 6)
        var version = 0
        while version < 10 {
            if try store.commit(listSections(current), to: "l").changed { version += 1 }
            current = random.edit(current, intensity: 0.5)
        }
        try store.commit(linearList(3), to: "other")
        return store
    }

    private func tamper(_ path: String, _ sql: String) throws {
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in try db.execute(sql: sql) }
        try queue.close()
    }

    @Test func intactStoreVerifies() throws {
        let directory = try TemporaryDirectory()
        let store = try history(directory.file("v.liststore"))
        var progress: [Int] = []
        let report = try store.verify(list: "l") { progress.append($0.completed) }
        #expect(report.isValid)
        #expect(report.lists.map(\.versionsVerified) == [10])
        #expect(progress == Array(1...10))
        #expect(try store.verify().lists.map(\.name) == ["l", "other"])
    }

    @Test func tamperedJournalDigestNamesTheVersion() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("v.liststore")
        _ = try history(path)
        try tamper(path, "UPDATE journal SET digest = 'abc' WHERE version = 6 AND list_id = (SELECT id FROM list WHERE name = 'l')")
        let report = try Store(path: path).verify()
        #expect(!report.isValid)
        let l = try #require(report.lists.first { $0.name == "l" })
        #expect(l.firstDivergentVersion == 6)
        #expect(l.versionsVerified == 5)
        #expect(report.lists.first { $0.name == "other" }?.isValid == true)
    }

    @Test func tamperedStagesNameTheVersion() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("v.liststore")
        _ = try history(path)
        try tamper(path, "UPDATE journal SET stages = '[{\"sectionDeleted\":[99]}]' WHERE version = 4")
        let l = try #require(try Store(path: path).verify(list: "l").lists.first)
        #expect(l.firstDivergentVersion == 4)
        try tamper(path, "UPDATE journal SET stages = 'not json' WHERE version = 3")
        #expect(try Store(path: path).verify(list: "l").lists.first?.firstDivergentVersion == 3)
    }

    /// A snapshot kept for time travel that is not the version it names is reported, and so is one
    /// outside the history; an intact one serves `snapshot(of:at:)`.
    @Test func tamperedStoredSnapshotIsReported() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("v.liststore")
        let store = try Store(path: path)
        var versions: [[ListSection]] = [[]]
        for step in 0..<40 {
            let sections = [ListSection(model: ListItem(id: "s", content: Array("0".utf8)), elements: (0..<5).map {
                ListItem(id: "e\($0)", content: Array("\(step * 5 + $0)".utf8))
            })]
            try store.commit(sections, to: "l")
            versions.append(sections)
        }
        try store.close()
        let stored = try DatabaseQueue(path: path).read { db in try Int.fetchAll(db, sql: "SELECT version FROM stored_snapshot ORDER BY version") }
        #expect(stored == [16, 32], "a snapshot every 16 versions of large changes")
        #expect(try Store(path: path).snapshot(of: "l", at: 35).sections == versions[35])
        #expect(try Store(path: path).verify().isValid)

        try tamper(path, "UPDATE stored_snapshot SET snapshot = (SELECT snapshot FROM stored_snapshot WHERE version = 16) WHERE version = 32")
        let l = try #require(try Store(path: path).verify(list: "l").lists.first)
        #expect(l.firstDivergentVersion == 32 && l.problem?.contains("stored snapshot at version 32") == true, "\(l)")
        // Pruning does not make it the base, and time travel gives it the journal's digest, not its own.
        let damaged = try Store(path: path)
        let error = #expect(throws: StoreError.self) { try damaged.prune("l", .before(32)) }
        #expect(error?.code == .damaged)
        #expect(try damaged.summary(of: "l").baseVersion == 0)
        #expect(try damaged.snapshot(of: "l", at: 32).digest == ListDigest.of(versions[32]))
        try damaged.close()

        try tamper(path, "UPDATE stored_snapshot SET version = 41 WHERE version = 32")
        let outside = try #require(try Store(path: path).verify(list: "l").lists.first)
        #expect(outside.firstDivergentVersion == 41, "\(outside)")
    }

    /// A blob's part changed or gone, a blob's row gone, or a reference to a blob the list does not
    /// have: each is reported for the list, and the other list still verifies.
    @Test func tamperedBlobsAreReported() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("v.liststore")
        let store = try history(path)
        let bytes = (0..<(3 << 19)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let photo = BlobReference(of: bytes)
        try await store.storeBlob(photo, to: "l", bytes: bytes)
        try await store.commit([ListSection(model: ListItem("s"), elements: [ListItem(id: "p", json: ["photo": photo.json])])], to: "l")
        #expect(try await store.verify().isValid)
        let tampering = [
            ("UPDATE blob_part SET bytes = zeroblob(1048576) WHERE start = 0", "do not hash to it"),
            ("DELETE FROM blob_part WHERE start = 1048576", "no part of the right size at byte 1048576"),
            ("DELETE FROM blob", "does not hold its bytes"),
            ("DELETE FROM list_blob", "refers to blob \(photo.id), which the list does not have"),
        ]
        for (sql, problem) in tampering {
            try tamper(path, sql)
            let report = try await Store(path: path).verify()
            #expect(report.lists.first { $0.name == "l" }?.problem?.contains(problem) == true, "\(sql): \(report.lists)")
            #expect(report.lists.first { $0.name == "other" }?.isValid == true)
        }
    }

    @Test func tamperedHeadRowIsReported() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("v.liststore")
        _ = try history(path)
        try tamper(path, """
            UPDATE element SET content = '4242' WHERE (section_id, position) =
                (SELECT section_id, position FROM element ORDER BY section_id, position LIMIT 1)
            """)
        let report = try Store(path: path).verify()
        #expect(!report.isValid)
        #expect(report.lists.contains { $0.firstDivergentVersion == $0.headVersion })
    }

    @Test func missingJournalEntryIsReported() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("v.liststore")
        _ = try history(path)
        try tamper(path, "DELETE FROM journal WHERE version = 7 AND list_id = (SELECT id FROM list WHERE name = 'l')")
        let l = try #require(try Store(path: path).verify(list: "l").lists.first)
        #expect(l.firstDivergentVersion == 7)
        #expect(l.problem?.contains("missing") == true)
    }

    @Test func corruptedFileNeverCrashes() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("v.liststore")
        _ = try history(path)
        var bytes = try #require(FileManager.default.contents(atPath: path))
        var rng = SplitMix64(seed: 9)
        for _ in 0..<5 {
            // Garble whole pages past the header.
            var copy = bytes
            let page = 4096 * Int.random(in: 1..<(copy.count / 4096), using: &rng)
            for k in 0..<400 { copy[page + 100 + k] = UInt8.random(in: 0...255, using: &rng) }
            let damaged = directory.file("damaged.liststore")
            try? FileManager.default.removeItem(atPath: damaged)
            try copy.write(to: URL(fileURLWithPath: damaged))
            do {
                // Whatever the damage hit, the answer is a report or a StoreError, never a crash.
                _ = try Store(path: damaged).verify()
            } catch let error as StoreError {
                #expect([.damaged, .io, .notAStore, .unsupportedSchema].contains(error.code))
            }
        }
        bytes.removeAll()
    }
}
