import Foundation
import ListStore
import ListStoreTestSupport
import Testing

/// A SQLite store's write-ahead log (`<path>-wal`) stays bounded: commits checkpoint it (in the
/// background past about 4 MiB, on the writer past 10,000 pages), and a log that a large write grew
/// gives its room back once checkpointed. In memory: they write some 300 MB.
@Suite struct WriteAheadLogTests {
    /// Commits of 80 MiB in all, with no checkpoint asked for: the log never holds them all.
    @Test func commitsCheckpointTheLogOnTheirOwn() async throws {
        let directory = try TemporaryDirectory.inMemory()
        let path = directory.file("log.liststore")
        let store = try Store(path: path)
        defer { try? store.close() }
        for round in 0..<80 {
            // About 1 MiB of new contents each.
            try await store.commit(Self.large(250, tag: "\(round)"), to: "l")
        }
        let log = try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int
        #expect(try #require(log) < 60 << 20, "the write-ahead log holds \(log ?? 0) bytes")
        #expect(try await store.verify().isValid)
    }

    /// A write-ahead log that a large write grew does not keep its size on the disk once a
    /// checkpoint has copied it: the first commit after it cuts the log back to 64 MiB.
    @Test func theWriteAheadLogGivesBackTheRoomOfALargeWrite() async throws {
        let directory = try TemporaryDirectory.inMemory()
        let path = directory.file("log.liststore")
        let store = try Store(path: path)
        defer { try? store.close() }
        // About 72 MiB of contents in one commit: one transaction, all of it in the log.
        try await store.commit(Self.large(18_000, tag: ""), to: "l")
        let grown = try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int
        #expect(try #require(grown) > 68 << 20, "the commit's log is smaller than its contents")
        try store.checkpoint()
        try await store.commit(linearList(2), to: "m")
        let log = try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int
        #expect(try #require(log) <= 64 << 20, "the write-ahead log kept \(log ?? 0) bytes")
    }

    /// One section of `count` elements whose contents take about 4 KB each, ending with `tag` (and
    /// their position when `tag` is empty).
    private static func large(_ count: Int, tag: String) -> [ListSection] {
        let text = String(repeating: "x", count: 4000)
        return [
            ListSection(
                model: ListItem(id: "s"),
                elements: (0..<count).map { ListItem(id: "e\($0)", content: Array("\"\(text)\(tag.isEmpty ? "\($0)" : tag)\"".utf8)) })
        ]
    }
}
