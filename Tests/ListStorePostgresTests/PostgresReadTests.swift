import ListDiff
import ListJSON
import ListStore
import ListStorePostgres
import ListStorePostgresTestSupport
import ListStoreTestSupport
import PostgresNIO
import Testing

// The read side on PostgreSQL gives what `Store` gives for the same rows: lists are committed to an
// SQLite store (the write path on PostgreSQL is still to come) and their rows copied over.
@Suite(.serialized, .enabled(if: PostgresTestEnvironment.url != nil, Comment(rawValue: PostgresTestEnvironment.reason)))
struct PostgresReadTests {
    /// Versions 1 to 5 of a list with odd identifiers and exact numbers.
    static let versions: [[ListSection]] = [
        [ListSection(model: ListItem(id: "today", json: ["title": "Today"]), elements: [ListItem("m1", 1), ListItem("m2", 2)])],
        [
            ListSection(model: ListItem(id: "today", json: ["title": "Today"]), elements: [ListItem("m2", 2), ListItem("m1", 10)]),
            ListSection(model: ListItem(id: "", json: .null), elements: [ListItem(id: "nul\u{0}id", json: "x"), ListItem("é", 3)]),
        ],
        [ListSection(model: ListItem(id: "", json: .null), elements: [ListItem(id: "nul\u{0}id", json: "y")])],
        [],
        [ListSection(model: ListItem("big", 7), elements: linearList(40)[0].elements)],
    ]

