import Foundation
import ListDiff
import ListDiffTestSupport
import ListMerge
import ListStore
import ListStoreTestSupport
import ListSync
import Testing

/// A source that notes the client id of every push sent through it.
struct NotingClients: _ForwardingSource {
    let base: any ListSource
    let clients: _Locked<Set<String>>

    func push(_ push: Push, to list: String) async throws -> PushAnswer {
        clients.withLock { _ = $0.insert(push.id.client) }
        return try await base.push(push, to: list)
    }
}

/// Replicas that write converge, in the style of Jepsen: four clients, each a replica
/// store, make random offline edit sessions while the source is edited too, and sync in random
/// order through sources that lose answers after applying a push. After a final round of syncs every
/// replica equals the source, no id appears twice, every inserted element is there unless a delete
/// removed it (and a section delete mine did not know of is reported), every push was applied once,
/// every transition a replica's UI saw passes the stage validator, and every photo a replica
/// attached offline reaches the source and every other replica whole.
///
/// Rounds per seed: `LISTSTORE_CONVERGENCE_ROUNDS` (default 150; CI runs 3 seeds × 150, one seed at a time).
@Suite(.serialized, .heavyWork) struct ConvergenceTests {
    static let rounds = ProcessInfo.processInfo.environment["LISTSTORE_CONVERGENCE_ROUNDS"].flatMap(Int.init) ?? 150

    @Test(arguments: [0xC0FFEE as UInt64, 0xBADC0DE, 0x5EED])
    func replicasThatWriteConverge(seed: UInt64) async throws {
        try await converge(seed: seed, faults: false)
    }

    /// The same, with the faults that lost offline writes: a replica file copied mid-run
    /// (the copy joins as a fifth client), a replica restored in place from an earlier backup of its
    /// own, the source restored in place from a backup older than a push it answered (with its epoch
    /// advanced on some seeds, as an operator would), a rogue client that forges pushes under
    /// the replicas' client ids and sends pushes that skip ahead, and a source that prunes its
    /// history and record of pushes now and then. Still every replica converges, no
    /// id doubles, every local change is applied exactly once, and nothing is lost without a report.
    @Test(arguments: [0xFA17 as UInt64, 0xC0C0A, 0x5EED])
    func replicasConvergeThroughCopiesRestoresAndForgedPushes(seed: UInt64) async throws {
        try await converge(seed: seed, faults: true)
    }

