import Foundation
import ListDiff
import ListDiffTestSupport
import ListJSON
import ListMerge
@_spi(Replication) import ListStore
import ListStorePostgres
import ListStorePostgresTestSupport
import ListStoreTestSupport
import Testing

/// The store contract, once, run on every engine: what a journal server relies on.
@Suite(.serialized, .heavyWork) struct EngineContractTests {
    /// A random history, committed with expected versions: every head reads back as committed,
    /// replaying the journal from the empty list gives every stored digest, every old version reads
    /// back, and the changeset between any two versions turns one into the other.
    @Test(arguments: EngineKind.available)
    func historiesReplayToEveryDigest(_ engine: EngineKind) async throws {
        try await engine.withStore { stores in
            let store = stores[0]
            var random = RandomSnapshots(seed: 0xC0_47AC, duplicates: true)
            var committed: [[ListSection]] = [[]]
            var current = random.snapshot(maxSections: 5, maxElements: 8)
            for step in 0..<120 {
                let sections = listSections(current)
                let result = try await store.commit(
                    sections, to: "history", expectedVersion: committed.count - 1, author: "ana", message: "step \(step)")
                if result.changed { committed.append(sections) }
                #expect(result.version == committed.count - 1 && result.digest == ListDigest.of(sections))
                if result.version > 0 {
                    let head = try await store.snapshot(of: "history", at: nil)
                    #expect(head.sections == sections && head.version == result.version, "step \(step)")
                }
                current = random.edit(current, intensity: Double(step % 8) / 10)
                if step % 40 == 39 { current = random.snapshot(maxSections: 6, maxElements: 10) }
            }
            #expect(committed.count > 90)

            var state: [ListSection] = []
            var version = 0
            var page: JournalPage
            repeat {
                page = try await store.journal(of: "history", after: version, limit: 17, maxBytes: .max)
                for entry in page.entries {
                    #expect(entry.parentVersion == version)
                    state = try entry.changeset(applyingTo: state).result
                    #expect(ListDigest.of(state) == entry.digest, "version \(entry.version)")
                    #expect(state == committed[entry.version], "version \(entry.version)")
                    version = entry.version
                }
            } while page.hasMore
            #expect(version == committed.count - 1)

            var rng = SplitMix64(seed: 7)
            for _ in 0..<12 {
                let a = Int.random(in: 0..<committed.count, using: &rng)
                let b = Int.random(in: 0..<committed.count, using: &rng)
                let (from, to, changeset) = try await store.changeset(of: "history", from: a, to: b)
                #expect(from.sections == committed[a] && to.sections == committed[b])
                #expect(try changeset.apply(to: committed[a]) == committed[b], "\(a) → \(b)")
            }
            let summary = try await store.summary(of: "history")
            #expect(summary.version == committed.count - 1 && summary.digest == ListDigest.of(committed.last!))
            #expect(try await store.lists().map(\.name) == ["history"])
            let report = try await store.verify(list: nil, progress: nil)
            #expect(report.isValid && report.lists.map(\.versionsVerified) == [committed.count - 1], "\(report)")
        }
    }

    /// Time travel costs the distance to the nearest stored snapshot, never the history: over a long
    /// history of small changes to a mid-sized list, every version reads back as committed and reads
    /// fewer than `_StoredSnapshotPolicy.maxVersions` journal entries (counted, not timed); a list whose
    /// changes are large reads fewer still; pruning drops the stored snapshots below the base and the rest
    /// keep serving; `verify` checks every stored snapshot.
    @Test(arguments: EngineKind.available)
    func timeTravelReadsOnlyTheDistanceFromTheNearestStoredSnapshot(_ engine: EngineKind) async throws {
        try await engine.withStore { stores in
            let store = stores[0]
            let travel = try #require(store as? any StoreDriver)
            var random = RandomSnapshots(seed: 0x71_3E7A, duplicates: false)
            var current = random.snapshot(maxSections: 4, maxElements: 60)
            var committed: [[ListSection]] = [[]]
            for _ in 0..<420 {
                let sections = listSections(current)
                let result = try await store.commit(sections, to: "long", expectedVersion: committed.count - 1, author: nil, message: nil)
                if result.changed { committed.append(sections) }
                current = random.edit(current, intensity: 0.05)
            }
            let head = committed.count - 1
            #expect(head > 380)
            var most = 0
            for version in 0..<head {
                let (snapshot, read) = try await travel.snapshotCountingReads(of: "long", at: version)
                #expect(snapshot.sections == committed[version] && snapshot.version == version, "version \(version)")
                #expect(snapshot.digest == ListDigest.of(committed[version]), "version \(version)")
                #expect(read < _StoredSnapshotPolicy.maxVersions && read <= version, "version \(version) read \(read) entries")
                most = max(most, read)
            }
            #expect(most >= _StoredSnapshotPolicy.minVersions, "some versions lie between stored points")
            let (atHead, headRead) = try await travel.snapshotCountingReads(of: "long", at: head)
            #expect(atHead.sections == committed[head] && headRead == 0)

            // Large changes of a small list: a stored snapshot as soon as the journal holds about a snapshot.
            var big: [[ListSection]] = [[]]
            for step in 0..<80 {
                let sections = [ListSection(
                    model: ListItem(id: "s", content: Array("0".utf8)),
                    elements: (0..<6).map { ListItem(id: "e\($0)", content: Array("\"\(step)-\($0)-\(String(repeating: "x", count: 300))\"".utf8)) })]
                _ = try await store.commit(sections, to: "big", expectedVersion: big.count - 1, author: nil, message: nil)
                big.append(sections)
            }
            for version in 1..<big.count {
                let (snapshot, read) = try await travel.snapshotCountingReads(of: "big", at: version)
                #expect(snapshot.sections == big[version])
                #expect(read < 2 * _StoredSnapshotPolicy.minVersions, "version \(version) of big read \(read) entries")
            }

            let pruned = try await store.prune("long", .keepLast(150), force: false)
            #expect(pruned.base == head - 150)
            for version in pruned.base...head {
                let (snapshot, read) = try await travel.snapshotCountingReads(of: "long", at: version)
                #expect(snapshot.sections == committed[version], "version \(version) after pruning")
                #expect(read < _StoredSnapshotPolicy.maxVersions && read <= version - pruned.base)
            }
            let report = try await store.verify(list: nil, progress: nil)
            #expect(report.isValid, "\(report)")
        }
    }