    @Test func listsSummariesSnapshotsAndJournalMatchTheSQLiteStore() async throws {
        let directory = try TemporaryDirectory()
        let sqlite = try Store(path: directory.file("source.liststore"))
        for sections in Self.versions { try await sqlite.commit(sections, to: "inbox", author: "ana", message: "m") }
        try await sqlite.commit(linearList(3), to: "b-list")
        try await sqlite.commit(linearList(2), to: "B-list")
        try await PostgresTestDatabase.withFresh { database in
            for list in try await sqlite.lists() { try await copy(list.name, from: sqlite, to: database) }
            try await database.withStore { store in
                #expect(try await store.lists() == (try await sqlite.lists()))
                #expect(try await store.lists().map(\.name) == ["B-list", "b-list", "inbox"])
                #expect(try await store.summary(of: "inbox") == (try await sqlite.summary(of: "inbox")))
                for version in 0...Self.versions.count {
                    let snapshot = try await store.snapshot(of: "inbox", at: version)
                    #expect(snapshot == (try await sqlite.snapshot(of: "inbox", at: version)))
                    if version > 0 { #expect(snapshot.sections == Self.versions[version - 1]) }
                }
                #expect(try await store.snapshot(of: "inbox") == (try await sqlite.snapshot(of: "inbox")))
                for (after, limit, maxBytes) in [(nil, 100, Int.max), (0, 2, Int.max), (2, 100, Int.max), (0, 100, 1), (1, 3, 400), (5, 10, Int.max), (0, 0, Int.max)] {
                    var page = try await store.journal(of: "inbox", after: after, limit: limit, maxBytes: maxBytes)
                    var same = try await sqlite.journal(of: "inbox", after: after, limit: limit, maxBytes: maxBytes)
                    // Each page names its own store (and the list's identity there).
                    let (identities, ids) = (
                        (try await store.identity(), try await sqlite.identity()),
                        (try await store.summary(of: "inbox").id, try await sqlite.summary(of: "inbox").id)
                    )
                    #expect(page.store == identities.0 && same.store == identities.1)
                    #expect(page.listID == ids.0 && same.listID == ids.1)
                    (page.store, same.store, page.listID, same.listID) = (nil, nil, nil, nil)
                    #expect(page == same)
                }
                let changes = try await store.changeset(of: "inbox", from: 1, to: 2)
                #expect(changes.changeset == (try await sqlite.changeset(of: "inbox", from: 1, to: 2)).changeset)
            }
        }
    }

    @Test func unknownListsAndVersionsAreErrors() async throws {
        let directory = try TemporaryDirectory()
        let sqlite = try Store(path: directory.file("source.liststore"))
        try await sqlite.commit(linearList(3), to: "l")
        try await sqlite.commit(linearList(4), to: "l")
        try await PostgresTestDatabase.withFresh { database in
            try await copy("l", from: sqlite, to: database)
            try await database.withStore { store in
                await expectError(.listNotFound) { try await store.summary(of: "nope") }
                await expectError(.listNotFound) { try await store.snapshot(of: "nope") }
                await expectError(.listNotFound) { try await store.journal(of: "nope") }
                await expectError(.versionNotFound) { try await store.snapshot(of: "l", at: 3) }
                await expectError(.versionNotFound) { try await store.snapshot(of: "l", at: -1) }
                await expectError(.versionNotFound) { try await store.journal(of: "l", after: 3) }
            }
        }
    }

    /// A list that does not exist is not a replica (`nil`), but a store whose list table cannot be
    /// read throws rather than answering "not a replica".
    @Test func replicaSourceOfAnUnreadableListThrows() async throws {
        try await PostgresTestDatabase.withFresh { database in
            try await database.withStore { store in
                try await store.commit(linearList(2), to: "l")
                #expect(try await store.replicaSource(of: "l") == nil)
                #expect(try await store.replicaSource(of: "nope") == nil)
                try await database.withSQL { client in
                    _ = try await client.query("ALTER TABLE list RENAME COLUMN head_digest TO renamed", logger: database.configuration.logger)
                }
                await #expect(throws: StoreError.self) { try await store.replicaSource(of: "l") }
            }
        }
    }

    /// A store on a client the caller runs (as `liststore serve` runs it, a service of its group):
    /// closing the store leaves the client running, and another store opens on it.
    @Test func aStoreOnAClientTheCallerRuns() async throws {
        try await PostgresTestDatabase.withFresh { database in
            let configuration = database.configuration
            let client = PostgresClient(configuration: configuration.postgres, backgroundLogger: configuration.logger)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await client.run() }
                let store = try await PostgresStore(client: client, configuration: configuration)
                try await store.commit(linearList(2), to: "l")
                await store.close()
                let again = try await PostgresStore(client: client, configuration: configuration)
                #expect(try await again.summary(of: "l").version == 1)
                await again.close()
                group.cancelAll()
            }
        }
    }

    @Test func identityAndEpoch() async throws {
        try await PostgresTestDatabase.withFresh { database in
            try await database.withStore { store in
                let first = try await store.identity()
                let advanced = try await store.advanceEpoch()
                #expect(advanced == StoreIdentity(uuid: first.uuid, epoch: first.epoch + 1))
                #expect(try await store.identity() == advanced)
            }
            // Another process sees the same identity.
            #expect(try await database.withStore { try await $0.identity().epoch } == 2)
        }
    }

    @Test func consumersAreRegisteredAcknowledgedAndRemoved() async throws {
        let directory = try TemporaryDirectory()
        let sqlite = try Store(path: directory.file("source.liststore"))
        for count in 1...3 { try await sqlite.commit(linearList(count), to: "l") }
        try await PostgresTestDatabase.withFresh { database in
            try await copy("l", from: sqlite, to: database)
            try await database.withStore { store in
                let laptop = try await store.registerConsumer("laptop", of: "l")
                #expect(laptop.version == 0 && laptop.list == "l" && laptop.registeredAt.hasSuffix("Z"))
                try await store.registerConsumer("phone", of: "l", at: 2)
                let acknowledged = try await store.acknowledge(consumer: "laptop", of: "l", version: 3)
                #expect(acknowledged.version == 3)
                #expect(try await store.consumers(of: "l").map { "\($0.name)@\($0.version)" } == ["laptop@3", "phone@2"])
                await expectError(.versionNotFound) { try await store.acknowledge(consumer: "laptop", of: "l", version: 4) }
                await expectError(.invalidArgument) { try await store.acknowledge(consumer: "tablet", of: "l", version: 1) }
                await expectError(.invalidArgument) { try await store.registerConsumer("", of: "l") }
                await expectError(.invalidArgument) { try await store.registerConsumer("e\u{301}", of: "l") }
                await expectError(.listNotFound) { try await store.registerConsumer("x", of: "nope") }
                #expect(try await store.unregisterConsumer("phone", of: "l"))
                #expect(try await !store.unregisterConsumer("phone", of: "l"))
                #expect(try await store.consumers(of: "l").map(\.name) == ["laptop"])
            }
        }
    }

    @Test func consumersOfOneListRegisterConcurrently() async throws {
        let directory = try TemporaryDirectory()
        let sqlite = try Store(path: directory.file("source.liststore"))
        try await sqlite.commit(linearList(1), to: "l")
        try await PostgresTestDatabase.withFresh { database in
            try await copy("l", from: sqlite, to: database)
            try await database.withStore { store in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for index in 0..<16 {
                        group.addTask { try await store.registerConsumer("c\(index % 4)", of: "l", at: index % 2) }
                    }
                    try await group.waitForAll()
                }
                #expect(try await store.consumers(of: "l").map(\.name) == ["c0", "c1", "c2", "c3"])
            }
        }
    }
}

