import Foundation
import ListDiff
import ListJSON
import ListMerge
import ListStore
import ListStorePostgresTestSupport
import ListStoreTestSupport
import ListSync
import Testing

/// Offline writes are never lost to copied, restored or misdirected replicas (see "What a replica
/// promises" in ListMerge's "Offline Writes and Conflicts"): a named test for each of the situations
/// that lost them, with the source on every engine where the situation is the source's. Each fails
/// without its mend.
@Suite(.serialized, .heavyWork) struct ReplicaIdentityTests {
    // MARK: - Helpers

    /// Appends an element `id` to the first section of `list` in `store` (a local change when the
    /// list is a replica).
    static func add(_ id: String, to store: some ReplicaStore, list: String = "l") async throws {
        _ = try await store.edit(list, expectedVersion: nil, author: nil, message: nil) { draft in
            try draft.append(ListItem(id: id, json: ["by": .string(id)]), toSection: ExactString("base-s0"))
        }
    }

    /// The element ids of `list`'s head, in order.
    static func ids(in store: any ListStoreEngine, list: String = "l") async throws -> [String] {
        try await store.snapshot(of: list, at: nil).sections.flatMap { $0.elements.map(\.id) }
    }

    /// A source list `l` on `source` with one section of two elements.
    static func seed(_ source: some ReplicaStore) async throws {
        _ = try await source.commit(OfflineEditor.start(sections: 1, elements: 2), to: "l", expectedVersion: nil, author: nil, message: nil)
    }

    // MARK: - 1. A copied replica file

    /// `cp a.liststore b.liststore`: both edit, both sync. Every edit reaches the source once (the
    /// change pending at the copy, which both hold, too), and both replicas end equal to it. The
    /// copy takes a new client id before its first local change (another file).
    @Test(arguments: EngineKind.available)
    func aCopiedReplicaFileLosesNothing(_ engine: EngineKind) async throws {
        try await engine.withStore { stores in
            let source = stores[0]
            try await Self.seed(source)
            let directory = try TemporaryDirectory()
            let (pathA, pathB) = (directory.file("a.liststore"), directory.file("b.liststore"))
            var a = Replica(store: try Store(path: pathA), list: "l")
            try await a.pull(from: LocalSource(source))
            try await Self.add("pending-at-copy", to: a.store)
            try a.store.close()
            try FileManager.default.copyItem(atPath: pathA, toPath: pathB)
            a = Replica(store: try Store(path: pathA), list: "l")
            let b = Replica(store: try Store(path: pathB), list: "l")
            defer { try? a.store.close(); try? b.store.close() }
            #expect(try await a.store.clientID() == b.store.clientID())

            try await Self.add("from-a", to: a.store)
            try await Self.add("from-b", to: b.store)
            #expect(try await a.store.clientID() != b.store.clientID(), "the copy takes a new client id for its own changes")
            try await a.sync(with: LocalSource(source))
            let synced = try await b.sync(with: LocalSource(source))
            #expect(synced.push.duplicates == 1 && synced.push.pushed == 1, "\(synced.push)")
            try await a.sync(with: LocalSource(source))

            let head = try await Self.ids(in: source)
            #expect(head.filter { $0 == "pending-at-copy" }.count == 1)
            #expect(head.contains("from-a") && head.contains("from-b"))
            for replica in [a, b] {
                #expect(try await Self.ids(in: replica.store) == head)
                #expect(try await replica.store.outbox(of: "l").isEmpty)
                #expect(try await replica.store.verify().isValid)
            }
        }
    }

    /// The copy detected by the source alone (a copy whose file identity the replica cannot tell
    /// apart, as two PostgreSQL replica databases restored from one dump): both push under one id,
    /// the second is refused with `pushMismatch`, takes a new id and pushes again.
    @Test(arguments: EngineKind.available)
    func aReusedClientIDIsDetectedByTheSourcesRecord(_ engine: EngineKind) async throws {
        try await engine.withStore { stores in
            let source = stores[0]
            try await Self.seed(source)
            let directory = try TemporaryDirectory()
            let replica = Replica(store: try Store(path: directory.file("r.liststore")), list: "l")
            try await replica.pull(from: LocalSource(source))
            try await Self.add("mine", to: replica.store)
            // Another replica with the same client id pushed its seq 1 first.
            let client = try await replica.store.clientID()
            let forged = Push(
                id: PushID(client: client, seq: 1),
                intents: [.insertElement(ItemRef("theirs"), content: .null, section: ItemRef("base-s0"), after: nil, before: nil)])
            _ = try await source.merge(forged, into: "l")

            let synced = try await replica.sync(with: LocalSource(source))
            #expect(synced.push.clientIDsTaken == 1 && synced.push.pushed == 1, "\(synced.push)")
            #expect(synced.pull.pending == 0 && synced.pull.confirmedChanges == 1)
            #expect(try await replica.store.clientID() != client)
            let head = try await Self.ids(in: source)
            #expect(head.contains("mine") && head.contains("theirs"))
            #expect(try await Self.ids(in: replica.store) == head)
        }
    }