    /// Writers that expect the same version: exactly one lands, the others get `.versionConflict`
    /// with both versions, and nothing is lost or doubled.
    @Test(arguments: EngineKind.available)
    func writersOfOneVersionConflictAndNothingIsLost(_ engine: EngineKind) async throws {
        try await engine.withStore(handles: 2) { stores in
            try await stores[0].commit(linearList(10), to: "l", expectedVersion: 0, author: nil, message: nil)
            for round in 1...4 {
                let outcomes = try await withThrowingTaskGroup(of: Result<CommitResult, StoreError>.self) { group in
                    for writer in 0..<6 {
                        let store = stores[writer % 2]
                        group.addTask {
                            do {
                                return .success(try await store.commit(
                                    linearList(10 + writer + 1, prefix: "w\(writer)", content: round), to: "l", expectedVersion: round,
                                    author: "w\(writer)", message: nil))
                            } catch let error as StoreError {
                                return .failure(error)
                            }
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                let landed = outcomes.compactMap { try? $0.get() }
                #expect(landed.count == 1 && landed.first?.version == round + 1, "\(outcomes)")
                for case .failure(let error) in outcomes {
                    #expect(error.code == .versionConflict && error.expectedVersion == round && error.currentVersion == round + 1)
                }
                let head = try await stores[1].snapshot(of: "l", at: nil)
                #expect(head.version == round + 1 && head.digest == landed.first?.digest)
            }
            let page = try await stores[0].journal(of: "l", after: nil, limit: 100, maxBytes: .max)
            #expect(page.entries.map(\.version) == Array(1...5))
        }
    }

    /// Edits through two handles at once: each runs on the head it is given, so every one lands on
    /// a version of its own and none is lost; an edit that throws writes nothing.
    @Test(arguments: EngineKind.available)
    func concurrentEditsLoseNothing(_ engine: EngineKind) async throws {
        try await engine.withStore(handles: 2) { stores in
            try await stores[0].commit(linearList(0), to: "l", expectedVersion: 0, author: nil, message: nil)
            let versions = try await withThrowingTaskGroup(of: Int.self) { group in
                for k in 0..<12 {
                    let store = stores[k % 2]
                    group.addTask {
                        try await store.edit("l", expectedVersion: nil, author: "e\(k)", message: nil) { draft in
                            try draft.append(ListItem("k\(k)", k), toSection: ExactString("s"))
                        }.version
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(versions.sorted() == Array(2...13))
            let head = try await stores[1].snapshot(of: "l", at: nil)
            #expect(Set(head.sections[0].elements.map(\.id)) == Set((0..<12).map { "k\($0)" }))
            #expect(await Self.code {
                _ = try await stores[0].edit("l", expectedVersion: nil, author: nil, message: nil) { draft in
                    try draft.removeElement("no such element")
                }
            } == .invalidEdit)
            #expect(await Self.code {
                _ = try await stores[0].edit("l", expectedVersion: 3, author: nil, message: nil) { _ in }
            } == .versionConflict)
            #expect(try await stores[0].summary(of: "l").version == 13)
        }
    }

    /// A large push is rebased before the write that commits it (off the write lock); commits to
    /// its list racing it, through another handle, never make it commit a rebase onto another head:
    /// whatever the interleaving, its version is its intents rebased onto the version before.
    @Test(arguments: EngineKind.available)
    func aLargePushCommitsItsRebaseOntoTheVersionBeforeWhateverRacesIt(_ engine: EngineKind) async throws {
        try await engine.withStore(handles: 2) { stores in
            let base = (0..<3).map { s in
                ListSection(model: ListItem("s\(s)"), elements: (0..<1_500).map { ListItem("e\(s)-\($0)", 0) })
            }
            try await stores[0].commit(base, to: "l", expectedVersion: 0, author: nil, message: nil)
            var rng = SplitMix64(seed: 0xB16_9005)
            for round in 1...4 {
                let head = try await stores[0].snapshot(of: "l", at: nil).sections
                // Every element's content changed (4,500 intents), and a few elements moved.
                var mine = head.map { section in
                    ListSection(model: section.model, elements: section.elements.map { ListItem($0.id, round * 10) })
                }
                for _ in 0..<20 {
                    let moved = mine[0].elements.remove(at: Int.random(in: 0..<mine[0].elements.count, using: &rng))
                    mine[2].elements.insert(moved, at: Int.random(in: 0...mine[2].elements.count, using: &rng))
                }
                let push = Push(id: PushID(client: "big", seq: round), intents: Intent.changes(from: head, to: mine))
                #expect(push.intents.count > 4_096)
                let racers = (0..<3).map { _ in
                    (s: Int.random(in: 0..<3, using: &rng), e: Int.random(in: 0..<1_400, using: &rng), value: Int.random(in: 1...9, using: &rng))
                }
                async let answer = stores[0].merge(push, into: "l")
                for racer in racers {
                    _ = try await stores[1].edit("l", expectedVersion: nil, author: nil, message: nil) { draft in
                        var sections = draft.sections
                        let id = sections[racer.s].elements[racer.e].id
                        sections[racer.s].elements[racer.e] = ListItem(id, racer.value)
                        draft.sections = sections
                    }
                }
                let merged = try await answer
                let before = try await stores[0].snapshot(of: "l", at: merged.version - 1).sections
                let rebase = Rebase(push.intents, onto: before)
                #expect(try await stores[0].snapshot(of: "l", at: merged.version).sections == rebase.snapshot, "round \(round)")
                #expect(merged.conflicts == rebase.conflicts, "round \(round)")
            }
        }
    }

    /// A merge tells a section the list deleted from one it never had: intents into or about a
    /// section a commit deleted are reported as the rebase says (`sectionDeleted`, `deleted`), those
    /// naming a section the list never had as `unknownSection`; the head is the rebase's either
    /// way, and a retry is answered with the same report. A list deleted and made again never had
    /// the sections of the one before.
    @Test(arguments: EngineKind.available)
    func aSectionTheListNeverHadIsToldFromOneItDeleted(_ engine: EngineKind) async throws {
        try await engine.withStore { stores in
            let store = stores[0]
            func section(_ id: String, _ elements: [String]) -> ListSection {
                ListSection(model: ListItem(id), elements: elements.map { ListItem($0, 0) })
            }
            // "b" deleted twice: the list keeps its id once.
            let before = [section("a", ["x"]), section("b", ["y"]), section("c", [])]
            let head = [section("a", ["x"]), section("c", [])]
            for (version, sections) in [before, head, before, head].enumerated() {
                try await store.commit(sections, to: "l", expectedVersion: version, author: nil, message: nil)
            }
            let intents: [Intent] = [
                .insertSection("m", content: .null, elements: [], after: "c", before: nil),
                .updateSection("b", base: .null, content: 1),
                .updateSection("q", base: .null, content: 2),
                .moveSection("w", after: nil, before: nil),
                .insertElement("n1", content: 1, section: "b", after: nil, before: nil),
                .insertElement("n2", content: 2, section: "z", after: nil, before: nil),
                .moveElement("x", section: "z", after: nil, before: nil),
                .insertElement("n3", content: 3, section: "m", after: nil, before: nil),
            ]
            let push = Push(id: PushID(client: "client-1", seq: 1), intents: intents)
            let answer = try await store.merge(push, into: "l")
            let rebase = Rebase(intents, onto: head)
            #expect(rebase.conflicts.map(\.kind) == [.deleted, .deleted, .deleted, .sectionDeleted, .sectionDeleted, .sectionDeleted])
            #expect(answer.conflicts == [
                Conflict(.deleted, "b", mine: 1),
                Conflict(.unknownSection, "q", mine: 2),
                Conflict(.unknownSection, "w"),
                Conflict(.sectionDeleted, "n1", section: "b", mine: 1),
                Conflict(.unknownSection, "n2", section: "z", mine: 2),
                Conflict(.unknownSection, "x", section: "z"),
            ])
            #expect(try await store.snapshot(of: "l", at: nil).sections == rebase.snapshot)
            let again = try await store.merge(push, into: "l")
            #expect(again.duplicate && again.conflicts == answer.conflicts)
            #expect(try await store.journal(of: "l", after: 4, limit: 1, maxBytes: .max).entries.first?.conflicts == answer.conflicts)

            // Made again after its deletion: "b" is a section this list never had.
            _ = try await store.deleteList("l")
            try await store.commit([section("a", ["x"])], to: "l", expectedVersion: 0, author: nil, message: nil)
            let later = try await store.merge(
                Push(id: PushID(client: "client-1", seq: 2), intents: [.insertElement("n1", content: 1, section: "b", after: nil, before: nil)]),
                into: "l")
            #expect(later.conflicts == [Conflict(.unknownSection, "n1", section: "b", mine: 1)])

            // A replica list's history starts at its source's version, after deletions it never
            // saw: its merges report as the rebase does.
            let source = ReplicaSource(store: try await store.identity(), list: "l", version: 1, digest: ListDigest.of([section("a", ["x"])]))
            _ = try await store.commitReplica([section("a", ["x"])], to: "r", source: source, author: nil, message: nil) { _ in }
            let replicated = try await store.merge(
                Push(id: PushID(client: "client-1", seq: 1), intents: [.insertElement("n1", content: 1, section: "b", after: nil, before: nil)]),
                into: "r")
            #expect(replicated.conflicts == [Conflict(.sectionDeleted, "n1", section: "b", mine: 1)])
        }
    }