/// Copies list `name` (head rows and journal) from an SQLite store into the test database (migrated
/// first), as the SQLite store holds it.
func copy(_ name: String, from sqlite: Store, to database: PostgresTestDatabase) async throws {
    try await database.withStore { _ in }
    let summary = try await sqlite.summary(of: name)
    let head = try await sqlite.snapshot(of: name)
    let journal = try await sqlite.journal(of: name, limit: .max)
    try await database.withSQL { client in
        let logger = database.configuration.logger
        let listID = try await client.query(
            """
            INSERT INTO list (name, head_version, head_digest, base_version, created_at, uid)
            VALUES (\(name), \(summary.version), \(summary.digest.hex), \(summary.baseVersion), '2026-01-01T00:00:00.000Z',
                \(summary.id!)) RETURNING id
            """, logger: logger
        ).collect().first!.decode(Int64.self)
        for (s, section) in head.sections.enumerated() {
            let sectionID = try await client.query(
                """
                INSERT INTO section (list_id, position, identifier, content, content_hash)
                VALUES (\(listID), \(s * 1024), \(bytes(section.model.id)), \(ByteBuffer(bytes: section.model.content)),
                    \(ByteBuffer(bytes: ContentHash(of: section.model.content).bytes))) RETURNING id
                """, logger: logger
            ).collect().first!.decode(Int64.self)
            for (e, element) in section.elements.enumerated() {
                try await client.query(
                    """
                    INSERT INTO element (section_id, position, identifier, content, content_hash)
                    VALUES (\(sectionID), \(e * 1024), \(bytes(element.id)), \(ByteBuffer(bytes: element.content)),
                        \(ByteBuffer(bytes: ContentHash(of: element.content).bytes)))
                    """, logger: logger)
            }
        }
        for entry in journal.entries {
            try await client.query(
                """
                INSERT INTO journal (list_id, version, parent_version, committed_at, digest, author, message, section_count,
                    element_count, stages)
                VALUES (\(listID), \(entry.version), \(entry.parentVersion), \(entry.committedAt), \(entry.digest.hex),
                    \(entry.author), \(entry.message), \(entry.sectionCount), \(entry.elementCount), \(ByteBuffer(bytes: entry.stagesJSON)))
                """, logger: logger)
        }
    }
}

/// Expects `body` to throw a `StoreError` with `code`.
func expectError<T>(
    _ code: StoreError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> T
) async {
    let error = await #expect(throws: StoreError.self, sourceLocation: sourceLocation) { _ = try await body() }
    #expect(error?.code == code, sourceLocation: sourceLocation)
}

private func bytes(_ text: String) -> ByteBuffer { ByteBuffer(bytes: Array(text.utf8)) }

extension PostgresReadTests {
    /// Verify replays every journal and names the first version a tampered row breaks.
    @Test func verifyFindsTamperedRows() async throws {
        try await PostgresTestDatabase.withFresh { database in
            try await database.withStore { store in
                for k in 1...6 { try await store.commit(linearList(k * 3, content: k), to: "l") }
                try await store.commit(linearList(2), to: "m")
                var report = try await store.verify()
                #expect(report.isValid && report.lists.map(\.versionsVerified) == [6, 1])
                try await database.withSQL { client in
                    _ = try await client.query("UPDATE journal SET digest = repeat('0', 64) WHERE version = 4", logger: database.configuration.logger)
                }
                report = try await store.verify()
                #expect(!report.isValid)
                #expect(report.lists.first?.firstDivergentVersion == 4 && report.lists.last?.isValid == true)
                let only = try await store.verify(list: "m")
                #expect(only.isValid && only.lists.count == 1)
                await #expect(throws: StoreError.self) { try await store.verify(list: "none") }
            }
        }
    }
}