    func converge(seed: UInt64, faults: Bool) async throws {
        let directory = try TemporaryDirectory()
        let sourcePath = directory.file("source.liststore")
        var source = try Store(path: sourcePath)
        try await source.commit(OfflineEditor.start(sections: 3, elements: 5), to: "l")
        var rng = SplitMix64(seed: seed)
        var editors = (0..<4).map { OfflineEditor(client: "c\($0)", seed: seed &+ UInt64($0) &* 7919) }
        var serverEditor = OfflineEditor(client: "srv", seed: seed ^ 0xFFFF)
        var replicas = (0..<4).map { Replica(store: try! Store(path: directory.file("c\($0).liststore")), list: "l") }
        for replica in replicas { try await replica.pull(from: LocalSource(source)) }
        var localChanges = [Int](repeating: 0, count: 4)
        var reported: [Conflict] = []
        var lostAnswers = 0
        // Faults: the client ids every push was sent under, the rogue's pushes the source took.
        let clients = _Locked(Set<String>())
        var forged = 0
        var newClientIDs = 0
        var prunedPushRecords = 0
        let (copyAt, restoreReplicaAt, restoreSourceAt) = (Self.rounds / 4, Self.rounds / 2, 3 * Self.rounds / 4)
        // The list deleted and made anew under its name: the pushes its record held then, and the
        // local changes made to it that no replica may push to the new one.
        let recreateAt = 5 * Self.rounds / 8
        var recordedBefore = 0
        var dropped = 0

        /// Closes replica `c`'s store, runs `body` on its path, and opens it again.
        func reopen(_ c: Int, _ body: (String) throws -> Void) async throws {
            let path = directory.file("c\(c).liststore")
            try replicas[c].store.close()
            try body(path)
            replicas[c] = Replica(store: try Store(path: path), list: "l")
        }
        func sync(_ c: Int, through target: any ListSource) async throws {
            let pending = try await replicas[c].store.outbox(of: "l").count
            let result = try await replicas[c].sync(with: NotingClients(base: target, clients: clients))
            reported += result.push.conflicts + result.pull.conflicts
            newClientIDs += result.push.clientIDsTaken
            // A list made anew in place of the one the changes were made for: none was pushed.
            if result.pull.reason == .listReplaced { dropped += pending }
        }
        func pull(_ c: Int) async throws {
            let pending = try await replicas[c].store.outbox(of: "l").count
            let result = try await replicas[c].pull(from: LocalSource(source))
            reported += result.conflicts
            if result.reason == .listReplaced { dropped += pending }
        }
        // Attachments: a third of the offline sessions also attach a photo to an element (or
        // replace its photo), kept in the replica first (decided by a generator of their own, so
        // that each seed's other choices stay as they were).
        var attachments = SplitMix64(seed: seed ^ 0xA77AC4)
        var blobs: [ContentHash: [UInt8]] = [:]
        func attach(_ c: Int) async throws {
            let sections = try await replicas[c].store.snapshot(of: "l").sections
            let places = sections.indices.flatMap { s in sections[s].elements.indices.map { (s, $0) } }
            guard !places.isEmpty else { return }
            let (s, e) = places[Int(attachments.next() % UInt64(places.count))]
            let bytes = (0..<(1 + Int(attachments.next() % 3000))).map { _ in UInt8(truncatingIfNeeded: attachments.next()) }
            let photo = BlobReference(of: bytes, type: "image/jpeg")
            try await replicas[c].store.storeBlob(photo, to: "l", bytes: bytes)
            blobs[photo.hash] = bytes
            var edited = sections
            var object = (try? edited[s].elements[e].json)?.objectValue ?? JSONObject()
            object["photo"] = photo.json
            edited[s].elements[e] = ListItem(id: edited[s].elements[e].id, json: .object(object))
            if try await replicas[c].store.commit(edited, to: "l").pendingSeq != nil { localChanges[c] += 1 }
        }
        func edit(_ c: Int) async throws {
            for _ in 0..<(1 + Int(rng.next() % 3)) {
                let result = try await replicas[c].store.commit(editors[c].edit(try await replicas[c].store.snapshot(of: "l").sections), to: "l")
                if result.pendingSeq != nil { localChanges[c] += 1 }
            }
            if attachments.next() % 3 == 0 { try await attach(c) }
        }

        for round in 0..<Self.rounds {
            if faults {
                if round == copyAt {
                    // A replica file copied (a second device): the copy joins as a client of its own.
                    try await reopen(0) { try FileManager.default.copyItem(atPath: $0, toPath: directory.file("c4.liststore")) }
                    replicas.append(Replica(store: try Store(path: directory.file("c4.liststore")), list: "l"))
                    editors.append(OfflineEditor(client: "c4", seed: seed &+ 4 &* 7919))
                    localChanges.append(0)
                }
                if round == restoreReplicaAt {
                    // A replica restored in place from a backup of its own: its changes since the
                    // backup reached the source first, and its next changes reuse sequence numbers.
                    let backup = directory.file("c1.backup")
                    try await reopen(1) { try FileManager.default.copyItem(atPath: $0, toPath: backup) }
                    try await edit(1)
                    try await sync(1, through: LocalSource(source))
                    try await reopen(1) { try StoreFileFaults.restoreInPlace($0, from: backup) }
                }
                if round == recreateAt {
                    // The list deleted at the source and made anew under its name (with the old
                    // one's content), after every replica synced, while each holds offline changes
                    // to the old list: they are reported (`listDeleted`), never merged into the new.
                    for c in replicas.indices { try await sync(c, through: LocalSource(source)) }
                    for client in clients.withLock({ $0 }) {
                        recordedBefore += try await source.pushes(from: client, to: "l", seqs: 1...Int.max).count
                    }
                    let head = try await source.snapshot(of: "l")
                    for c in replicas.indices { try await edit(c) }
                    try await source.deleteList("l")
                    // The new list (its sections first) has the photos its elements refer to
                    // uploaded before they come.
                    try await source.commit(head.sections.map { ListSection(model: $0.model, elements: []) }, to: "l")
                    for photo in try Self.photos(in: head.sections) {
                        try await source.storeBlob(photo, to: "l", bytes: try #require(blobs[photo.hash]))
                    }
                    try await source.commit(head.sections, to: "l")
                }
                if round == restoreSourceAt {
                    // The source restored in place from a backup older than a push it answered.
                    let backup = directory.file("source.backup")
                    try source.close()
                    try FileManager.default.copyItem(atPath: sourcePath, toPath: backup)
                    source = try Store(path: sourcePath)
                    try await pull(2)
                    try await edit(2)
                    let pushed = try await replicas[2].push(to: NotingClients(base: LocalSource(source), clients: clients))
                    #expect(pushed.pushed > 0)
                    try source.close()
                    try StoreFileFaults.restoreInPlace(sourcePath, from: backup)
                    source = try Store(path: sourcePath)
                    if seed % 2 == 0 { try await source.advanceEpoch() }
                }
                if rng.next() % 12 == 0 {
                    // A rogue client: a push forged under a replica's client id and next sequence
                    // number, and one that skips ahead (refused, applying nothing).
                    let victim = try await replicas[Int(rng.next() % UInt64(replicas.count))].store.clientID()
                    let latest = try await source.pushes(from: victim, to: "l", seqs: 1...Int.max).last?.seq ?? 0
                    let head = try await source.snapshot(of: "l")
                    if let section = head.sections.first {
                        let intent = Intent.insertElement(
                            ItemRef("rogue-\(round)"), content: .null, section: ItemRef(section.model.id), after: nil, before: nil)
                        if latest > 0 {
                            let skipping = Push(id: PushID(client: victim, seq: latest + 3), intents: [intent])
                            await #expect(throws: StoreError.self) { try await source.merge(skipping, into: "l") }
                            #expect(try await source.summary(of: "l").version == head.version)
                        }
                        _ = try await source.merge(Push(id: PushID(client: victim, seq: latest + 1), intents: [intent]), into: "l")
                        forged += 1
                        clients.withLock { _ = $0.insert(victim) }
                    }
                }
            }
            let c = Int(rng.next() % UInt64(replicas.count + 1))
            if c == replicas.count {
                // The source is edited directly (another writer on the server).
                try await source.commit(serverEditor.edit(try await source.snapshot(of: "l").sections), to: "l")
                if faults && rng.next() % 3 == 0 {
                    // The source prunes its history, and with it folds its record of pushes.
                    prunedPushRecords += try await source.prune("l", .keepLast(Int(rng.next() % 4)), force: true).removedPushRecords
                }
                continue
            }
            switch rng.next() % 3 {
            case 0:  // an offline session
                try await edit(c)
            case 1:  // a sync, perhaps losing the answer of a push the source applied
                let lossy = rng.next() % 3 == 0
                let target: any ListSource = lossy ? LosingAnswers(base: LocalSource(source), every: 1) : LocalSource(source)
                do {
                    try await sync(c, through: target)
                } catch let error as SyncError where error.isTransient {
                    lostAnswers += 1
                }
            default:  // a pull only
                try await pull(c)
            }
        }
        // The final round: everyone pushes, then everyone pulls.
        for c in replicas.indices { try await sync(c, through: LocalSource(source)) }
        for c in replicas.indices { try await pull(c) }

        let head = try await source.snapshot(of: "l")
        for (c, replica) in replicas.enumerated() {
            #expect(try await replica.store.snapshot(of: "l").digest == head.digest, "client \(c) differs from the source")
            #expect(try await replica.store.outbox(of: "l").isEmpty)
            try expectValidTransitions(replica.store)
            #expect(try await replica.store.verify().isValid)
        }
        // Every photo the head refers to is at the source, and each replica fetches it whole.
        let photos = try Self.photos(in: head.sections)
        #expect(!photos.isEmpty || Self.rounds < 100)
        for replica in replicas {
            for photo in photos {
                try await replica.fetchBlob(photo, from: LocalSource(source))
                #expect(try await replica.store.readBlob(photo.hash, of: "l", from: 0, maxBytes: photo.size) == blobs[photo.hash])
            }
        }
        // Every push applied once: the source recorded each local change once (and the rogue's).
        var recorded = 0
        for client in clients.withLock({ $0 }) { recorded += try await source.pushes(from: client, to: "l", seqs: 1...Int.max).count }
        // (Those the list made anew dropped were reported instead; those the deleted one held went with it.)
        #expect(recordedBefore + recorded == localChanges.reduce(0, +) - dropped + forged, "\(recorded) pushes recorded")
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
        var reportedIDs = Set(
            reported.filter { $0.kind == .sectionDeleted || $0.kind == .removedWithSection || $0.kind == .listDeleted }.map(\.item.id))
        // A section inserted into a deleted list is reported with its elements (in `mine`).
        for conflict in reported where conflict.kind == .listDeleted {
            guard let mine = conflict.mine, case .insertSection(_, _, let elements, _, _)? = try? Intent.intents(decoding: .array([mine])).first
            else { continue }
            reportedIDs.formUnion(elements.map(\.ref.id))
        }
        for id in (editors + [serverEditor]).flatMap(\.insertedElements) where !present.contains(id) {
            #expect(deleted.contains(id) || known.contains(id) || reportedIDs.contains(id), "\(id) was lost; \(reported.filter { $0.item.id == id })")
        }
        #expect(localChanges.reduce(0, +) > Self.rounds / 10)
        #expect(lostAnswers > 0 || Self.rounds < 100)
        if faults {
            #expect(
                newClientIDs > 0 && forged > 0 && prunedPushRecords > 0 && dropped > 0,
                "the faults were met: \(newClientIDs) new client ids, \(forged) forged pushes, \(prunedPushRecords) push records pruned, \(dropped) changes to a deleted list")
            #expect(reported.filter { $0.kind == .listDeleted }.count >= dropped, "each change to the deleted list is reported")
        }
    }

    /// The blobs the contents of `sections` refer to, each once.
    static func photos(in sections: [ListSection]) throws -> [BlobReference] {
        var found: [ContentHash: BlobReference] = [:]
        for item in sections.flatMap({ [$0.model] + $0.elements }) {
            for photo in try BlobReference.references(in: try item.json) { found[photo.hash] = photo }
        }
        return found.values.sorted { $0.id < $1.id }
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