    /// Replicas' offline changes merged in any order: each push lands once (a repeat is answered
    /// from the record, applies nothing), its journal entry names it, and the head is what the
    /// merge rules give for that order.
    @Test(arguments: EngineKind.available)
    func pushesMergeExactlyOnceByTheRules(_ engine: EngineKind) async throws {
        try await engine.withStore(handles: 2) { stores in
            let base = OfflineEditor.start(sections: 3, elements: 5)
            try await stores[0].commit(base, to: "shared", expectedVersion: 0, author: nil, message: nil)
            var rng = SplitMix64(seed: 0xFEED)
            var expected = base
            var pushes: [Push] = []
            for client in 0..<4 {
                var editor = OfflineEditor(client: "c\(client)", seed: UInt64(client) + 11)
                var mine = base
                for seq in 1...3 {
                    let before = mine
                    mine = editor.edit(mine)
                    pushes.append(Push(
                        id: PushID(client: "client-\(client)", seq: seq), intents: Intent.changes(from: before, to: mine),
                        author: "c\(client)", message: "change \(seq)"))
                }
            }
            // Each client's pushes in its order; the clients interleaved at random.
            var queues = Dictionary(grouping: pushes, by: \.id.client)
            var order: [Push] = []
            while !queues.isEmpty {
                let client = queues.keys.sorted()[Int.random(in: 0..<queues.count, using: &rng)]
                order.append(queues[client]!.removeFirst())
                if queues[client]!.isEmpty { queues[client] = nil }
            }
            for (k, push) in order.enumerated() {
                let store = stores[k % 2]
                let answer = try await store.merge(push, into: "shared")
                let rebase = Rebase(push.intents, onto: expected)
                expected = rebase.snapshot
                #expect(!answer.duplicate && answer.seq == push.id.seq && answer.conflicts == rebase.conflicts)
                let head = try await store.snapshot(of: "shared", at: nil)
                #expect(head.sections == expected && head.version == answer.version, "push \(push.id)")

                // Sent again (the answer was lost): the recorded answer, nothing applied.
                let again = try await stores[(k + 1) % 2].merge(push, into: "shared")
                #expect(again.duplicate && again.version == answer.version && again.conflicts == answer.conflicts)
                #expect(try await store.summary(of: "shared").version == head.version)
            }
            for client in 0..<4 {
                let recorded = try await stores[1].pushes(from: "client-\(client)", to: "shared", seqs: 1...100)
                #expect(recorded.map(\.seq) == [1, 2, 3] && recorded.allSatisfy { !$0.duplicate })
            }
            // A push older than one recorded, never itself recorded, is refused.
            let late = try await stores[0].merge(Push(id: PushID(client: "client-9", seq: 5), intents: []), into: "shared")
            #expect(!late.duplicate && late.conflicts.isEmpty)
            #expect(await Self.code { _ = try await stores[1].merge(Push(id: PushID(client: "client-9", seq: 4), intents: []), into: "shared") } == .pushOutOfOrder)
            #expect(try await stores[0].pushes(from: "client-9", to: "shared", seqs: 1...9).map(\.seq) == [5])
            let journal = try await stores[0].journal(of: "shared", after: 1, limit: 1000, maxBytes: .max)
            let named = journal.entries.compactMap(\.pushID)
            #expect(Set(named).count == named.count)
            #expect(named.allSatisfy { id in pushes.contains { $0.id == id } })
            #expect(await Self.code { _ = try await stores[0].merge(pushes[0], into: "no such list") } == .listNotFound)
        }
    }

