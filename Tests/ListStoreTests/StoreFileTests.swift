import Foundation
import GRDB
import ListMerge
@_spi(Replication) import ListStore
import ListStoreCore
import ListStoreTestSupport
import ListDiffTestSupport
import Testing

/// Files that are not ours are refused and left byte-for-byte untouched.
@Suite(.heavyWork) struct StoreFileTests {
    private func bytes(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }

    /// - Parameter sidecars: whether SQLite's `-wal`/`-shm` files may appear (a ListStore file of a newer
    ///   schema is read to find that out; other files are never opened through SQLite).
    private func expectRefused(_ path: String, code: StoreError.Code, sidecars: Bool = false) throws {
        let before = bytes(path)
        let siblings = try FileManager.default.contentsOfDirectory(atPath: (path as NSString).deletingLastPathComponent)
        #expect {
            let store = try Store(path: path)
            try store.commit(linearList(1), to: "l")
        } throws: { error in
            (error as? StoreError)?.code == code
        }
        let after = bytes(path)
        #expect(after == before)
        if let after, let before, after != before {
            let diffs = zip(after, before).enumerated().filter { $0.element.0 != $0.element.1 }.prefix(10).map { "\($0.offset)" }
            Issue.record("differs at \(diffs) in \(path)")
        }
        var now = try FileManager.default.contentsOfDirectory(atPath: (path as NSString).deletingLastPathComponent)
        if sidecars { now.removeAll { ($0.hasSuffix("-wal") || $0.hasSuffix("-shm")) && !siblings.contains($0) } }
        #expect(now.sorted() == siblings.sorted())
    }

    /// A file's identity (device and inode, which a replica's client id is kept for) reads as
    /// earlier releases recorded it, through Foundation's attributes: the same text for the file
    /// and for a symbolic link to it, another for a copy, none for a missing file.
    @Test func aFilesIdentityIsTheDeviceAndInodeAsRecordedBefore() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("identity.liststore")
        let store = try Store(path: path)
        try store.commit(linearList(1), to: "l")
        try store.close()
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        let device = try #require((attributes[.systemNumber] as? NSNumber)?.uint64Value)
        let inode = try #require((attributes[.systemFileNumber] as? NSNumber)?.uint64Value)
        #expect(_FileIdentity.of(path) == "\(device):\(inode)")
        let link = directory.file("link.liststore")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: path)
        #expect(_FileIdentity.of(link) == "\(device):\(inode)")
        let copy = directory.file("copy.liststore")
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        #expect(_FileIdentity.of(copy) != nil && _FileIdentity.of(copy) != _FileIdentity.of(path))
        #expect(_FileIdentity.of(directory.file("missing.liststore")) == nil)
    }

    @Test func textFileIsRefusedUntouched() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("notes.txt")
        try Data("my notes\n".utf8).write(to: URL(fileURLWithPath: path))
        try expectRefused(path, code: .notAStore)
    }

    @Test func emptyFileIsRefusedUntouched() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("empty.db")
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        try expectRefused(path, code: .notAStore)
    }

    @Test func otherSQLiteDatabaseIsRefusedUntouched() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("other.sqlite")
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in try db.execute(sql: "CREATE TABLE t(x); INSERT INTO t VALUES (1)") }
        try queue.close()
        try expectRefused(path, code: .notAStore)
    }

    @Test func directoryIsRefused() throws {
        let directory = try TemporaryDirectory()
        #expect {
            try Store(path: directory.path).commit(linearList(1), to: "l")
        } throws: { error in
            (error as? StoreError)?.code == .notAStore
        }
    }

    @Test func storeOfANewerSchemaIsRefusedUntouched() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("newer.liststore")
        try Store(path: path).commit(linearList(2), to: "l")
        // A later release adds a migration (and checkpoints, so the header says so).
        let future = Store.schemaVersion + 1
        let queue = try DatabaseQueue(path: path)
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: """
                INSERT INTO schema_migration VALUES (\(future), 'v9999_future.sql', 'x', '2030-01-01T00:00:00.000Z');
                PRAGMA user_version = \(future);
                """)
            try db.checkpoint(.truncate)
        }
        try queue.close()
        try expectRefused(path, code: .unsupportedSchema, sidecars: true)

        // The same when only the migration record says so.
        let other = directory.file("newer-record.liststore")
        try Store(path: other).commit(linearList(2), to: "l")
        let queue2 = try DatabaseQueue(path: other)
        try queue2.writeWithoutTransaction { db in
            try db.execute(
                sql: "INSERT INTO schema_migration VALUES (?, 'v9999_future.sql', 'x', '2030-01-01T00:00:00.000Z')",
                arguments: [Store.schemaVersion + 1])
            try db.checkpoint(.truncate)
        }
        try queue2.close()
        try expectRefused(other, code: .unsupportedSchema, sidecars: true)
    }

    /// A store migrated by a release whose migration files differed in comments only (it recorded
    /// those texts' checksums) opens; any other checksum is refused, the file untouched.
    @Test func aFormerTextOfAMigrationIsTheSameMigration() throws {
        let directory = try TemporaryDirectory()
        for (checksum, opens) in [("132b93d5dd35f39f06111ab51bea39df4800f1ecaa45deae008262b193d17d1b", true), (String(repeating: "0", count: 64), false)] {
            let path = directory.file("\(opens).liststore")
            let store = try Store(path: path)
            try store.commit(linearList(2), to: "l")
            try store.close()
            let queue = try DatabaseQueue(path: path)
            try queue.writeWithoutTransaction { db in
                try db.execute(sql: "UPDATE schema_migration SET checksum = ? WHERE version = 3", arguments: [checksum])
                try db.checkpoint(.truncate)
            }
            try queue.close()
            if opens {
                #expect(try Store(path: path).summary(of: "l").version == 1)
            } else {
                try expectRefused(path, code: .unsupportedSchema, sidecars: true)
            }
        }
    }

    /// A store written by the release before the sync tables gets them when it is opened, keeping
    /// its lists.
    @Test func storeOfSchemaOneIsMigrated() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("old.liststore")
        try Store(path: path).commit(linearList(3), to: "l")
        let queue = try DatabaseQueue(path: path)
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: """
                DROP TABLE stored_snapshot; ALTER TABLE list DROP COLUMN snapshot_version;
                ALTER TABLE list DROP COLUMN bytes_since_snapshot;
                DROP TABLE outbox; DROP TABLE push; ALTER TABLE store DROP COLUMN client_id; ALTER TABLE store DROP COLUMN file_identity;
                ALTER TABLE journal DROP COLUMN push_client; ALTER TABLE journal DROP COLUMN push_seq;
                ALTER TABLE journal DROP COLUMN conflicts;
                DROP TABLE consumer; DROP TABLE replica_source;
                DROP TABLE feed; ALTER TABLE store DROP COLUMN feed_position; ALTER TABLE store DROP COLUMN feed_base;
                DROP TABLE replica_set; DROP TABLE deleted_section; ALTER TABLE list DROP COLUMN deleted_sections_kept;
                DROP INDEX list_by_uid; ALTER TABLE list DROP COLUMN uid; ALTER TABLE store DROP COLUMN feed_secret;
                DROP TABLE staged_sync;
                ALTER TABLE section DROP COLUMN element_records;
                DROP TABLE list_blob; DROP TABLE blob_upload; DROP TABLE blob_part; DROP TABLE blob;
                DELETE FROM schema_migration WHERE version > 1; PRAGMA user_version = 1;
                """)
            try db.checkpoint(.truncate)
        }
        try queue.close()
        let store = try Store(path: path)
        #expect(try store.snapshot(of: "l").sections == linearList(3))
        try store.registerConsumer("app", of: "l")
        #expect(try store.consumers(of: "l").map(\.name) == ["app"])
        // Version 3 (offline writes) made the store a client id of its own.
        #expect(UUID(uuidString: try store.clientID()) != nil)
        #expect(try store.verify().isValid)
    }

    /// A store written by the release before the store feed gets one when it is opened: the journal
    /// entries it kept, in the order they were committed, and then every new commit.
    @Test func storeOfSchemaFiveGetsItsFeed() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("five.liststore")
        let store = try Store(path: path)
        try store.commit(linearList(1), to: "b")
        try store.commit(linearList(2), to: "a")
        try store.commit(linearList(3), to: "b")
        try store.close()
        let queue = try DatabaseQueue(path: path)
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: """
                DROP TABLE feed; ALTER TABLE store DROP COLUMN feed_position; ALTER TABLE store DROP COLUMN feed_base;
                DROP TABLE replica_set; ALTER TABLE push DROP COLUMN covers_from; ALTER TABLE push DROP COLUMN fingerprints;
                DROP TABLE deleted_section; ALTER TABLE list DROP COLUMN deleted_sections_kept;
                DROP INDEX list_by_uid; ALTER TABLE list DROP COLUMN uid; ALTER TABLE store DROP COLUMN feed_secret;
                ALTER TABLE replica_source DROP COLUMN list_uid;
                DROP TABLE staged_sync;
                ALTER TABLE section DROP COLUMN element_records;
                DROP TABLE list_blob; DROP TABLE blob_upload; DROP TABLE blob_part; DROP TABLE blob;
                DELETE FROM schema_migration WHERE version > 5; PRAGMA user_version = 5;
                UPDATE journal SET committed_at = '2026-01-01T00:00:00.000Z';
                UPDATE journal SET committed_at = '2026-01-01T00:00:01.000Z'
                    WHERE version = 2 AND list_id = (SELECT id FROM list WHERE name = 'b');
                """)
            try db.checkpoint(.truncate)
        }
        try queue.close()
        let migrated = try Store(path: path)
        try migrated.commit(linearList(4), to: "a")
        let feed = try migrated.feed()
        // Committed at the same millisecond: in the order of the lists' rows ("b" was made first).
        #expect(feed.events.map { "\($0.list)\($0.entry?.version ?? -1)" } == ["b1", "a1", "b2", "a2"])
        #expect(feed.events.map(\.position) == [1, 2, 3, 4] && !feed.hasMore)
    }

    /// A list made before the store kept the sections deleted from its lists (schema 8) cannot tell
    /// a section it deleted from one it never had: its merges report both as the rebase does
    /// (`sectionDeleted`). A list made after the migration tells them apart (`unknownSection`).
    @Test func listOfSchemaEightReportsMissingSectionsAsTheRebaseDoes() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("eight.liststore")
        let store = try Store(path: path)
        try store.commit([ListSection(model: ListItem("a"), elements: []), ListSection(model: ListItem("b"), elements: [])], to: "old")
        try store.commit([ListSection(model: ListItem("a"), elements: [])], to: "old")
        try store.close()
        let queue = try DatabaseQueue(path: path)
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: """
                DROP TABLE deleted_section; ALTER TABLE list DROP COLUMN deleted_sections_kept;
                DROP INDEX list_by_uid; ALTER TABLE list DROP COLUMN uid; ALTER TABLE store DROP COLUMN feed_secret;
                ALTER TABLE replica_source DROP COLUMN list_uid; ALTER TABLE feed DROP COLUMN fingerprint; ALTER TABLE feed DROP COLUMN list_uid;
                ALTER TABLE replica_set DROP COLUMN cursor;
                DROP TABLE staged_sync;
                ALTER TABLE section DROP COLUMN element_records;
                DROP TABLE list_blob; DROP TABLE blob_upload; DROP TABLE blob_part; DROP TABLE blob;
                DELETE FROM schema_migration WHERE version > 8; PRAGMA user_version = 8;
                """)
            try db.checkpoint(.truncate)
        }
        try queue.close()
        let migrated = try Store(path: path)
        try migrated.commit([ListSection(model: ListItem("a"), elements: []), ListSection(model: ListItem("b"), elements: [])], to: "new")
        try migrated.commit([ListSection(model: ListItem("a"), elements: [])], to: "new")
        // Into "b", which both lists deleted, and "z", which neither ever had.
        let intents: [Intent] = [
            .insertElement("n", content: 1, section: "b", after: nil, before: nil),
            .insertElement("m", content: 2, section: "z", after: nil, before: nil),
        ]
        let old = try migrated.merge(Push(id: PushID(client: "client-1", seq: 1), intents: intents), into: "old")
        #expect(old.conflicts == [Conflict(.sectionDeleted, "n", section: "b", mine: 1), Conflict(.sectionDeleted, "m", section: "z", mine: 2)])
        let new = try migrated.merge(Push(id: PushID(client: "client-1", seq: 1), intents: intents), into: "new")
        #expect(new.conflicts == [Conflict(.sectionDeleted, "n", section: "b", mine: 1), Conflict(.unknownSection, "m", section: "z", mine: 2)])
        #expect(try migrated.verify().isValid)
    }

    /// A store of schema 15 gets its blobs' uses and its uploads' times (schema 16): an upload under
    /// way is timed at the migration, so the prune after it does not give it up.
    @Test func storeOfSchemaFifteenTimesItsUploadsAtTheMigration() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("fifteen.liststore")
        let store = try Store(path: path)
        try await store.commit(linearList(1), to: "l")
        let (whole, partial) = (Array(repeating: UInt8(7), count: 100), (0..<(1_048_576 + 10)).map { UInt8(truncatingIfNeeded: $0) })
        let (kept, cut) = (BlobReference(of: whole), BlobReference(of: partial))
        try await store.storeBlob(kept, to: "l", bytes: whole)
        #expect(try await store.storeBlob(cut, to: "l", from: _OnePiece(bytes: Array(partial[..<1_048_576])), startingAt: 0).uploaded == 1_048_576)
        try store.close()
        let queue = try DatabaseQueue(path: path)
        try await queue.writeWithoutTransaction { db in
            try db.execute(sql: """
                DROP INDEX list_blob_by_use; ALTER TABLE list_blob DROP COLUMN used; ALTER TABLE list_blob DROP COLUMN from_source;
                ALTER TABLE blob_upload DROP COLUMN updated_at;
                DELETE FROM schema_migration WHERE version > 15; PRAGMA user_version = 15;
                """)
            try db.checkpoint(.truncate)
        }
        try queue.close()
        let migrated = try Store(path: path)
        let times = try await DatabaseQueue(path: path).read { db in try String.fetchAll(db, sql: "SELECT updated_at FROM blob_upload") }
        #expect(times.count == 1 && times.allSatisfy { _Time.date($0) != nil }, "\(times)")
        let pruned = try await migrated.prune("l", .keepLast(0))
        #expect(pruned.abandonedUploads == 0)
        #expect(try await migrated.blob(cut.hash, of: "l")?.uploaded == 1_048_576)
        #expect(try await migrated.blob(kept.hash, of: "l")?.isStored == true)
        #expect(try await migrated.verify(list: nil, progress: nil).isValid)
    }

    /// A store that closes lets go of its file: the connections of the snapshots its paged reads
    /// kept are closed before `close()` returns, so the last connection removes the side files, and
    /// another process may take the file at once (a restore, a copy). Many rounds: the snapshots'
    /// connections used to close a moment later, on another queue.
    @Test func aClosedStoreLetsGoOfItsFileAtOnce() async throws {
        let directory = try TemporaryDirectory()
        for round in 0..<30 {
            let path = directory.file("closed\(round).liststore")
            let store = try Store(path: path)
            try await store.commit(linearList(300), to: "l")
            let page = try await store.page(of: "l", at: nil, after: nil, maxBytes: 2_000)
            #expect(page.next != nil)
            try store.close()
            for side in ["-wal", "-shm"] {
                #expect(!FileManager.default.fileExists(atPath: path + side), "round \(round): \(side) left")
            }
            let queue = try DatabaseQueue(path: path)
            try await queue.writeWithoutTransaction { db in try db.execute(sql: "BEGIN EXCLUSIVE; COMMIT") }
            try queue.close()
        }
    }

    /// The journal entry of a first sync in pages is written in pieces (SQLite's incremental blob
    /// I/O): a BLOB of the UTF-8 bytes a commit of the same list records as TEXT, read back alike.
    @Test func aCopysJournalEntryIsWrittenInPiecesAndReadAsText() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("copy.liststore")
        let store = try Store(path: path)
        let sections = (0..<3).map { s in
            ListSection(model: ListItem(id: "s\"\(s)", json: ["n": .number(JSONNumber(s))]), elements: (0..<3000).map { ListItem(id: "e\(s)-\($0)", json: .string("\u{1}\($0)")) })
        }
        try await store.commit(sections, to: "source")
        var page = try await store.page(of: "source", at: nil, after: nil, maxBytes: 20_000)
        while true {
            _ = try await store.stage(page, of: "copy", reason: "pruned")
            guard let next = page.next else { break }
            page = try await store.page(of: "source", at: page.version, after: next, maxBytes: 20_000)
        }
        _ = try await store.commitStagedSync(of: "copy", message: "in pages") { _ in }
        let (made, copied) = (try await store.journal(of: "source", after: 0, limit: 1, maxBytes: .max), try await store.journal(of: "copy", after: 0, limit: 1, maxBytes: .max))
        #expect(copied.entries.map(\.stagesJSON) == made.entries.map(\.stagesJSON) && !made.entries.isEmpty)
        try store.close()
        let queue = try DatabaseQueue(path: path)
        let types = try await queue.read { db in
            try String.fetchAll(db, sql: "SELECT typeof(j.stages) FROM journal j JOIN list l ON l.id = j.list_id ORDER BY l.name")
        }
        #expect(types == ["blob", "text"])
        try queue.close()
        #expect(try await Store(path: path).verify().isValid)
    }

    /// A store of schema 11 keeps its journal (with a merged push's record) and stored snapshots
    /// when they move into rowid tables (schema 12), and time travel and verify read them as before;
    /// neither table is then keyed by its rows: a large entry is never read to place a small one.
    @Test func storeOfSchemaElevenMovesItsJournalIntoARowidTable() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("eleven.liststore")
        let store = try Store(path: path)
        var versions: [[ListSection]] = []
        for k in 0..<40 {
            versions.append(linearList(20 + k, content: k))
            try store.commit(versions[k], to: "l")
        }
        _ = try store.merge(Push(id: PushID(client: "client-1", seq: 1), intents: [.deleteElement("e0")]), into: "l")
        try store.close()
        let queue = try DatabaseQueue(path: path)
        let stored = try queue.read { try Int.fetchAll($0, sql: "SELECT version FROM stored_snapshot ORDER BY version") }
        #expect(!stored.isEmpty)
        try queue.writeWithoutTransaction { db in
            // Back to schema 11's tables: the same columns, keyed by their rows.
            try db.execute(sql: """
                CREATE TABLE journal_old (list_id INTEGER NOT NULL REFERENCES list(id), version INTEGER NOT NULL,
                    parent_version INTEGER NOT NULL, committed_at TEXT NOT NULL, digest TEXT NOT NULL, author TEXT, message TEXT,
                    section_count INTEGER NOT NULL, element_count INTEGER NOT NULL, stages TEXT NOT NULL, push_client TEXT,
                    push_seq INTEGER, conflicts TEXT, PRIMARY KEY (list_id, version)) WITHOUT ROWID;
                INSERT INTO journal_old SELECT * FROM journal; DROP TABLE journal; ALTER TABLE journal_old RENAME TO journal;
                CREATE TABLE stored_snapshot_old (list_id INTEGER NOT NULL REFERENCES list(id), version INTEGER NOT NULL,
                    snapshot TEXT NOT NULL, PRIMARY KEY (list_id, version)) WITHOUT ROWID;
                INSERT INTO stored_snapshot_old SELECT * FROM stored_snapshot; DROP TABLE stored_snapshot;
                ALTER TABLE stored_snapshot_old RENAME TO stored_snapshot;
                ALTER TABLE section DROP COLUMN element_records;
                ALTER TABLE staged_sync DROP COLUMN entry_bytes;
                CREATE TABLE staged_record (list_name TEXT NOT NULL, seq INTEGER NOT NULL, is_section INTEGER NOT NULL,
                    identifier TEXT NOT NULL, content TEXT NOT NULL, PRIMARY KEY (list_name, seq)) WITHOUT ROWID;
                DROP TABLE list_blob; DROP TABLE blob_upload; DROP TABLE blob_part; DROP TABLE blob;
                DELETE FROM schema_migration WHERE version > 11; PRAGMA user_version = 11;
                """)
            try db.checkpoint(.truncate)
        }
        try queue.close()
        let migrated = try Store(path: path)
        #expect(try migrated.verify().isValid)
        for k in [0, 17, 39] { #expect(try migrated.snapshot(of: "l", at: k + 1).sections == versions[k]) }
        let again = try migrated.merge(Push(id: PushID(client: "client-1", seq: 1), intents: [.deleteElement("e0")]), into: "l")
        #expect(again.duplicate)
        try migrated.close()
        let (tables, kept) = try DatabaseQueue(path: path).read { db in
            (
                try String.fetchAll(db, sql: "SELECT sql FROM sqlite_master WHERE name IN ('journal', 'stored_snapshot')"),
                try Int.fetchAll(db, sql: "SELECT version FROM stored_snapshot ORDER BY version")
            )
        }
        #expect(tables.count == 2 && tables.allSatisfy { !$0.contains("WITHOUT ROWID") })
        #expect(kept == stored)
    }

    /// A creation killed midway leaves its temporary file; the next creation in the directory
    /// removes it (its process is gone), and leaves those of live processes alone.
    @Test func abandonedCreationFilesAreRemoved() throws {
        let directory = try TemporaryDirectory()
        let finished = Process()
        finished.executableURL = URL(fileURLWithPath: "/bin/true")
        try finished.runWhenDescriptorsAllow()
        finished.waitUntilExit()
        let abandoned = directory.file(".s.liststore.creating-\(finished.processIdentifier)-X")
        let live = directory.file(".s.liststore.creating-\(getpid())-Y")
        for file in [abandoned, abandoned + "-wal", live] {
            #expect(FileManager.default.createFile(atPath: file, contents: Data("x".utf8)))
        }
        try Store(path: directory.file("s.liststore")).commit(linearList(1), to: "l")
        #expect(!FileManager.default.fileExists(atPath: abandoned))
        #expect(!FileManager.default.fileExists(atPath: abandoned + "-wal"))
        #expect(FileManager.default.fileExists(atPath: live))
    }

    @Test func storeCreatedConcurrentlyByManyThreadsIsOneStore() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("race.liststore")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for k in 0..<8 {
                group.addTask { try await Store(path: path).commit(linearList(k + 1), to: "l\(k)") }
            }
            try await group.waitForAll()
        }
        let lists = try await Store(path: path).lists()
        #expect(lists.map(\.name) == (0..<8).map { "l\($0)" })
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.contains("creating") }.isEmpty)
    }

    /// Closing while commits run on other threads neither hangs (a commit takes the store's lock
    /// to keep its head, and closing waits for the commit) nor loses a commit: each either lands
    /// or fails, the store reopens for the next, and the file verifies. It computes little and
    /// hops between threads about a hundred times: on the suite's computing threads each hop waited
    /// behind the random tests' computations (over two minutes in all, in one CI run), so it runs
    /// on threads of its own.
    @Test(.blockingWaits, .timeLimit(.minutes(2))) func closingWhileCommitsRunNeitherHangsNorLosesThem() async throws {
        let directory = try TemporaryDirectory()
        for round in 0..<10 {
            let path = directory.file("racing\(round).liststore")
            let store = try Store(path: path)
            try await store.commit(linearList(5), to: "l")
            let landed = _Locked(0)
            await withTaskGroup(of: Void.self) { group in
                for k in 0..<4 {
                    group.addTask {
                        if (try? await store.commit(linearList(6 + k), to: "l\(k)")) != nil { landed.withLock { $0 += 1 } }
                    }
                }
                group.addTask {
                    await withCheckedContinuation { continuation in
                        DispatchQueue.global().async {
                            try? store.close()
                            continuation.resume()
                        }
                    }
                }
            }
            try store.close()
            let reopened = try Store(path: path)
            #expect(try await reopened.lists().count == 1 + landed.withLock { $0 }, "round \(round)")
            #expect(try await reopened.verify(list: nil, progress: nil).isValid)
            try reopened.close()
        }
    }

    /// `close()` removes the side files while something else still holds the store, and the store
    /// opens its file again when used after it.
    @Test func closingRemovesTheSideFilesAndUseReopens() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("l.liststore")
        let store = try Store(path: path)
        try store.commit(linearList(3), to: "l")
        let held = store  // a second reference, as a task that has not ended yet keeps one
        #expect(try held.snapshot(of: "l").version == 1)  // reads open connections of their own
        #expect(FileManager.default.fileExists(atPath: path + "-wal"))
        try store.close()
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        #expect(!FileManager.default.fileExists(atPath: path + "-shm"))
        try store.close()  // closing twice is fine
        #expect(try held.snapshot(of: "l").sections == linearList(3))
        try held.commit(linearList(4), to: "l")
        try store.close()
        #expect(try Store(path: path).snapshot(of: "l").version == 2)
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
    }
}
