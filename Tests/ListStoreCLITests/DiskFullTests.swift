import Foundation
import ListDiffTestSupport
import ListJSON
import ListStore
import ListStorePostgres
import ListStorePostgresTestSupport
import ListStoreTestSupport
import Testing

/// A disk that fills up, on the small file system of `LISTSTORE_TEST_SMALL_DISK` (a 128 MiB tmpfs):
/// an upload that runs out of room is refused (507 `storageFull`, exit 74) and keeps nothing, the
/// push that needed it stays pending and lands once there is room, a commit larger than the room
/// left is refused by SQLite's own "disk is full", and every store verifies. One test at a time:
/// each fills the disk.
@Suite(.serialized, .enabled(if: SmallDisk.path != nil, Comment(rawValue: SmallDisk.reason)))
struct DiskFullTests {
    @Test func anUploadThatRunsOutOfRoomKeepsNothingAndThePushLandsOnceThereIsRoom() async throws {
        let (disk, dir) = (try SmallDisk.directory(), try TemporaryDirectory())
        let source = disk.file("source.liststore")
        let first = #"{"sections":[{"id":"s","elements":[{"id":"a","content":1}]}]}"#
        #expect(try await CLIRunner.runOffPool(["commit", "--db", source, "--list", "inbox", "--file", try dir.file("a.json", first)]).status == 0)
        let server = try ConvergenceProcessTests.Server(db: source)
        defer { server.stop() }
        let phone = dir.url.appendingPathComponent("phone.liststore").path
        #expect(try await CLIRunner.runOffPool(["pull", "--from", server.url, "--list", "inbox", "--replica", phone]).status == 0)

        var random = SplitMix64(seed: 0xD15C_F011)
        let bytes = (0..<(24 << 20) + 5).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        let put = try await CLIRunner.runOffPool(["blob", "put", "--db", phone, "--list", "inbox", try dir.file("VID_2.mov", bytes)])
        #expect(put.status == 0, "\(put.stderr)")
        let id = try #require(try JSONValue(parsing: Array(put.stdout.utf8))["$blob"]?.stringValue)
        let video = #"{"sections":[{"id":"s","elements":[{"id":"a","content":1},{"id":"v","content":{"video":"# + put.stdout.dropLast() + "}}]}]}"
        #expect(try await CLIRunner.runOffPool(["commit", "--db", phone, "--list", "inbox", "--file", try dir.file("v.json", video)]).status == 0)

        // Room for half the video beyond the 16 MiB a store keeps.
        try disk.fill(leaving: 28 << 20)
        let refused = try await CLIRunner.runOffPool(["push", "--from", server.url, "--list", "inbox", "--replica", phone])
        #expect(refused.status == 74)
        #expect(refused.stderr.contains("no room"), "\(refused.stderr)")
        #expect(refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")
        let store = try Store(path: source)
        defer { try? store.close() }
        let hash = ContentHash(of: bytes)
        #expect(try await store.blob(hash, of: "inbox") == nil, "the refused upload kept bytes")

        // The same upload over HTTP: one JSON error, 507.
        let answer = try HTTP.request("PUT", server.url + "/v1/lists/inbox/blobs/" + id, bytes: bytes)
        #expect(answer.status == 507)
        #expect(try HTTP.object(answer)["error"]?["code"]?.stringValue == "storageFull")
        #expect(try await store.blob(hash, of: "inbox") == nil, "the refused upload kept bytes")
        // Writes other than blobs' bytes go on in the room the store keeps.
        let second = #"[{"id":"s","elements":[{"id":"a","content":2}]}]"#
        #expect(try HTTP.request("POST", server.url + "/v1/lists/inbox/commits", body: #"{"sections":\#(second),"expectedVersion":1}"#).status == 200)
        #expect(try await CLIRunner.runOffPool(["verify", "--db", source]).status == 0)

        // Room again: the change that was pending lands, with its video.
        try disk.empty()
        let pushed = try await CLIRunner.runOffPool(["push", "--from", server.url, "--list", "inbox", "--replica", phone])
        #expect(pushed.status == 0, "\(pushed.stderr)")
        let ids = try await store.snapshot(of: "inbox").sections.flatMap { $0.elements.map(\.id) }
        #expect(ids == ["a", "v"])
        let out = dir.url.appendingPathComponent("out.mov").path
        #expect(try await CLIRunner.runOffPool(["blob", "get", "--db", source, "--list", "inbox", id, "--out", out]).status == 0)
        #expect(FileManager.default.contents(atPath: out).map { [UInt8]($0) == bytes } == true, "the bytes fetched are not the video's")
        server.stop()
        for db in [source, phone] {
            let verified = try await CLIRunner.runOffPool(["verify", "--db", db])
            #expect(verified.status == 0, "\(db): \(verified.stdout) \(verified.stderr)")
        }
    }