    /// Pruning folds the record of pushes merged up to the new base, each client's rows but its
    /// latest into one: at random points of a history of pushes (several clients, numbering from
    /// anywhere) and commits, every push made so far, sent again, is answered as already merged
    /// and applies nothing; the record answers for every sequence number; each client's next push
    /// is merged and one out of order refused; after pruning everything each client keeps two rows;
    /// and another change under a folded push's number is refused.
    @Test(arguments: EngineKind.available)
    func pruningFoldsThePushRecordAndEveryRetryIsStillAnsweredOnce(_ engine: EngineKind) async throws {
        try await engine.withStore(handles: 2) { stores in
            let base = OfflineEditor.start(sections: 3, elements: 5)
            try await stores[0].commit(base, to: "shared", expectedVersion: 0, author: nil, message: nil)
            var rng = SplitMix64(seed: 0xF01D)
            // The last two spell one character two ways: two clients, told apart by their bytes (so
            // the test keeps its books by index: Swift's `==` takes them for one string).
            let clients = (0..<4).map { "client-\($0)" } + ["caf\u{E9}", "cafe\u{301}"]
            let firstSeq = clients.map { _ in Int.random(in: 1...50, using: &rng) }
            var editors = clients.enumerated().map { OfflineEditor(client: "editor-\($0.offset)", seed: UInt64($0.offset) + 3) }
            // Per client: its pushes, with the version each was answered with.
            var made: [[(push: Push, version: Int)]] = clients.map { _ in [] }
            var removed = 0
            for step in 0..<60 {
                let store = stores[step % 2]
                let head = try await store.snapshot(of: "shared", at: nil)
                switch Int.random(in: 0..<10, using: &rng) {
                case 0..<6:
                    let c = Int.random(in: 0..<clients.count, using: &rng)
                    let seq = (made[c].last?.push.id.seq).map { $0 + 1 } ?? firstSeq[c]
                    let mine = editors[c].edit(head.sections)
                    let push = Push(id: PushID(client: clients[c], seq: seq), intents: Intent.changes(from: head.sections, to: mine))
                    let answer = try await store.merge(push, into: "shared")
                    #expect(!answer.duplicate, "step \(step)")
                    made[c].append((push, answer.version))
                case 6..<8:
                    try await store.commit(editors[0].edit(head.sections), to: "shared", expectedVersion: head.version, author: nil, message: nil)
                default:
                    let keep = Int.random(in: 0...3, using: &rng)
                    removed += try await store.prune("shared", .keepLast(keep), force: true).removedPushRecords
                }
                // Every push so far, sent again, is answered from the record, folded or not.
                let version = try await store.summary(of: "shared").version
                for (push, answered) in made.joined() {
                    let again = try await stores[(step + 1) % 2].merge(push, into: "shared")
                    #expect(again.duplicate && again.version >= answered && again.version <= version, "\(push.id) at step \(step)")
                }
                #expect(try await store.summary(of: "shared").version == version, "a retry applied something at step \(step)")
                for c in clients.indices {
                    let recorded = try await store.pushes(from: clients[c], to: "shared", seqs: 0...10_000)
                    #expect(recorded.map(\.seq) == made[c].map(\.push.id.seq), "client \(c) at step \(step)")
                    #expect(recorded.map(\.fingerprint) == made[c].map(\.push.fingerprint), "client \(c) at step \(step)")
                }
            }
            // Each client's next push is merged; one out of order is refused.
            for c in clients.indices {
                guard let latest = made[c].last?.push.id.seq else { continue }
                let skipping = Push(id: PushID(client: clients[c], seq: latest + 2), intents: [])
                #expect(await Self.code { _ = try await stores[0].merge(skipping, into: "shared") } == .pushOutOfOrder)
                if firstSeq[c] > 1 {
                    let before = Push(id: PushID(client: clients[c], seq: firstSeq[c] - 1), intents: [])
                    #expect(await Self.code { _ = try await stores[0].merge(before, into: "shared") } == .pushOutOfOrder)
                }
                let next = Push(id: PushID(client: clients[c], seq: latest + 1), intents: [])
                let answer = try await stores[1].merge(next, into: "shared")
                #expect(!answer.duplicate)
                made[c].append((next, answer.version))
            }
            // Pruned to the head, each client keeps a row for its run and one for its latest push.
            removed += try await stores[0].prune("shared", .keepLast(0), force: true).removedPushRecords
            #expect(removed == made.reduce(0) { $0 + max(0, $1.count - 2) }, "\(made.map(\.count))")
            // A folded push's number with other content (a replica restored in place from a backup
            // reuses it) is still refused, not taken for a retry.
            for (push, _) in made.joined() {
                var other = push
                other.message = "another change"
                #expect(await Self.code { _ = try await stores[0].merge(other, into: "shared") } == .pushMismatch, "\(push.id)")
            }
            #expect(try await stores[0].verify(list: nil, progress: nil).isValid)
        }
    }