    // MARK: - 2. A replica restored from its own backup

    /// A replica backed up with a change pending, which then pushed that change and another, is
    /// restored over its own file (same inode). Its next change reuses sequence number 2: the
    /// source refuses it as another change's, the replica takes a new id, and nothing is lost.
    @Test func aReplicaRestoredFromItsBackupLosesNothing() async throws {
        let directory = try TemporaryDirectory()
        let source = try Store(path: directory.file("source.liststore"))
        try await Self.seed(source)
        let (path, backup) = (directory.file("r.liststore"), directory.file("r.backup"))
        var replica = Replica(store: try Store(path: path), list: "l")
        try await replica.pull(from: LocalSource(source))
        try await Self.add("before-backup", to: replica.store)
        try replica.store.close()
        try FileManager.default.copyItem(atPath: path, toPath: backup)
        replica = Replica(store: try Store(path: path), list: "l")
        try await replica.sync(with: LocalSource(source))
        try await Self.add("after-backup", to: replica.store)
        try await replica.sync(with: LocalSource(source))
        try replica.store.close()

        let inode = try StoreFileFaults.fileNumbers(path)
        try StoreFileFaults.restoreInPlace(path, from: backup)
        #expect(try StoreFileFaults.fileNumbers(path) == inode)
        replica = Replica(store: try Store(path: path), list: "l")
        defer { try? replica.store.close() }
        try await Self.add("after-restore", to: replica.store)
        #expect(try await replica.store.outbox(of: "l").map(\.seq) == [1, 2])
        let synced = try await replica.sync(with: LocalSource(source))
        #expect(synced.push.duplicates == 1 && synced.push.clientIDsTaken == 1 && synced.push.pushed == 1, "\(synced.push)")

        let head = try await Self.ids(in: source)
        for id in ["before-backup", "after-backup", "after-restore"] { #expect(head.filter { $0 == id }.count == 1, "\(id)") }
        #expect(try await Self.ids(in: replica.store) == head)
        #expect(try await replica.store.outbox(of: "l").isEmpty)
    }

    // MARK: - 3 and 4. Pushes known by their content; exact client ids

    /// The same (client, seq) with other content is refused and applies nothing; an exact retry is
    /// answered from the record; a gap is refused and poisons nothing (a seq of 2⁶³−1 included); a
    /// client's first push may start anywhere; client ids with U+0000 or other control characters
    /// are refused alike on every engine, and none is recorded.
    @Test(arguments: EngineKind.available)
    func pushesAreKnownByTheirContent(_ engine: EngineKind) async throws {
        try await engine.withStore { stores in
            let source = stores[0]
            try await Self.seed(source)
            func push(_ client: String, _ seq: Int, _ id: String) -> Push {
                Push(
                    id: PushID(client: client, seq: seq),
                    intents: [.insertElement(ItemRef(id), content: .null, section: ItemRef("base-s0"), after: nil, before: nil)], author: "ana")
            }
            func refusal(_ push: Push) async -> StoreError.Code? {
                do {
                    _ = try await source.merge(push, into: "l")
                    return nil
                } catch let error as StoreError {
                    return error.code
                } catch {
                    return .io
                }
            }
            let first = try await source.merge(push("c", 1, "x"), into: "l")
            #expect(!first.duplicate && first.version == 2 && first.fingerprint == push("c", 1, "x").fingerprint)
            let retry = try await source.merge(push("c", 1, "x"), into: "l")
            #expect(retry.duplicate && retry.version == 2)
            #expect(await refusal(push("c", 1, "y")) == .pushMismatch)
            var other = push("c", 1, "x")
            other.author = "bob"
            #expect(await refusal(other) == .pushMismatch, "the author is part of the content")
            #expect(await refusal(push("c", 3, "z")) == .pushOutOfOrder)
            #expect(await refusal(push("c", Int.max, "z")) == .pushOutOfOrder)
            #expect(try await source.summary(of: "l").version == 2)
            #expect(try await source.merge(push("c", 2, "z"), into: "l").version == 3, "the refused pushes poisoned nothing")
            #expect(try await source.merge(push("d", 7, "w"), into: "l").version == 4, "a client's first push may start anywhere")
            #expect(await refusal(push("d", 9, "v")) == .pushOutOfOrder)

            for client in ["a\u{0}b", "a\u{0}", "\u{0}", "tab\there", "del\u{7F}", "c1\u{85}", "", String(repeating: "x", count: 1025)] {
                #expect(await refusal(push(client, 1, "n")) == .invalidArgument, "\(client.debugDescription)")
                #expect(try await source.pushes(from: client, to: "l", seqs: 1...10).isEmpty)
            }
            // "a" is not taken for "a\0b" (SQLite would cut the string at U+0000).
            #expect(try await source.merge(push("a", 1, "a1"), into: "l").version == 5)
            #expect(try await source.summary(of: "l").version == 5)
            let recorded = try await source.pushes(from: "c", to: "l", seqs: 1...10)
            #expect(recorded.map(\.seq) == [1, 2] && recorded.allSatisfy { $0.fingerprint != nil })
            #expect(try await source.verify(list: nil, progress: nil).isValid)
        }
    }

    // MARK: - 5. A push to a store that is not the replica's source

    /// Push and sync to another store are refused before anything is sent: neither store changes.
    @Test(arguments: EngineKind.available)
    func aPushToAnotherStoreIsRefused(_ engine: EngineKind) async throws {
        try await engine.withStore { stores in
            let source = stores[0]
            try await Self.seed(source)
            let directory = try TemporaryDirectory()
            let other = try Store(path: directory.file("other.liststore"))
            try await Self.seed(other)
            let replica = Replica(store: try Store(path: directory.file("r.liststore")), list: "l")
            try await replica.pull(from: LocalSource(source))
            try await Self.add("mine", to: replica.store)
            let head = try await replica.store.summary(of: "l")

            for attempt in 0..<2 {
                await #expect {
                    if attempt == 0 { try await replica.push(to: LocalSource(other)) } else { try await replica.sync(with: LocalSource(other)) }
                } throws: { error in
                    if case SyncError.refused = error { return true }
                    return false
                }
            }
            var options = ReplicaPullOptions()
            options.sourceList = "elsewhere"
            await #expect(throws: SyncError.self) { try await replica.push(to: LocalSource(source), options: options) }
            #expect(try await other.summary(of: "l").version == 1)
            let client = try await replica.store.clientID()
            #expect(try await other.pushes(from: client, to: "l", seqs: 1...9).isEmpty)
            #expect(try await replica.store.summary(of: "l") == head)
            #expect(try await replica.store.outbox(of: "l").map(\.pushedVersion) == [nil])
            // Its own source gets the change.
            try await replica.sync(with: LocalSource(source))
            #expect(try await Self.ids(in: source).contains("mine"))
        }
    }

