import GRDB
import ListMerge
@_spi(Replication) import ListStore
import ListStoreTestSupport
import ListDiffTestSupport
import Testing

/// `verify` checks a replica list's invariant: its head is its outbox rebased onto its
/// confirmed state.
@Suite(.heavyWork) struct OutboxVerifyTests {
    /// A replica list of "source" at version 1 holding `linearList(3)`, with one local change.
    func replicaWithALocalChange(_ directory: TemporaryDirectory) async throws -> Store {
        let store = try Store(path: directory.file("r.liststore"))
        let position = ReplicaSource(
            store: StoreIdentity(uuid: "00000000-0000-4000-8000-000000000000", epoch: 1), list: "l", version: 1,
            digest: ListDigest.of(linearList(3)))
        _ = try await store.commitReplica(linearList(3), to: "l", source: position, author: nil, message: nil) { _ in }
        let local = try await store.commit(linearList(4), to: "l")
        #expect(local.pendingSeq == 1)
        #expect(try await store.outbox(of: "l").first?.intents == [.insertElement("e3", content: 3, section: "s", after: "e2", before: nil)])
        return store
    }

    @Test func aReplicaWithLocalChangesVerifies() async throws {
        let directory = try TemporaryDirectory()
        let store = try await replicaWithALocalChange(directory)
        #expect(try await store.verify().isValid)
    }

    @Test func anOutboxThatDoesNotGiveTheHeadIsReported() async throws {
        let directory = try TemporaryDirectory()
        _ = try await replicaWithALocalChange(directory)
        let queue = try DatabaseQueue(path: directory.file("r.liststore"))
        try await queue.write { db in try db.execute(sql: "DELETE FROM outbox") }
        try queue.close()
        let report = try await Store(path: directory.file("r.liststore")).verify()
        #expect(!report.isValid)
        #expect(report.lists.first?.problem?.contains("local changes rebased onto the confirmed state") == true)
    }

    @Test func aConfirmedStateThatIsNotTheSourceVersionIsReported() async throws {
        let directory = try TemporaryDirectory()
        _ = try await replicaWithALocalChange(directory)
        let queue = try DatabaseQueue(path: directory.file("r.liststore"))
        try await queue.write { db in try db.execute(sql: "UPDATE replica_source SET digest = ?", arguments: [ListDigest.of([]).hex]) }
        try queue.close()
        let report = try await Store(path: directory.file("r.liststore")).verify()
        #expect(report.lists.first?.problem?.contains("confirmed state is not source version 1") == true)
    }
}