    /// A client's first push may carry any sequence number, the largest too: it is recorded, its
    /// retry answered from the record, and the record read over any range that reaches it (the
    /// count of answers a range may give once overflowed there and stopped the server).
    @Test(arguments: EngineKind.available)
    func aPushNumberedAtTheTopOfTheRangeIsAnsweredOnce(_ engine: EngineKind) async throws {
        try await engine.withStore { stores in
            let store = stores[0]
            try await store.commit(linearList(2), to: "l", expectedVersion: 0, author: nil, message: nil)
            let push = Push(id: PushID(client: "top", seq: .max), intents: [.deleteElement("e0")])
            let answer = try await store.merge(push, into: "l")
            let again = try await store.merge(push, into: "l")
            #expect(!answer.duplicate && again.duplicate && again.version == answer.version)
            for seqs in [Int.max...Int.max, (Int.max - 5)...Int.max, 1...Int.max] {
                #expect(try await store.pushes(from: "top", to: "l", seqs: seqs).map(\.seq) == [.max], "\(seqs)")
            }
            try await store.prune("l", .keepLast(0), force: true)
            #expect(try await store.merge(push, into: "l").duplicate)
        }
    }

    /// Consumers and the errors a server turns into statuses.
    @Test(arguments: EngineKind.available)
    func consumersAndErrors(_ engine: EngineKind) async throws {
        try await engine.withStore { stores in
            let store = stores[0]
            try await store.commit(linearList(3), to: "l", expectedVersion: nil, author: nil, message: nil)
            try await store.commit(linearList(4), to: "l", expectedVersion: nil, author: nil, message: nil)
            let registered = try await store.registerConsumer("laptop", of: "l", at: nil)
            #expect(registered.version == 0)
            #expect(try await store.acknowledge(consumer: "laptop", of: "l", version: 2).version == 2)
            #expect(await Self.code { _ = try await store.acknowledge(consumer: "laptop", of: "l", version: 3) } == .versionNotFound)
            #expect(await Self.code { _ = try await store.acknowledge(consumer: "phone", of: "l", version: 1) } == .invalidArgument)
            #expect(await Self.code { _ = try await store.registerConsumer("", of: "l", at: nil) } == .invalidArgument)
            #expect(await Self.code { _ = try await store.summary(of: "none") } == .listNotFound)
            #expect(await Self.code { _ = try await store.snapshot(of: "l", at: 3) } == .versionNotFound)
            #expect(await Self.code { _ = try await store.journal(of: "l", after: 5, limit: 10, maxBytes: .max) } == .versionNotFound)
            #expect(await Self.code { _ = try await store.changeset(of: "l", from: 0, to: 9) } == .versionNotFound)
            #expect(await Self.code { _ = try await store.commit([], to: "", expectedVersion: nil, author: nil, message: nil) } == .invalidListName)
            // An empty snapshot records nothing, but a name no new list may take is refused all the same.
            for name in ["e\u{301}", "a\u{200B}b", "\u{85}"] {
                #expect(await Self.code { _ = try await store.commit([], to: name, expectedVersion: nil, author: nil, message: nil) } == .invalidListName, "\(name.unicodeScalars.map(\.value))")
            }
            #expect(await Self.code { _ = try await store.commit([], to: "l", expectedVersion: 1, author: nil, message: nil) } == .versionConflict)
            #expect(try await store.summary(of: "l").version == 2)
            let identity = try await store.identity()
            #expect(identity.epoch >= 1 && !identity.uuid.isEmpty)
        }
    }

