import Foundation
import ListDiff
import ListDiffTestSupport
import ListMerge
import ListStore
import ListStoreTestSupport
import ListSync
import Testing

/// Replicas that write converge (DESIGN §8), in the style of Jepsen: four clients, each a replica
/// store, make random offline edit sessions while the source is edited too, and sync in random
/// order through sources that lose answers after applying a push. After a final round of syncs every
/// replica equals the source, no id appears twice, every inserted element is there unless a delete
/// removed it (and a section delete mine did not know of is reported), every push was applied once,
/// and every transition a replica's UI saw passes the stage validator.
///
/// Rounds per seed: `LISTSTORE_CONVERGENCE_ROUNDS` (default 150; CI runs 3 seeds × 150, one seed at a time).
@Suite(.serialized, .heavyWork) struct ConvergenceTests {
    static let rounds = ProcessInfo.processInfo.environment["LISTSTORE_CONVERGENCE_ROUNDS"].flatMap(Int.init) ?? 150

    @Test(arguments: [0xC0FFEE as UInt64, 0xBADC0DE, 0x5EED])
    func replicasThatWriteConverge(seed: UInt64) async throws {
        let directory = try TemporaryDirectory()
        let source = try Store(path: directory.file("source.liststore"))
        try await source.commit(OfflineEditor.start(sections: 3, elements: 5), to: "l")
        var rng = SplitMix64(seed: seed)
        var editors = (0..<4).map { OfflineEditor(client: "c\($0)", seed: seed &+ UInt64($0) &* 7919) }
        var serverEditor = OfflineEditor(client: "srv", seed: seed ^ 0xFFFF)
        let replicas = (0..<4).map { Replica(store: try! Store(path: directory.file("c\($0).liststore")), list: "l") }
        for replica in replicas { try await replica.pull(from: LocalSource(source)) }
        var localChanges = [Int](repeating: 0, count: 4)
        var reported: [Conflict] = []
        var lostAnswers = 0

        for _ in 0..<Self.rounds {
            let c = Int(rng.next() % 5)
            if c == 4 {
                // The source is edited directly (another writer on the server).
                try await source.commit(serverEditor.edit(try await source.snapshot(of: "l").sections), to: "l")
                continue
            }
            let replica = replicas[c]
            switch rng.next() % 3 {
            case 0:  // an offline session
                for _ in 0..<(1 + Int(rng.next() % 3)) {
                    let result = try await replica.store.commit(editors[c].edit(try await replica.store.snapshot(of: "l").sections), to: "l")
                    if result.pendingSeq != nil { localChanges[c] += 1 }
                }
            case 1:  // a sync, perhaps losing the answer of a push the source applied
                let lossy = rng.next() % 3 == 0
                let target: any ListSource = lossy ? LosingAnswers(base: LocalSource(source), every: 1) : LocalSource(source)
                do {
                    let result = try await replica.sync(with: target)
                    reported += result.push.conflicts + result.pull.conflicts
                } catch let error as SyncError where error.isTransient {
                    lostAnswers += 1
                }
            default:  // a pull only
                reported += try await replica.pull(from: LocalSource(source)).conflicts
            }
        }
        // The final round: everyone pushes, then everyone pulls.
        for replica in replicas {
            let result = try await replica.sync(with: LocalSource(source))
            reported += result.push.conflicts + result.pull.conflicts
        }
        for replica in replicas { reported += try await replica.pull(from: LocalSource(source)).conflicts }

        let head = try await source.snapshot(of: "l")
        for (c, replica) in replicas.enumerated() {
            #expect(try await replica.store.snapshot(of: "l").digest == head.digest, "client \(c) differs from the source")
            #expect(try await replica.store.outbox(of: "l").isEmpty)
            // Every push applied once: the source recorded each local change, in order, once.
            let recorded = try await source.pushes(from: replica.store.clientID(), to: "l", seqs: 1...max(1, localChanges[c]))
            #expect(recorded.map(\.seq) == Array(0..<localChanges[c]).map { $0 + 1 })
            try expectValidTransitions(replica.store)
            #expect(try await replica.store.verify().isValid)
        }
        let pushIDs = try await source.journal(of: "l", limit: .max).entries.compactMap(\.pushID)
        #expect(Set(pushIDs).count == pushIDs.count, "a push was applied twice")
        #expect(try await source.verify().isValid)

        // One identity, one item.
        let sectionIDs = head.sections.map(\.model.id)
        let elementIDs = head.sections.flatMap { $0.elements.map(\.id) }
        #expect(Set(sectionIDs).count == sectionIDs.count && Set(elementIDs).count == elementIDs.count)

        // Nothing lost: an inserted element is there, or someone deleted it, or a section delete took
        // it (known to the deleter, or reported).
        let present = Set(elementIDs)
        let deleted = editors.reduce(into: serverEditor.deletedElements) { $0.formUnion($1.deletedElements) }
        let known = editors.reduce(into: serverEditor.deletedWithSections) { $0.formUnion($1.deletedWithSections) }
        let reportedIDs = Set(reported.filter { $0.kind == .sectionDeleted || $0.kind == .removedWithSection }.map(\.item.id))
        for id in (editors + [serverEditor]).flatMap(\.insertedElements) where !present.contains(id) {
            #expect(deleted.contains(id) || known.contains(id) || reportedIDs.contains(id), "\(id) was lost; \(reported.filter { $0.item.id == id })")
        }
        #expect(localChanges.reduce(0, +) > Self.rounds / 10)
        #expect(lostAnswers > 0 || Self.rounds < 100)
    }

    /// Replays a store's journal, checking every changeset against the stage contract.
    func expectValidTransitions(_ store: Store) throws {
        var state = try store.snapshot(of: "l", at: 0).sections
        for entry in try store.journal(of: "l", limit: .max).entries {
            let (changeset, next) = try entry.changeset(applyingTo: state)
            #expect(throws: Never.self) { try BatchUpdateValidator.validate(changeset, source: state, target: next) }
            state = next
        }
    }
}
