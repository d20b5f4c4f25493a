import ListDiff
import ListDiffTestSupport
import ListJSON
import ListStore
import ListStorePostgres
import ListStorePostgresTestSupport
import PostgresNIO
import ListStoreTestSupport
import Testing

// Commits on PostgreSQL write what `Store` writes on SQLite: the same journal, byte for byte, and
// the same heads and digests.
@Suite(.serialized, .enabled(if: PostgresTestEnvironment.url != nil, Comment(rawValue: PostgresTestEnvironment.reason)))
struct PostgresCommitTests {
    /// A commit that writes many rows has the tables analyzed in the background, so that the
    /// planner does not take the tables it filled for empty until autovacuum's next round; a small
    /// one does not.
    @Test func largeWritesHaveTheTablesAnalyzed() async throws {
        try await PostgresTestDatabase.withFresh { database in
            func elementRows() async throws -> Double {
                try await database.withSQL { client in
                    for try await rows in try await client.query(
                        "SELECT reltuples::float8 FROM pg_class WHERE relname = 'element'", logger: database.configuration.logger
                    ).decode(Double.self) { return rows }
                    return .nan
                }
            }
            try await database.withStore { store in
                // Only the store analyzes here: autovacuum's own round (a minute apart, 50 rows and
                // more) would analyze the small commit's rows too, on a machine slow enough.
                try await store.commit([ListSection(model: ListItem(id: "first", json: .null), elements: [])], to: "first", expectedVersion: nil, author: nil, message: nil)
                try await database.withSQL { client in
                    _ = try await client.query("ALTER TABLE element SET (autovacuum_enabled = false)", logger: database.configuration.logger)
                }
                let small = [ListSection(model: ListItem(id: "s", json: .null), elements: (0..<100).map { ListItem(id: "e\($0)", json: JSONValue($0)) })]
                try await store.commit(small, to: "small", expectedVersion: nil, author: nil, message: nil)
                await store.statisticsSettled()
                #expect(try await elementRows() <= 0)
                let large = (0..<20).map { s in
                    ListSection(model: ListItem(id: "s\(s)", json: .null), elements: (0..<1_000).map { ListItem(id: "e\(s)-\($0)", json: JSONValue($0)) })
                }
                try await store.commit(large, to: "large", expectedVersion: nil, author: nil, message: nil)
                await store.statisticsSettled()
                #expect(try await elementRows() > 10_000)
            }
        }
    }

    @Test func randomHistoryMatchesTheSQLiteStore() async throws {
        let directory = try TemporaryDirectory()
        let sqlite = try Store(path: directory.file("history.liststore"))
        try await PostgresTestDatabase.withFresh { database in
            try await database.withStore { store in
                var random = RandomSnapshots(seed: 0x5707E, duplicates: true)
                var committed: [[ListSection]] = [[]]
                var current = random.snapshot(maxSections: 5, maxElements: 8)
                for step in 0..<260 {
                    let sections = listSections(current)
                    let author = step % 3 == 0 ? "ana" : nil
                    let result = try await store.commit(
                        sections, to: "random", expectedVersion: committed.count - 1, author: author, message: "step \(step)")
                    let expected = try await sqlite.commit(
                        sections, to: "random", expectedVersion: committed.count - 1, author: author, message: "step \(step)")
                    #expect(result.changed == expected.changed)
                    #expect(result.version == expected.version && result.digest == expected.digest)
                    #expect(result.stageCount == expected.stageCount && result.changeCount == expected.changeCount)
                    #expect(result.rowsWritten > 0 || !result.changed)
                    if result.changed {
                        committed.append(sections)
                        #expect(result.version == committed.count - 1)
                    } else {
                        #expect(sections == committed.last!)
                        #expect(result.rowsWritten == 0)
                    }
                    #expect(result.digest == ListDigest.of(sections))
                    let head = try await store.snapshot(of: "random")
                    #expect(head.sections == sections, "head differs at step \(step)")
                    #expect(head.digest == ListDigest.of(sections) && head.version == committed.count - 1)
                    current = random.edit(current, intensity: Double(step % 10) / 12)
                    if step % 50 == 49 { current = random.snapshot(maxSections: 6, maxElements: 10) }
                }
                #expect(committed.count > 200)

                // The journals agree, entry by entry (but the commit times).
                var version = 0
                var page: JournalPage
                repeat {
                    page = try await store.journal(of: "random", after: version, limit: 37)
                    let expected = try await sqlite.journal(of: "random", after: version, limit: 37)
                    #expect(page.hasMore == expected.hasMore)
                    #expect(page.entries.count == expected.entries.count)
                    for (entry, other) in zip(page.entries, expected.entries) {
                        #expect(entry.version == other.version && entry.parentVersion == other.parentVersion)
                        #expect(entry.stagesJSON == other.stagesJSON, "stages differ at version \(entry.version)")
                        #expect(entry.digest == other.digest)
                        #expect(entry.author == other.author && entry.message == other.message)
                        #expect(entry.sectionCount == other.sectionCount && entry.elementCount == other.elementCount)
                        version = entry.version
                    }
                } while page.hasMore && !page.entries.isEmpty
                #expect(version == committed.count - 1)
                // The same list in each but for its identity, which each store made itself.
                var summary = try await store.summary(of: "random")
                summary.id = try await sqlite.summary(of: "random").id
                #expect(summary == (try await sqlite.summary(of: "random")))

                // Every version reads back as it was committed.
                for v in committed.indices {
                    let snapshot = try await store.snapshot(of: "random", at: v)
                    #expect(snapshot.sections == committed[v], "version \(v) differs")
                    #expect(snapshot.digest == ListDigest.of(committed[v]))
                }
            }
        }
    }