    /// Pruning keeps what registered consumers still need unless forced, and every retained
    /// version still reads back and replays.
    @Test(arguments: EngineKind.available)
    func pruningKeepsWhatConsumersNeed(_ engine: EngineKind) async throws {
        try await engine.withStore(handles: 2) { stores in
            let store = stores[0]
            var committed: [[ListSection]] = [[]]
            for k in 1...10 {
                let sections = linearList(k % 4 + 2, prefix: "p\(k % 3)", content: k)
                try await store.commit(sections, to: "l", expectedVersion: k - 1, author: nil, message: nil)
                committed.append(sections)
            }
            try await store.registerConsumer("slow", of: "l", at: 3)
            var result = try await stores[1].prune("l", .keepLast(2), force: false)
            #expect(result.previousBase == 0 && result.base == 3 && result.head == 10 && result.removedEntries == 3)
            #expect(result.heldBy == ["slow"])
            #expect(await Self.code { _ = try await store.snapshot(of: "l", at: 2) } == .versionNotFound)
            for v in 3...10 { #expect(try await store.snapshot(of: "l", at: v).sections == committed[v], "version \(v)") }
            var state = try await store.snapshot(of: "l", at: 3).sections
            for entry in try await store.journal(of: "l", after: nil, limit: 100, maxBytes: .max).entries {
                state = try entry.changeset(applyingTo: state).result
                #expect(state == committed[entry.version])
            }
            #expect(try await store.verify(list: "l", progress: nil).isValid)

            result = try await store.prune("l", .before(8), force: true)
            #expect(result.base == 8 && result.removedEntries == 5 && result.heldBy.isEmpty)
            #expect(try await store.summary(of: "l").baseVersion == 8)
            // The consumer left behind must resync.
            #expect(await Self.code { _ = try await store.journal(of: "l", after: 3, limit: 10, maxBytes: .max) } == .versionNotFound)
            #expect(await Self.code { _ = try await store.prune("l", .keepLast(-1), force: false) } == .invalidArgument)
            #expect(await Self.code { _ = try await store.prune("l", .before(11), force: false) } == .versionNotFound)
            #expect(await Self.code { _ = try await store.prune("none", .keepLast(1), force: false) } == .listNotFound)
            #expect(try await store.verify(list: nil, progress: nil).isValid)
        }
    }

    /// Journal pages under every limit and byte budget: they follow one another without a gap,
    /// each holds as many entries as fit (at least one, however large), and both handles of a
    /// store read the same pages.
    @Test(arguments: EngineKind.available)
    func pagesFillTheirBudgetAndFollowOneAnother(_ engine: EngineKind) async throws {
        try await engine.withStore(handles: 2) { stores in
            // Versions of very different sizes: one element changes, or the whole list is new.
            var rng = SplitMix64(seed: 0x9A6E)
            for k in 1...30 {
                let sections = linearList(Int.random(in: 1...60, using: &rng), content: k % 7 == 0 ? k * 1_000 : k)
                try await stores[k % 2].commit(sections, to: "p", expectedVersion: k - 1, author: nil, message: nil)
            }
            let all = try await stores[0].journal(of: "p", after: 0, limit: 1_000, maxBytes: .max)
            #expect(all.entries.map(\.version) == Array(1...30) && !all.hasMore)
            let sizes = Dictionary(uniqueKeysWithValues: all.entries.map { ($0.version, $0.stagesJSON.count) })
            let largest = sizes.values.max()!
            for (limit, maxBytes) in [(1, Int.max), (7, Int.max), (100, 1), (100, largest / 3), (5, largest), (100, largest * 4)] {
                var after = 0
                var pages = 0
                while true {
                    let page = try await stores[0].journal(of: "p", after: after, limit: limit, maxBytes: maxBytes)
                    #expect(page == (try await stores[1].journal(of: "p", after: after, limit: limit, maxBytes: maxBytes)))
                    let versions = page.entries.map(\.version)
                    #expect(versions == Array((after + 1)..<(after + 1 + versions.count)), "limit \(limit), \(maxBytes) bytes")
                    guard page.hasMore else {
                        #expect(versions.last ?? after == 30)
                        break
                    }
                    // Full: the limit is reached, or the next entry would pass the budget.
                    let bytes = versions.reduce(0) { $0 + sizes[$1]! }
                    #expect(!versions.isEmpty && (versions.count == 1 || bytes <= maxBytes))
                    #expect(versions.count == limit || bytes + sizes[versions.last! + 1]! > maxBytes, "limit \(limit), \(maxBytes) bytes")
                    after = versions.last!
                    pages += 1
                }
                #expect(pages >= 30 / limit - 1)
            }
        }
    }

    /// The code of the `StoreError` that `body` throws (nil when it throws none).
    static func code(_ body: () async throws -> Void) async -> StoreError.Code? {
        do {
            try await body()
            return nil
        } catch let error as StoreError {
            return error.code
        } catch {
            return nil
        }
    }

    /// A commit through one handle raises the commit generation another handle sees (on SQLite
    /// within the process; on PostgreSQL through `NOTIFY`, as another server would).
    @Test(arguments: EngineKind.available)
    func commitsWakeOtherHandles(_ engine: EngineKind) async throws {
        try await engine.withStore(handles: 2) { stores in
            let (writer, watcher) = (stores[0], stores[1])
            // Let the watcher start listening (its start counts as a commit).
            let first = watcher.commitGeneration()
            await watcher.waitForCommit(after: first, timeout: .seconds(2))
            for k in 1...3 {
                let seen = watcher.commitGeneration()
                try await writer.commit(linearList(k), to: "l", expectedVersion: k - 1, author: nil, message: nil)
                await watcher.waitForCommit(after: seen, timeout: .seconds(60))
                #expect(watcher.commitGeneration() > seen, "commit \(k) was not announced")
            }
        }
    }

    /// A name no list can have (a control character, U+0000 among them, which PostgreSQL's text
    /// refuses) is a missing list on every read, and refused as a name on every write: never a
    /// failure of the engine.
    @Test(arguments: EngineKind.available)
    func namesNoListCanHaveAreMissingOnReadsAndRefusedOnWrites(_ engine: EngineKind) async throws {
        try await engine.withStore { stores in
            let store = stores[0]
            try await store.commit(linearList(3), to: "l", expectedVersion: nil, author: nil, message: nil)
            for name in ["a\u{0}b", "\u{0}", "a\u{1}b", "\u{7F}"] {
                let reads: [(String, () async throws -> Void)] = [
                    ("summary", { _ = try await store.summary(of: name) }),
                    ("snapshot", { _ = try await store.snapshot(of: name, at: nil) }),
                    ("journal", { _ = try await store.journal(of: name, after: nil, limit: 10, maxBytes: .max) }),
                    ("changeset", { _ = try await store.changeset(of: name, from: 0, to: nil) }),
                    ("consumers", { _ = try await store.consumers(of: name) }),
                ]
                for (what, read) in reads {
                    let code = await Self.code(read)
                    #expect(code == .listNotFound, "\(engine) \(what) of \(name.debugDescription): \(String(describing: code))")
                }
                let written = await Self.code { _ = try await store.commit(linearList(2), to: name, expectedVersion: nil, author: nil, message: nil) }
                #expect(written == .invalidListName, "\(engine) commit to \(name.debugDescription): \(String(describing: written))")
                let pushes = await Self.code { _ = try await store.pushes(from: "c1", to: name, seqs: 1...9) }
                #expect(pushes == nil || pushes == .listNotFound, "\(engine) pushes of \(name.debugDescription): \(String(describing: pushes))")
            }
            #expect(try await store.lists().map(\.name) == ["l"])
        }
    }

    /// A head read in pages covers it at one version, within the bound asked; pages landed in a
    /// replica list's staging area become its head in one transaction, which ends the staging; a
    /// page that does not follow is refused with nothing written.
    @Test(arguments: EngineKind.available)
    func headsInPagesLandAndBecomeAReplica(_ engine: EngineKind) async throws {
        try await engine.withStore(handles: 2) { stores in
            let store = stores[0]
            var random = RandomSnapshots(seed: 0x9A6E5, duplicates: false)
            var sections = listSections(random.snapshot(maxSections: 7, maxElements: 15))
            sections.append(ListSection(model: ListItem(id: "empty", json: ["nothing": true]), elements: []))
            try await store.commit(sections, to: "source", expectedVersion: nil, author: nil, message: nil)
            var pages = [try await store.page(of: "source", at: nil, after: nil, maxBytes: 120)]
            while let next = pages.last?.next { pages.append(try await store.page(of: "source", at: pages[0].version, after: next, maxBytes: 120)) }
            #expect(pages.count > 3 && pages.allSatisfy { $0.records.count == 1 || $0.size <= 120 })
            #expect(pages.allSatisfy { $0.version == 1 && $0.sectionCount == sections.count && $0.store.uuid == pages[0].store.uuid })
            #expect(pages.reduce(0) { $0 + $1.records.count } == sections.count + sections.reduce(0) { $0 + $1.elements.count })

            // Out of order: refused, nothing landed.
            _ = try await store.stage(pages[0], of: "replica", reason: "pruned")
            await #expect(throws: StoreError.self) { try await store.stage(pages[2], of: "replica", reason: "pruned") }
            #expect(try await store.stagedSync(of: "replica")?.records == pages[0].records.count)
            for page in pages.dropFirst() { _ = try await store.stage(page, of: "replica", reason: "pruned") }
            let staged = try #require(try await store.stagedSync(of: "replica"))
            #expect(staged.isComplete && staged.version == 1 && staged.reason == "pruned")
            #expect(try await store.stagedSections(of: "replica") == sections)
            let committed = try await store.commitStagedSync(of: "replica", message: "in pages") { _ in }
            #expect(committed.digest == ListDigest.of(sections))
            #expect(try await store.snapshot(of: "replica", at: nil).sections == sections)
            #expect(try await store.replicaSource(of: "replica")?.version == 1)
            #expect(try await store.stagedSync(of: "replica") == nil)

            // Pages whose rows do not make the version's digest (a content changed on the way) are
            // not made a list, whatever the check says.
            var changed = pages
            changed[1].records[0].item.content = Array(#"{"changed":true}"#.utf8)
            for page in changed { _ = try await store.stage(page, of: "changed", reason: "pruned") }
            await #expect(throws: StoreError.self) { try await store.commitStagedSync(of: "changed", message: "in pages") { _ in } }
            #expect(try await store.lists().map(\.name).contains("changed") == false)
            try await store.dropStagedSync(of: "changed")

            // Two handles (two processes pulling one replica list) landing the same page at once:
            // the page lands once, whichever lands it.
            for round in 0..<5 {
                let (replica, page) = ("twice\(round)", pages[1])
                _ = try await store.stage(pages[0], of: replica, reason: "pruned")
                async let first: Bool = { do { _ = try await stores[0].stage(page, of: replica, reason: "pruned"); return true } catch { return false } }()
                async let second: Bool = { do { _ = try await stores[1].stage(page, of: replica, reason: "pruned"); return true } catch { return false } }()
                let landed = [await first, await second].filter { $0 }.count
                let records = pages[0].records.count + pages[1].records.count
                #expect(landed == 1, "round \(round)")
                #expect(try await store.stagedSync(of: replica)?.records == records)
                #expect(try await store.stagedSections(of: replica).reduce(0) { $0 + 1 + $1.elements.count } == records, "round \(round)")
                try await store.dropStagedSync(of: replica)
            }

            // Pages stay at their version while commits land (through another handle: another
            // process), as long as the store keeps it: SQLite and memory do, until they let it go
            // (SQLite's checkpoint lets every kept version go); PostgreSQL reads pages at the head,
            // and refuses a page of a version gone, for the reader to start again.
            try await stores[1].commit([], to: "source", expectedVersion: nil, author: nil, message: nil)
            if engine == .postgres {
                await #expect(throws: StoreError.self) { try await store.page(of: "source", at: 1, after: pages[0].next, maxBytes: 120) }
            } else {
                #expect(try await store.page(of: "source", at: 1, after: pages[0].next, maxBytes: 120) == pages[1])
                if let sqlite = store as? Store {
                    try sqlite.checkpoint()
                    await #expect(throws: StoreError.self) { try await store.page(of: "source", at: 1, after: pages[0].next, maxBytes: 120) }
                }
            }
            #expect(try await store.verify(list: nil, progress: nil).isValid)
        }
    }

    /// Pages landed into an empty head become its rows a run at a time: the copy records the very
    /// journal entry, digest and rows a commit of the same list does, on random lists (repeated
    /// ids among them, sections of more elements than a run), and the list takes commits after.
    @Test(arguments: EngineKind.available)
    func aCopyIntoAnEmptyHeadRecordsWhatACommitOfTheListRecords(_ engine: EngineKind) async throws {
        try await engine.withStore(handles: 1) { stores in
            let store = stores[0]
            var random = RandomSnapshots(seed: 0xC0F1, duplicates: true)
            for round in 0..<24 {
                var sections = listSections(random.snapshot(maxSections: 6, maxElements: 12))
                if round == 0 {
                    // More records than one run of the copy, in one section.
                    sections = [ListSection(model: ListItem(id: "big", json: ["n": 1]), elements: (0..<5000).map { ListItem(id: "e\($0)", json: .number(JSONNumber($0))) })]
                }
                if sections.isEmpty { continue }
                let (source, replica) = ("source\(round)", "replica\(round)")
                let maxBytes = round == 0 ? 1 << 16 : 100 + round * 37
                try await store.commit(sections, to: source, expectedVersion: nil, author: nil, message: nil)
                var page = try await store.page(of: source, at: nil, after: nil, maxBytes: maxBytes)
                while true {
                    _ = try await store.stage(page, of: replica, reason: "pruned")
                    guard let next = page.next else { break }
                    page = try await store.page(of: source, at: page.version, after: next, maxBytes: maxBytes)
                }
                if round % 8 == 1 {
                    // A check that throws after the rows are written: nothing of the copy is kept.
                    struct Refused: Error {}
                    await #expect(throws: Refused.self) { try await store.commitStagedSync(of: replica, message: "in pages") { _ in throw Refused() } }
                    #expect(try await store.lists().allSatisfy { $0.name != replica })
                    #expect(try await store.stagedSync(of: replica)?.isComplete == true)
                }
                let committed = try await store.commitStagedSync(of: replica, message: "in pages") { _ in }
                #expect(committed.version == 1 && committed.changed && committed.digest == ListDigest.of(sections))
                let (made, copied) = (try await store.journal(of: source, after: 0, limit: 1, maxBytes: .max), try await store.journal(of: replica, after: 0, limit: 1, maxBytes: .max))
                #expect(copied.entries.map(\.stagesJSON) == made.entries.map(\.stagesJSON), "round \(round)")
                #expect(copied.entries.first?.digest == made.entries.first?.digest && copied.entries.first?.elementCount == made.entries.first?.elementCount)
                #expect(try await store.snapshot(of: replica, at: nil).sections == sections)
                #expect(try await store.snapshot(of: replica, at: 1).sections == sections)
                let edited = Array(sections.dropFirst()) + [ListSection(model: ListItem(id: "later", json: .null), elements: sections[0].elements.suffix(2))]
                try await store.commit(edited, to: replica, expectedVersion: 1, author: nil, message: nil)
                #expect(try await store.snapshot(of: replica, at: nil).sections == edited)
                #expect(try await store.snapshot(of: replica, at: 1).sections == sections)
            }
            #expect(try await store.verify(list: nil, progress: nil).isValid)
        }
    }
}
