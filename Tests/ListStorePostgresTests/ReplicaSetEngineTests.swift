import Foundation
import ListDiffTestSupport
import ListMerge
import ListStore
import ListStorePostgresTestSupport
import ListStoreTestSupport
import ListSync
import Testing

/// Replica sets on every engine of replica stores: the set's position, its commits and deletions
/// written in one transaction each, on SQLite, PostgreSQL (when the tests have one) and memory.
@Suite struct ReplicaSetEngineTests {
    /// The set's writes on every engine of replica stores: SQLite, PostgreSQL (when the tests have
    /// one) and memory.
    @Test(arguments: EngineKind.available)
    func aSetWorksOnEveryEngine(_ engine: EngineKind) async throws {
        let directory = try TemporaryDirectory()
        let source = try Store(path: directory.file("source.liststore"))
        for list in ["team/a", "team/b", "other"] { try await source.commit(linearList(3), to: list) }
        try await engine.withStore { stores in try await Self.followDeletionsAndChanges(stores[0], source) }
    }

    static func followDeletionsAndChanges(_ replica: some ReplicaStore, _ source: Store) async throws {
        let set = try ReplicaSet(store: replica, lists: "team/*")
        #expect(try await set.pull(from: LocalSource(source)).created == ["team/a", "team/b"])
        var mine = linearList(3)
        mine[0].elements.append(ListItem(id: "mine", json: .string("offline")))
        _ = try await replica.commit(mine, to: "team/b", expectedVersion: nil, author: nil, message: nil)
        try await source.commit(linearList(6), to: "team/a")
        _ = try await source.deleteList("team/b")
        try await source.commit(linearList(2), to: "team/c")
        let result = try await set.pull(from: LocalSource(source))
        #expect(result.deleted == ["team/b"] && result.created == ["team/c"] && result.conflicts["team/b"]?.map(\.kind) == [.listDeleted])
        #expect(try await replica.lists().map(\.name) == ["team/a", "team/c"])
        for list in ["team/a", "team/c"] {
            #expect(try await replica.summary(of: list).digest == source.summary(of: list).digest)
        }
        #expect(try await set.position()?.lastConflicts.keys.sorted() == ["team/b"])
    }

}
