import ListDiff
import ListMerge
@_spi(Replication) import ListStore
@_spi(Replication) import ListStoreCore

extension Replica {
    /// Where the replica stands: its source and confirmed version, its local changes, the conflicts
    /// of its last push; `nil` before its first pull.
    ///
    /// ```swift
    /// if let status = try await replica.status(), status.pending > 0 { print(status.pending, "changes to push") }
    /// ```
    /// - Throws: `StoreError` of the replica's store.
    /// - Complexity: O(1) plus the size of the last conflict report.
    public func status() async throws -> ReplicaStatus? {
        do {
            return try await store.replicaStatus(of: list)
        } catch StoreError.Code.listNotFound {
            return nil
        } catch StoreError.Code.storeNotFound {
            return nil
        }
    }

    /// Sends the replica's local changes that were not pushed yet to its source, oldest first, each
    /// with its client id and its sequence number. The source merges each change onto
    /// its head and records its id and fingerprint in the same transaction; an answer lost on the
    /// way leaves the change unmarked here, and the next push sends it again and gets the recorded
    /// answer (`duplicates`), so every change is applied exactly once. The changes stay in the
    /// outbox until a pull finds them in the source's record.
    ///
    /// A replica pushes only to its own source: the store its last pull came from (by UUID; a new
    /// epoch of it is still its source), and the list it follows, by its identity: a change is
    /// never merged into another list that took the name of a deleted one (the source refuses it
    /// with `StoreError.Code.listNotFound`, and the next pull reports it as a `listDeleted`
    /// conflict). When the source has recorded a
    /// change's id for another change (`.pushMismatch`: the replica's file was copied or restored
    /// from a backup, or someone forged a push under its id) or refuses its sequence number
    /// (`.pushOutOfOrder`), the replica takes a new client id for the changes the source has not
    /// answered and pushes them again under it (`clientIDsTaken`), losing and doubling nothing.
    ///
    /// ```swift
    /// try await replica.store.edit("inbox", expectedVersion: nil, author: nil, message: nil) { try $0.append(ListItem(id: "m9"), toSection: ExactString("new")) }   // pending
    /// let pushed = try await replica.push(to: source)
    /// pushed.conflicts      // what the source could not honour as written
    /// ```
    ///
    /// - Throws: `SyncError.refused` (a source that is not the replica's; nothing is sent),
    ///   `SyncError.transport` (the rest stays pending), `StoreError` of either store
    ///   (`.pushMismatch` or `.pushOutOfOrder` when the source refuses a change again under the id it
    ///   was moved to).
    /// - Complexity: per change, the source's merge: O(n + m) for n items and m intents.
    @discardableResult
    public func push(to source: some ListSource, options: PullOptions = PullOptions()) async throws -> PushResult {
        var result = PushResult(list: list, pushed: 0, duplicates: 0, version: nil, conflicts: [])
        guard let position = try await position() else { return result }
        let sourceList = options.sourceList ?? position.list
        try await checkIsSource(source, of: position, sourceList: sourceList)
        // The ids the source refused: each is moved from once (a move always goes to another id, and
        // each refusal needs a record the source holds, so this ends; the cap is for a source that
        // refuses whatever it is sent).
        var refused: Set<PushID> = []
        pushing: while true {
            let outbox = try await store.outbox(of: list)
            for entry in outbox where entry.pushedVersion == nil {
                // Made for the list the replica follows: a source whose list of that name is
                // another list (the followed one was deleted) refuses it (`.listNotFound`).
                var push = entry.push
                push.listID = position.listID
                let answer: PushAnswer
                // The blobs the change refers to go first: the source refuses a change whose
                // list lacks one.
                try await uploadBlobs(of: push, to: source, sourceList: sourceList)
                do {
                    answer = try await source.push(push, to: sourceList)
                } catch let error as StoreError where error.code == .pushMismatch || error.code == .pushOutOfOrder {
                    // The source recorded this id for another change, or the client's numbering
                    // there is not this replica's: the unanswered changes go on under a new id.
                    guard refused.insert(push.id).inserted, refused.count <= outbox.count + 3 else { throw error }
                    _ = try await store.takeNewClientID(for: list, replacing: push.id)
                    result.clientIDsTaken += 1
                    continue pushing
                }
                try await store.recordPushed(answer, client: push.id.client, of: list)
                if answer.duplicate { result.duplicates += 1 } else { result.pushed += 1 }
                result.version = answer.version
                result.conflicts += answer.conflicts
            }
            return result
        }
    }