    /// Each store keeps the head it committed last and diffs the next commit against it: valid only
    /// while the list's row holds that version and digest in the same epoch. Two stores take turns on
    /// one list, and rows rewritten under them (as a restore could) are read again once the epoch
    /// says so.
    @Test func twoStoresTakeTurnsAndARewriteIsReadAgainAfterTheEpochAdvances() async throws {
        try await PostgresTestDatabase.withFresh { database in
            try await database.withStore { first in
                try await database.withStore { second in
                    var random = RandomSnapshots(seed: 0xCAC4E, duplicates: true)
                    var current = random.snapshot(maxSections: 4, maxElements: 8)
                    var version = 0
                    for step in 0..<90 {
                        if step == 29 || step == 62 {
                            // Same content, every element at another position; then the epoch.
                            try await database.withSQL { client in
                                for statement in [
                                    "UPDATE element SET position = -position - 1", "UPDATE element SET position = (-position - 1) * 3 + 7",
                                ] {
                                    _ = try await client.query(PostgresQuery(unsafeSQL: statement), logger: database.configuration.logger)
                                }
                            }
                            try await second.advanceEpoch()
                        }
                        let store = step % 3 == 0 ? second : first
                        let sections = listSections(current)
                        let result = try await store.commit(sections, to: "l", expectedVersion: version)
                        if result.changed { version += 1 }
                        #expect(result.version == version)
                        let head = try await (step % 2 == 0 ? first : second).snapshot(of: "l")
                        #expect(head.sections == sections, "step \(step)")
                        #expect(head.digest == ListDigest.of(sections))
                        current = random.edit(current, intensity: Double(step % 7) / 8)
                    }
                    #expect(version > 50)
                }
            }
        }
    }

    @Test func largeCommitsWriteInBatches() async throws {
        // More rows than one batched statement carries: inserted whole, then moved, updated,
        // deleted and inserted among the old ones.
        let directory = try TemporaryDirectory()
        let sqlite = try Store(path: directory.file("large.liststore"))
        var random = SplitMix64(seed: 42)
        var sections = linearList(20_000) + [ListSection(model: ListItem("t"), elements: [])]
        var versions = [sections]
        sections[0].elements.shuffle(using: &random)
        sections[1].elements = Array(sections[0].elements.suffix(9_000))
        sections[0].elements.removeLast(9_000)
        for i in stride(from: 0, to: sections[0].elements.count, by: 3) {
            sections[0].elements[i] = ListItem(sections[0].elements[i].id, -i)
        }
        sections[0].elements.removeFirst(500)
        sections[0].elements += (0..<10_000).map { ListItem("n\($0)", $0) }
        versions.append(sections)
        versions.append([ListSection(model: ListItem("u"), elements: [])] + sections.reversed())
        try await PostgresTestDatabase.withFresh { database in
            try await database.withStore { store in
                for (v, snapshot) in versions.enumerated() {
                    let result = try await store.commit(snapshot, to: "big", expectedVersion: v)
                    let expected = try await sqlite.commit(snapshot, to: "big", expectedVersion: v)
                    #expect(result.version == v + 1 && result.digest == expected.digest)
                    #expect(try await store.snapshot(of: "big").sections == snapshot)
                }
                let page = try await store.journal(of: "big", limit: .max)
                let expected = try await sqlite.journal(of: "big", limit: .max)
                #expect(page.entries.map(\.stagesJSON) == expected.entries.map(\.stagesJSON))
                #expect(try await store.snapshot(of: "big", at: 2).sections == versions[1])
            }
        }
    }