    @Test func aCommitOrAnUploadLargerThanTheRoomLeftChangesNothing() async throws {
        let (disk, dir) = (try SmallDisk.directory(), try TemporaryDirectory())
        let db = disk.file("full.liststore")
        let first = #"{"sections":[{"id":"s","elements":[{"id":"a","content":1}]}]}"#
        #expect(try await CLIRunner.runOffPool(["commit", "--db", db, "--list", "inbox", "--file", try dir.file("a.json", first)]).status == 0)
        // 4 MiB of contents, with 1 MiB left: SQLite's own "database or disk is full".
        let text = String(repeating: "x", count: 4096)
        let elements = (0..<1024).map { #"{"id":"e\#($0)","content":"\#(text)\#($0)"}"# }.joined(separator: ",")
        let large = try dir.file("large.json", #"{"sections":[{"id":"s","elements":[\#(elements)]}]}"#)
        try disk.fill(leaving: 1 << 20)
        let refused = try await CLIRunner.runOffPool(["commit", "--db", db, "--list", "inbox", "--file", large])
        #expect(refused.status == 74)
        #expect(refused.stderr.contains("no room"), "\(refused.stderr)")

        // Through the library: a blob whose bytes would leave less than 16 MiB free.
        try disk.empty()
        try disk.fill(leaving: 20 << 20)
        let store = try Store(path: db)
        defer { try? store.close() }
        let photo = (0..<(8 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let reference = BlobReference(of: photo, type: "image/jpeg")
        let error = await #expect(throws: StoreError.self) { try await store.storeBlob(reference, to: "inbox", bytes: photo) }
        #expect(error?.code == .storageFull, "\(String(describing: error))")
        #expect(try await store.blob(reference.hash, of: "inbox") == nil)
        #expect(try await store.snapshot(of: "inbox").version == 1)
        #expect(try await store.verify().isValid)

        // Room again: both land.
        try disk.empty()
        #expect(try await CLIRunner.runOffPool(["commit", "--db", db, "--list", "inbox", "--file", large]).status == 0)
        #expect(try await store.storeBlob(reference, to: "inbox", bytes: photo).isStored)
        #expect(try await store.verify().isValid)
    }
}

extension DiskFullTests {
    /// A store counts the pages its file freed as room: a blob released (its list deleted) leaves
    /// room for the next one on a disk that has less free than the store keeps.
    @Test func pagesTheStoreFreedAreRoomForTheNextBlob() async throws {
        let disk = try SmallDisk.directory()
        let store = try Store(path: disk.file("freed.liststore"))
        defer { try? store.close() }
        for list in ["a", "b"] { try await store.commit(linearList(1), to: list) }
        // 24 MiB freed, 12 free on the disk: room for a 4 MiB photo even if checkpoints lag behind
        // its parts on a loaded machine and the write-ahead log grows by as much (without the
        // freed pages, the disk alone has less than the 16 MiB kept).
        let old = (0..<(24 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 13) }
        try await store.storeBlob(BlobReference(of: old), to: "a", bytes: old)
        _ = try await store.deleteList("a")
        try store.checkpoint()
        try disk.fill(leaving: 12 << 20)
        let photo = (0..<(4 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 5 &+ 1) }
        #expect(try await store.storeBlob(BlobReference(of: photo), to: "b", bytes: photo).isStored)
        #expect(try await store.verify().isValid)
    }
}

extension DiskFullTests {
    /// PostgreSQL's `disk_full` (SQLSTATE 53100), on a database whose tables live on the small disk
    /// (a tablespace there; PostgreSQL's own log stays on its disk): an upload that fills the disk
    /// is answered 507 `storageFull` and keeps nothing; once there is room, the store verifies and
    /// the same upload lands. (PostgreSQL keeps no room of its own for other writes: its commits
    /// need room as the upload did.)
    @Test(.enabled(if: PostgresTestEnvironment.url != nil, Comment(rawValue: PostgresTestEnvironment.reason)))
    func aPostgreSQLStoreOnAFullDiskRefusesAnUploadAndKeepsNothing() async throws {
        let disk = try SmallDisk.directory()
        try await PostgresTestDatabase.withFresh(inDirectory: disk.file("postgres")) { database in
            // Migrated here, with the test database's generous open timeout (see
            // PostgresServeFaultTests).
            await (try PostgresStore(configuration: database.configuration)).close()
            let server = try ConvergenceProcessTests.Server(db: database.url)
            defer { server.stop() }
            let list = #"{"sections":[{"id":"s","elements":[{"id":"a","content":1}]}]}"#
            #expect(try HTTP.request("POST", server.url + "/v1/lists/inbox/commits", body: list).status == 200)

            var random = SplitMix64(seed: 0x9057_F011)
            let bytes = (0..<(12 << 20) + 3).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            let id = BlobReference(of: bytes).id
            try disk.fill(leaving: 4 << 20)
            let refused = try HTTP.request("PUT", server.url + "/v1/lists/inbox/blobs/" + id, bytes: bytes)
            #expect(refused.status == 507, "\(String(decoding: refused.body, as: UTF8.self))")
            #expect(try HTTP.object(refused)["error"]?["code"]?.stringValue == "storageFull")
            #expect(try HTTP.request("GET", server.url + "/v1/lists/inbox/blobs/" + id + "/upload").status == 404, "the refused upload kept bytes")

            // Verified once there is room: a new session of a database whose disk is full may be
            // refused by PostgreSQL itself ("could not write init file").
            try disk.empty()
            let verified = try await CLIRunner.runOffPool(["verify", "--db", database.url])
            #expect(verified.status == 0, "\(verified.stdout) \(verified.stderr)")
            #expect(try HTTP.request("PUT", server.url + "/v1/lists/inbox/blobs/" + id, bytes: bytes).status == 200)
            let read = try HTTP.request("GET", server.url + "/v1/lists/inbox/blobs/" + id)
            let same = read.body == bytes
            #expect(read.status == 200 && same, "the bytes read are not the blob's")
        }
    }
}

/// The full-disk tests run in CI: a CI run without the small disk fails.
@Suite struct SmallDiskEnvironmentTests {
    @Test func fullDiskTestsRunInCI() {
        guard SmallDisk.path == nil else { return }
        if SmallDisk.inCI, SmallDisk.unavailable == nil {
            Issue.record("the full-disk tests must run in CI, but LISTSTORE_TEST_SMALL_DISK is not set (.ci/run mounts a small disk)")
        } else {
            print("DiskFullTests: skipped: \(SmallDisk.unavailable ?? SmallDisk.reason)")
        }
    }
}