    /// Pushes the local changes, then pulls: afterwards the replica holds the source's
    /// head with whatever local changes landed meanwhile on top. When the pull finds changes the
    /// source no longer holds a record of (a source restored from a backup), or changes land
    /// meanwhile, it pushes and pulls once more.
    ///
    /// ```swift
    /// let result = try await replica.sync(with: HTTPSource("http://server:8080"))
    /// result.pull.pending    // 0: everything is confirmed
    /// ```
    /// - Throws: what `push(to:options:)` and `pull(from:options:)` throw.
    @discardableResult
    public func sync(with source: some ListSource, options: PullOptions = PullOptions()) async throws -> SyncResult {
        var push = PushResult(list: list, pushed: 0, duplicates: 0, version: nil, conflicts: [])
        do {
            // Nothing to send: no request (the pull checks the source).
            if try await hasChangesToPush() { push = try await self.push(to: source, options: options) }
        } catch SyncError.refused(let message) {
            // Another source: with `replacing`, the pull points the replica at it first, and the
            // changes pending go there with the push after it.
            guard options.replacing else { throw SyncError.refused(message) }
            push = PushResult(list: list, pushed: 0, duplicates: 0, version: nil, conflicts: [])
        } catch let error as StoreError where error.code == .listNotFound {
            // The list the changes were made for is gone at the source: the pull reports them
            // (replaced by another list of the name), or fails as the list is not found.
            guard try await position()?.listID != nil else { throw error }
            push = PushResult(list: list, pushed: 0, duplicates: 0, version: nil, conflicts: [])
        }
        var pull = try await pull(from: source, options: options)
        if pull.pending > 0, let status = try await status(), status.pending > 0 {
            let again = try await self.push(to: source, options: options)
            push.pushed += again.pushed
            push.duplicates += again.duplicates
            push.clientIDsTaken += again.clientIDsTaken
            push.version = again.version ?? push.version
            push.conflicts += again.conflicts
            let first = pull
            pull = try await self.pull(from: source, options: options)
            pull.applied += first.applied
            pull.confirmedChanges += first.confirmedChanges
            pull.conflicts = first.conflicts + pull.conflicts
            if first.resynced { (pull.resynced, pull.reason) = (true, first.reason) }
        }
        return SyncResult(push: push, pull: pull)
    }

    /// Whether the outbox holds a change not pushed yet.
    private func hasChangesToPush() async throws -> Bool {
        do {
            return try await store.outbox(of: list).contains { $0.pushedVersion == nil }
        } catch let error as StoreError where error.code == .listNotFound || error.code == .storeNotFound {
            return false
        }
    }

    /// Throws `SyncError.refused` unless `source` is the store the replica follows (by UUID: a new
    /// epoch of it is still its source) and `sourceList` the list it follows.
    func checkIsSource(_ source: some ListSource, of position: ReplicaSource, sourceList: String) async throws {
        let identity = try await source.identity()
        guard identity.uuid == position.store.uuid else {
            throw SyncError.refused(
                "the source is store \(identity.uuid), but list '\(list)' is a replica of store \(position.store.uuid): a replica pushes only to its own source")
        }
        guard sourceList == position.list else {
            throw SyncError.refused(
                "list '\(list)' is a replica of list '\(position.list)', not '\(sourceList)': a replica pushes only to its own source")
        }
    }

    // MARK: - Pulling with local changes

