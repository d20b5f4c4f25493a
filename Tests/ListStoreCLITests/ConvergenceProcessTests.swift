import Foundation
import ListDiff
import ListDiffTestSupport
import ListMerge
import ListStore
import ListStoreTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Replicas that write converge through a real `liststore serve`, with the faults of a
/// real deployment: `liststore sync` killed with SIGKILL at random instants (before, during or after
/// the server applied its push), the server stopped and started again (SIGTERM) or killed (SIGKILL),
/// and the source written directly by another process meanwhile; and the faults that lost offline
/// writes: a replica file copied mid-run (the copy joins as a fifth client), a replica
/// restored in place from an earlier backup of its own, the source restored from a backup older than
/// a push it answered (then `advance-epoch`, as an operator does), and pushes forged under the
/// replicas' client ids. After a final round of syncs every replica equals the source, nothing
/// doubles and nothing is lost, and every store verifies.
///
/// Rounds: `LISTSTORE_PROCESS_CONVERGENCE_ROUNDS` (default 150).
@Suite(.blockingWaits) struct ConvergenceProcessTests {
    static let rounds = ProcessInfo.processInfo.environment["LISTSTORE_PROCESS_CONVERGENCE_ROUNDS"].flatMap(Int.init) ?? 150

    final class Server {
        let db: String
        private(set) var process: StreamingProcess
        private(set) var url: String

        /// The options of `serve` besides the store and the port.
        let extra: [String]

        init(db: String, _ extra: [String] = []) throws {
            self.db = db
            self.extra = extra
            (process, url) = try ServeCommandTests.serve(db, extra)
        }

        func restart(killing: Bool) throws {
            process.send(killing ? SIGKILL : SIGTERM)
            _ = process.waitForExit(timeout: .seconds(30))
            (process, url) = try ServeCommandTests.serve(db, extra)
        }

        func stop() {
            process.send(SIGTERM)
            _ = process.waitForExit(timeout: .seconds(30))
        }
    }