    @Test func expectedVersionMismatchIsAConflict() async throws {
        try await PostgresTestDatabase.withFresh { database in
            try await database.withStore { store in
                let error = await #expect(throws: StoreError.self) {
                    try await store.commit(linearList(2), to: "l", expectedVersion: 1)
                }
                #expect(error?.code == .versionConflict && error?.expectedVersion == 1 && error?.currentVersion == 0)
                #expect(error?.message == "version conflict on list 'l': expected version 1, the head is 0")
                await expectError(.listNotFound) { try await store.summary(of: "l") }

                try await store.commit(linearList(2), to: "l", expectedVersion: 0)
                try await store.commit(linearList(3), to: "l", expectedVersion: 1)
                let stale = await #expect(throws: StoreError.self) {
                    try await store.commit(linearList(4), to: "l", expectedVersion: 1)
                }
                #expect(stale?.code == .versionConflict && stale?.expectedVersion == 1 && stale?.currentVersion == 2)
                #expect(try await store.snapshot(of: "l").sections == linearList(3))
            }
        }
    }

    @Test func concurrentCommittersWithTheSameExpectedVersionOneWins() async throws {
        try await PostgresTestDatabase.withFresh { database in
            try await database.withStore { store in
                let other = try await database.open()
                var winners: [[ListSection]] = []
                for round in 0..<8 {
                    // Round 0 creates the list: both first commits expect version 0.
                    let a = linearList(round + 2, prefix: "a")
                    let b = linearList(round + 3, prefix: "b")
                    async let first = attempt { try await store.commit(a, to: "race", expectedVersion: round, author: "a") }
                    async let second = attempt { try await other.commit(b, to: "race", expectedVersion: round, author: "b") }
                    let results = [await first, await second]
                    let won = results.compactMap { try? $0.get() }
                    #expect(won.count == 1, "round \(round): \(results)")
                    for case .failure(let error) in results {
                        #expect((error as? StoreError)?.code == .versionConflict, "round \(round): \(error)")
                        #expect((error as? StoreError)?.currentVersion == round + 1)
                    }
                    guard let result = won.first else { break }
                    #expect(result.version == round + 1)
                    winners.append(results[0].isSuccess ? a : b)
                }
                await other.close()
                #expect(try await store.summary(of: "race").version == winners.count)
                for (v, sections) in winners.enumerated() {
                    #expect(try await store.snapshot(of: "race", at: v + 1).sections == sections)
                }
                let journal = try await store.journal(of: "race", limit: .max)
                #expect(journal.entries.map(\.version) == Array(1...winners.count))
            }
        }
    }

    @Test func nonCanonicalContentIsRefusedAndChangesNothing() async throws {
        let loose = ListItem(id: "x", content: Array(#"{ "a":1}"#.utf8))
        try await PostgresTestDatabase.withFresh { database in
            try await database.withStore { store in
                // A new list: not created.
                await expectError(.invalidSnapshot) {
                    try await store.commit([ListSection(model: ListItem("s"), elements: [loose])], to: "l")
                }
                await expectError(.listNotFound) { try await store.summary(of: "l") }

                try await store.commit(linearList(3), to: "l")
                let before = try await store.summary(of: "l")
                var sections = linearList(3)
                sections[0].elements.append(loose)
                await expectError(.invalidSnapshot) { try await store.commit(sections, to: "l") }
                sections = linearList(3) + [ListSection(model: loose, elements: [ListItem("y")])]
                await expectError(.invalidSnapshot) { try await store.commit(sections, to: "l") }
                sections = linearList(3)
                sections[0].elements[1] = ListItem(id: sections[0].elements[1].id, content: Array("[1, 2]".utf8))
                await expectError(.invalidSnapshot) { try await store.commit(sections, to: "l") }
                #expect(try await store.summary(of: "l") == before)
                #expect(try await store.snapshot(of: "l").sections == linearList(3))
                #expect(try await store.journal(of: "l").entries.count == 1)

                // Names and journal texts are checked as well.
                await expectError(.invalidListName) { try await store.commit(linearList(1), to: "") }
                await expectError(.invalidListName) { try await store.commit(linearList(1), to: "a\u{200B}b") }
                await expectError(.invalidArgument) { try await store.commit(linearList(4), to: "l", author: "a\u{0}b") }
                #expect(try await store.summary(of: "l") == before)
            }
        }
    }

    @Test func anUnchangedSnapshotWritesNothing() async throws {
        try await PostgresTestDatabase.withFresh { database in
            try await database.withStore { store in
                let empty = try await store.commit([], to: "l")
                #expect(!empty.changed && empty.version == 0 && empty.rowsWritten == 0 && empty.digest == ListDigest.of([]))
                await expectError(.listNotFound) { try await store.summary(of: "l") }

                let first = try await store.commit(linearList(3), to: "l", author: "ana")
                #expect(first.changed && first.version == 1 && first.parentVersion == 0 && first.rowsWritten > 0)
                let second = try await store.commit(linearList(3), to: "l", expectedVersion: 1)
                #expect(!second.changed && second.version == 1 && second.parentVersion == 1 && second.rowsWritten == 0)
                #expect(second.digest == first.digest && second.changeset.isEmpty)
                #expect(try await store.journal(of: "l").entries.count == 1)
            }
        }
    }
}

extension Result {
    fileprivate var isSuccess: Bool {
        if case .success = self { return true }
        return false
    }
}

/// What `body` returns or throws.
private func attempt<T: Sendable>(_ body: () async throws -> T) async -> Result<T, any Error> {
    do { return .success(try await body()) } catch { return .failure(error) }
}