    // MARK: - 6. A source restored from a backup

    /// The source answered a push, then was restored from a backup taken before it, and others
    /// committed: with one and with two new commits, the replica's pull finds the source has no
    /// record of the change and pushes it again; nothing is lost on either side. A source restored
    /// to the very version the replica holds, with other content, is resynced, not "up to date".
    @Test(arguments: [1, 2])
    func aSourceRestoredFromABackupGetsThePushAgain(newCommits: Int) async throws {
        let directory = try TemporaryDirectory()
        let (path, backup) = (directory.file("source.liststore"), directory.file("source.backup"))
        var source = try Store(path: path)
        try await Self.seed(source)
        let replica = Replica(store: try Store(path: directory.file("r.liststore")), list: "l")
        try await replica.pull(from: LocalSource(source))
        try source.close()
        try FileManager.default.copyItem(atPath: path, toPath: backup)
        source = try Store(path: path)
        try await Self.add("mine", to: replica.store)
        let pushed = try await replica.push(to: LocalSource(source))
        #expect(pushed.pushed == 1 && pushed.version == 2)
        try source.close()

        try StoreFileFaults.restoreInPlace(path, from: backup)
        source = try Store(path: path)
        defer { try? source.close() }
        for k in 0..<newCommits { try await Self.add("other-\(k)", to: source) }
        let synced = try await replica.sync(with: LocalSource(source))
        #expect(synced.pull.pending == 0, "\(synced)")
        let head = try await Self.ids(in: source)
        #expect(head.filter { $0 == "mine" }.count == 1)
        for k in 0..<newCommits { #expect(head.contains("other-\(k)")) }
        #expect(try await Self.ids(in: replica.store) == head)
        #expect(try await replica.store.snapshot(of: "l").digest == source.snapshot(of: "l").digest)
    }

    /// The replica holds source version 2; the source is restored to version 1 and commits another
    /// version 2: equal versions, other content. The pull compares digests and resyncs.
    @Test func equalVersionsWithOtherContentAreResynced() async throws {
        let directory = try TemporaryDirectory()
        let (path, backup) = (directory.file("source.liststore"), directory.file("source.backup"))
        var source = try Store(path: path)
        try await Self.seed(source)
        try source.close()
        try FileManager.default.copyItem(atPath: path, toPath: backup)
        source = try Store(path: path)
        try await Self.add("lost", to: source)
        let replica = Replica(store: try Store(path: directory.file("r.liststore")), list: "l")
        try await replica.pull(from: LocalSource(source))
        try source.close()
        try StoreFileFaults.restoreInPlace(path, from: backup)
        source = try Store(path: path)
        defer { try? source.close() }
        try await Self.add("instead", to: source)
        let pulled = try await replica.pull(from: LocalSource(source))
        #expect(pulled.resynced && pulled.reason == .digestMismatch, "\(pulled)")
        #expect(try await replica.store.snapshot(of: "l").digest == source.snapshot(of: "l").digest)
    }

    // MARK: - 7. A list with a history of its own is never made a replica by accident

    /// `pull --db COPY --replica PRIMARY`, swapped: the primary's list is not a replica and has its
    /// own history, so the pull is refused and changes nothing; a replica of another store is not
    /// pointed at a new one either. With `replacing`, both happen.
    @Test(arguments: EngineKind.available)
    func aListWithAHistoryOfItsOwnIsNotReplaced(_ engine: EngineKind) async throws {
        try await engine.withStore { stores in try await Self.refuseReplacing(stores[0]) }
    }

    private static func refuseReplacing(_ primary: some ReplicaStore) async throws {
        do {
            try await Self.seed(primary)
            let directory = try TemporaryDirectory()
            let copy = try Store(path: directory.file("copy.liststore"))
            try await Replica(store: copy, list: "l").pull(from: LocalSource(primary))
            try await Self.add("newer", to: primary)
            let before = try await primary.summary(of: "l")

            func isRefused(_ error: any Error) -> Bool {
                if case SyncError.refused = error { return true }
                return false
            }
            await #expect { try await Replica(store: primary, list: "l").pull(from: LocalSource(copy)) } throws: { isRefused($0) }
            await #expect { try await Replica(store: primary, list: "l").sync(with: LocalSource(copy)) } throws: { isRefused($0) }
            #expect(try await primary.summary(of: "l") == before)
            #expect(try await primary.replicaSource(of: "l") == nil)

            // A replica of the primary is not made to follow a third store without being told.
            let third = try Store(path: directory.file("third.liststore"))
            try await Self.seed(third)
            try await Self.add("third", to: third)
            await #expect { try await Replica(store: copy, list: "l").pull(from: LocalSource(third)) } throws: { isRefused($0) }
            #expect(try await copy.replicaSource(of: "l")?.store == primary.identity())

            var replacing = ReplicaPullOptions()
            replacing.replacing = true
            // Not even when told to does the primary follow its own replica: that is a cycle.
            await #expect { try await Replica(store: primary, list: "l").pull(from: LocalSource(copy), options: replacing) } throws: {
                isRefused($0) && "\($0)".contains("cycle")
            }
            #expect(try await primary.summary(of: "l") == before)
            let replaced = try await Replica(store: copy, list: "l").pull(from: LocalSource(third), options: replacing)
            #expect(replaced.resynced && replaced.reason == .differentStore)
            #expect(try await Self.ids(in: copy) == Self.ids(in: third))

            // Another list of the same store is another source too.
            var otherList = ReplicaPullOptions()
            otherList.sourceList = "m"
            _ = try await third.commit(OfflineEditor.start(sections: 1, elements: 1), to: "m", expectedVersion: nil, author: nil, message: nil)
            await #expect { try await Replica(store: copy, list: "l").pull(from: LocalSource(third), options: otherList) } throws: { isRefused($0) }

            // A sync told to replace points the replica back at the primary, and its pending change goes there.
            try await Self.add("pending-when-moved", to: copy)
            let synced = try await Replica(store: copy, list: "l").sync(with: LocalSource(primary), options: replacing)
            #expect(synced.pull.pending == 0 && synced.push.pushed == 1, "\(synced)")
            #expect(try await Self.ids(in: primary).contains("pending-when-moved"))
            #expect(try await Self.ids(in: copy) == Self.ids(in: primary))
        }
    }
}