    @Test func replicasSyncingThroughAServerConvergeThroughKillsAndRestarts() async throws {
        let dir = try TemporaryDirectory()
        let sourcePath = dir.url.appendingPathComponent("source.liststore").path
        try await Store(path: sourcePath).commit(OfflineEditor.start(sections: 3, elements: 4), to: "l")
        let server = try Server(db: sourcePath)
        defer { server.stop() }
        var clients = (0..<4).map { dir.url.appendingPathComponent("c\($0).liststore").path }
        var editors = (0..<4).map { OfflineEditor(client: "p\($0)", seed: 0xFEED &+ UInt64($0)) }
        var serverEditor = OfflineEditor(client: "direct", seed: 0xD1EC7)
        var rng = SplitMix64(seed: 0xC1A0)
        var localChanges = [Int](repeating: 0, count: 4)
        var (kills, restarts) = (0, 0)

        // The ids of items whose intents a merge reported, as `sync --json` tells them.
        var reported = Set<String>()
        func sync(_ c: Int) async throws {
            let result = try await CLIRunner.runOffPool(["sync", "--from", server.url, "--list", "l", "--replica", clients[c], "--json"])
            #expect(result.status == 0, "sync of client \(c): \(result.stderr)")
            let document = try result.object()
            for half in ["push", "pull"] {
                guard case .array(let conflicts)? = document[half]?["conflicts"] else { continue }
                for case .string(let id)? in conflicts.map({ $0["id"] }) { reported.insert(id) }
            }
        }
        for c in clients.indices {
            let pulled = try await CLIRunner.runOffPool(["pull", "--from", server.url, "--list", "l", "--replica", clients[c]])
            #expect(pulled.status == 0, "\(pulled.stderr)")
        }

        /// The store file at `path` alone holds everything (no process has it open now).
        func settle(_ path: String) throws {
            let store = try Store(path: path)
            try store.checkpoint()
            try store.close()
        }
        let (copyAt, backupAt, restoreAt, sourceAt) = (Self.rounds / 4, Self.rounds / 3, Self.rounds / 2, 2 * Self.rounds / 3)
        let replicaBackup = dir.url.appendingPathComponent("c1.backup").path
        var forged = 0

        for round in 0..<Self.rounds {
            if round == copyAt {
                // A replica file copied to a second device, which joins as a client.
                try settle(clients[0])
                let copy = dir.url.appendingPathComponent("c4.liststore").path
                try FileManager.default.copyItem(atPath: clients[0], toPath: copy)
                clients.append(copy)
                editors.append(OfflineEditor(client: "p4", seed: 0xFEED &+ 4))
                localChanges.append(0)
            }
            if round == backupAt {
                try settle(clients[1])
                try FileManager.default.copyItem(atPath: clients[1], toPath: replicaBackup)
            }
            if round == restoreAt {
                // The replica restored in place from its backup, after its changes since reached the source.
                try await sync(1)
                try settle(clients[1])
                try StoreFileFaults.restoreInPlace(clients[1], from: replicaBackup)
            }
            if round == sourceAt {
                // The source restored from a backup older than a push it answered; the operator
                // advances its epoch before serving it again.
                server.stop()
                try settle(sourcePath)
                let backup = dir.url.appendingPathComponent("source.backup").path
                try FileManager.default.copyItem(atPath: sourcePath, toPath: backup)
                try server.restart(killing: false)
                let store = try Store(path: clients[2])
                let result = try await store.commit(editors[2].edit(try await store.snapshot(of: "l").sections), to: "l")
                if result.pendingSeq != nil { localChanges[2] += 1 }
                try store.close()
                let pushed = try await CLIRunner.runOffPool(["push", "--from", server.url, "--list", "l", "--replica", clients[2]])
                #expect(pushed.status == 0, "\(pushed.stderr)")
                server.stop()
                try settle(sourcePath)
                try StoreFileFaults.restoreInPlace(sourcePath, from: backup)
                let advanced = try await CLIRunner.runOffPool(["advance-epoch", "--db", sourcePath])
                #expect(advanced.status == 0, "\(advanced.stderr)")
                try server.restart(killing: false)
            }
            if rng.next() % 15 == 0 {
                // A rogue client pushes under a replica's client id and next sequence number.
                let victim = try Store(path: clients[Int(rng.next() % UInt64(clients.count))])
                let client = try await victim.clientID()
                let source = try Store(path: sourcePath)
                let latest = try await source.pushes(from: client, to: "l", seqs: 1...Int.max).last?.seq ?? 0
                if let section = try await source.snapshot(of: "l").sections.first {
                    let intent = Intent.insertElement(
                        ItemRef("rogue-\(round)"), content: .null, section: ItemRef(section.model.id), after: nil, before: nil)
                    _ = try await source.merge(Push(id: PushID(client: client, seq: latest + 1), intents: [intent]), into: "l")
                    forged += 1
                }
            }
            let c = Int(rng.next() % UInt64(clients.count))
            switch rng.next() % 10 {
            case 0..<4:  // an offline session on client c (in this process)
                let store = try Store(path: clients[c])
                for _ in 0..<(1 + Int(rng.next() % 2)) {
                    let result = try await store.commit(editors[c].edit(try await store.snapshot(of: "l").sections), to: "l")
                    if result.pendingSeq != nil { localChanges[c] += 1 }
                }
            case 4..<7:  // a sync
                try await sync(c)
            case 7:  // a sync killed at a random instant
                let child = try CLIRunner.start(["sync", "--from", server.url, "--list", "l", "--replica", clients[c]])
                try await Task.sleep(for: .microseconds(Int(rng.next() % 150_000)))
                kill(child.processIdentifier, SIGKILL)
                child.waitUntilExit()
                kills += 1
            case 8:  // another writer on the source
                let source = try Store(path: sourcePath)
                try await source.commit(serverEditor.edit(try await source.snapshot(of: "l").sections), to: "l")
            default:  // the server goes away and comes back
                try server.restart(killing: rng.next() % 2 == 0)
                restarts += 1
            }
        }
        for c in clients.indices { try await sync(c) }
        for c in clients.indices { try await sync(c) }

        let source = try Store(path: sourcePath)
        let head = try await source.snapshot(of: "l")
        for (c, path) in clients.enumerated() {
            let client = try Store(path: path)
            #expect(try await client.snapshot(of: "l").digest == head.digest, "client \(c) differs from the source")
            #expect(try await client.outbox(of: "l").isEmpty)
            let recorded = try await source.pushes(from: client.clientID(), to: "l", seqs: 1...Int.max)
            reported.formUnion(recorded.flatMap(\.conflicts).map(\.item.id))
            #expect(try await client.verify().isValid)
            var state = try await client.snapshot(of: "l", at: 0).sections
            for entry in try await client.journal(of: "l", limit: .max).entries {
                let (changeset, next) = try entry.changeset(applyingTo: state)
                #expect(throws: Never.self) { try BatchUpdateValidator.validate(changeset, source: state, target: next) }
                state = next
            }
        }
        let pushIDs = try await source.journal(of: "l", limit: .max).entries.compactMap(\.pushID)
        #expect(Set(pushIDs).count == pushIDs.count, "a push was applied twice")
        #expect(try await source.verify().isValid)
        let ids = head.sections.flatMap { $0.elements.map(\.id) }
        #expect(Set(ids).count == ids.count)
        let present = Set(ids)
        let removed = (editors + [serverEditor]).reduce(into: Set<String>()) {
            $0.formUnion($1.deletedElements)
            $0.formUnion($1.deletedWithSections)
        }
        for id in (editors + [serverEditor]).flatMap(\.insertedElements) where !present.contains(id) {
            #expect(removed.contains(id) || reported.contains(id), "\(id) was lost")
        }
        #expect(localChanges.reduce(0, +) > 0 && (kills > 0 || Self.rounds < 40) && (restarts > 0 || Self.rounds < 40))
        #expect(forged > 0 || Self.rounds < 40)
    }
}