    /// A pull while local changes are pending: the source's new versions are applied to the
    /// confirmed state in memory (or it resyncs to the source's head); the changes the source now
    /// holds leave the outbox; the rest are rebased onto the new confirmed state; and the result is
    /// committed as one local version, with the new position and outbox, in one transaction. A local
    /// change landing meanwhile makes it start again.
    func pullRebasing(from source: some ListSource, sourceList: String, identity: StoreIdentity, options: PullOptions)
        async throws -> PullResult
    {
        while true {
            guard let state = try await store.pendingState(of: list) else {
                throw SyncError.resyncRequired(.noCursor, message: "list '\(list)' follows no source")
            }
            var confirmed = state.confirmed
            var position = state.position
            var result = PullResult(list: list, version: position.version, digest: "", applied: 0, resynced: false, reason: nil)
            do {
                try await advance(
                    &confirmed, &position, applied: &result.applied, from: source, sourceList: sourceList, identity: identity,
                    options: options)
            } catch let error as SyncError {
                guard options.resyncByDiff, let reason = error.resyncReason else { throw error }
                // The head in pages; the local changes are rebased onto it in memory.
                let staged = try await stagePages(from: source, sourceList: sourceList, identity: identity, reason: reason, options: options)
                confirmed = try await store.stagedSections(of: list)
                try await store.dropStagedSync(of: list)
                let digest = ListDigest.of(confirmed)
                guard digest == staged.sync.digest else {
                    throw SyncError.diverged(version: staged.sync.version, expected: staged.sync.digest, actual: digest)
                }
                position = ReplicaSource(
                    store: identity, list: sourceList, version: staged.sync.version, digest: staged.sync.digest, listID: position.listID)
                result.pages = PagedSyncReport(pages: staged.pages, resumed: staged.resumed, restarted: staged.restarted)
                result.applied += 1
                result.resynced = true
                result.reason = reason
            }
            // Which changes the source holds: those its record of pushes names, with this replica's
            // content (a record of the same id with other content is another replica's change: a
            // copied or restored replica's). The record is asked every time, not taken from the
            // answers this replica heard: a source restored from a backup has lost what it
            // answered then, and those changes are pushed again.
            var recorded: [Int: Int] = [:]
            for (client, seqs) in Self.seqsByClient(state.outbox) {
                var from = seqs.first!
                let last = seqs.last!
                let mine = Dictionary(uniqueKeysWithValues: state.outbox.filter { $0.client == client }.map { ($0.seq, $0.push) })
                while from <= last {
                    let page = try await source.pushes(from: client, to: sourceList, seqs: from...last)
                    for answer in page {
                        guard let push = mine[answer.seq], answer.records(push) else { continue }
                        recorded[answer.seq] = answer.version
                        if state.outbox.first(where: { $0.seq == answer.seq })?.pushedVersion == nil {
                            result.conflicts += answer.conflicts  // an answer this replica did not hear
                        }
                    }
                    guard let next = page.last?.seq, page.count >= 1000 else { break }
                    from = next + 1
                }
            }
            var confirmedSeqs: [Int] = []
            var remaining: [(seq: Int, pushedVersion: Int?)] = []
            var merged = confirmed
            for entry in state.outbox {
                if let version = recorded[entry.seq], version <= position.version {
                    confirmedSeqs.append(entry.seq)
                } else {
                    remaining.append((entry.seq, recorded[entry.seq]))
                    merged = Rebase(entry.intents, onto: merged).snapshot
                }
            }
            let pending = state.outbox.count - confirmedSeqs.count
            let message =
                pending == 0
                ? "pull to source version \(position.version)"
                : "pull to source version \(position.version), \(pending) local change\(pending == 1 ? "" : "s") rebased on top"
            do {
                let (expected, headVersion, conflicts) = (position, state.headVersion, result.conflicts)
                _ = try await store.commitPull(
                    merged, to: list, expectedVersion: headVersion, position: expected, previous: state.position, confirmed: confirmed,
                    confirmedSeqs: confirmedSeqs, remaining: remaining, conflicts: conflicts, message: message
                ) { committed in
                    if pending == 0, committed.digest != expected.digest {
                        throw SyncError.diverged(version: expected.version, expected: expected.digest, actual: committed.digest)
                    }
                }
            } catch StoreError.Code.versionConflict {
                continue  // a local change landed meanwhile: start again with it
            }
            result.version = position.version
            result.digest = position.digest.hex
            result.pending = pending
            result.confirmedChanges = confirmedSeqs.count
            return result
        }
    }

    /// The sequence numbers of `outbox`'s entries by client id, each ascending.
    static func seqsByClient(_ outbox: [OutboxEntry]) -> [(client: String, seqs: [Int])] {
        var order: [String] = []
        var seqs: [String: [Int]] = [:]
        for entry in outbox {
            if seqs[entry.client] == nil { order.append(entry.client) }
            seqs[entry.client, default: []].append(entry.seq)
        }
        return order.map { ($0, seqs[$0]!) }
    }

    /// Applies the source's journal after `position` to `confirmed`, checking each version's digest.
    private func advance(
        _ confirmed: inout [ListSection], _ position: inout ReplicaSource, applied: inout Int,
        from source: some ListSource, sourceList: String, identity: StoreIdentity, options: PullOptions
    ) async throws {
        try await checkFollowable(position, in: source, sourceList: sourceList, identity: identity)
        try await forEachEntry(of: source, sourceList: sourceList, after: position.version, pageSize: options.pageSize) { entry, _ in
            let next: [ListSection]
            do {
                next = try entry.changeset(applyingTo: confirmed).result
            } catch {
                throw SyncError.resyncRequired(.digestMismatch, message: "\(error)")
            }
            let digest = ListDigest.of(next)
            guard digest == entry.digest else {
                throw SyncError.diverged(version: entry.version, expected: entry.digest, actual: digest)
            }
            confirmed = next
            position = ReplicaSource(
                store: identity, list: sourceList, version: entry.version, digest: entry.digest, listID: position.listID)
            applied += 1
        }
    }
}

/// What a push did (`Replica.PushResult`).
public struct ReplicaPushResult: Sendable, Hashable {
    /// The replica's list.
    public var list: String
    /// Local changes the source merged now.
    public var pushed: Int
    /// Local changes the source had merged before (an answer that was lost): answered from its
    /// record, applied nothing.
    public var duplicates: Int
    /// The source version holding the last change pushed (`nil` when there was nothing to push).
    public var version: Int?
    /// The conflicts of the changes pushed, in order.
    public var conflicts: [Conflict]
    /// How many times the replica took a new client id because the source had recorded its id for
    /// another change (a copied or restored replica, a forged push); the changes went on under it.
    public var clientIDsTaken = 0
}

/// What a sync did: its push, then its pull (`Replica.SyncResult`).
public struct ReplicaSyncResult: Sendable, Hashable {
    /// The push.
    public var push: ReplicaPushResult
    /// The pull.
    public var pull: ReplicaPullResult
}
