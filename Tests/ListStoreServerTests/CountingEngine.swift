import ListStore
@_spi(FeedCursors) import ListStoreCore

/// A store that counts the journal pages read through it (`journal(of:after:limit:maxBytes:)`), the
/// feed pages (`feed(after:limit:including:)`) and
/// the identity reads (`identity()`), for tests of how many reads a server makes; everything else
/// goes to `store` unchanged. With `signalsOwnCommits`, the server learns only of the commits made
/// through this engine, once each (not of the file notifications' repeats), as an engine without
/// them (PostgreSQL) tells of its commits.
final class CountingEngine: ListStoreEngine {
    let store: Store
    private let reads = _Locked(0)
    private let identities = _Locked(0)
    private let feeds = _Locked(0)
    private let signal: CommitSignal?

    init(_ store: Store, signalsOwnCommits: Bool = false) {
        self.store = store
        signal = signalsOwnCommits ? CommitSignal() : nil
    }

    /// The journal pages read so far.
    var journalReads: Int { reads.withLock { $0 } }
    /// The feed pages read so far.
    var feedReads: Int { feeds.withLock { $0 } }
    /// The identity reads so far.
    var identityReads: Int { identities.withLock { $0 } }

    var location: String { store.location }
    /// Journal reads wait at it while it is closed (for tests of what happens meanwhile).
    let journalGate = Gate()

    /// A gate tasks pass while it is open, and wait at while it is closed.
    final class Gate: Sendable {
        private let state = _Locked<(open: Bool, waiting: [CheckedContinuation<Void, Never>])>((true, []))

        /// Returns at once while the gate is open, else when it opens.
        func pass() async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let open = state.withLock { state -> Bool in
                    if !state.open { state.waiting.append(continuation) }
                    return state.open
                }
                if open { continuation.resume() }
            }
        }

        func close() { state.withLock { $0.open = false } }

        func open() {
            let waiting = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.open = true
                defer { state.waiting = [] }
                return state.waiting
            }
            for continuation in waiting { continuation.resume() }
        }

        /// How many tasks wait at the gate.
        var waitingCount: Int { state.withLock { $0.waiting.count } }
    }

    /// When set, `identity()` fails as a store that does not answer.
    let identityFails = _Locked(false)

    func advanceEpoch() async throws -> StoreIdentity { try await store.advanceEpoch() }

    func identity() async throws -> StoreIdentity {
        identities.withLock { $0 += 1 }
        if identityFails.withLock({ $0 }) { throw StoreError(.io, "the database does not answer") }
        return try await store.identity()
    }
    func lists() async throws -> [ListSummary] { try await store.lists() }
    func summary(of list: String) async throws -> ListSummary { try await store.summary(of: list) }
    func snapshot(of list: String, at version: Int?) async throws -> ListSnapshot { try await store.snapshot(of: list, at: version) }

    /// When set, `feed(after:limit:including:)` fails as a store that does not answer.
    let feedFails = _Locked(false)
    /// What the reads of the feed throw while it is set.
    let feedError = _Locked<StoreError?>(nil)

    func feed(
        after position: Int?, fingerprint: Int64?, limit: Int, including: @escaping @Sendable (String) -> Bool
    ) async throws -> FeedPage {
        feeds.withLock { $0 += 1 }
        if feedFails.withLock({ $0 }) { throw StoreError(.io, "the database does not answer") }
        if let error = feedError.withLock({ $0 }) { throw error }
        return try await store.feed(after: position, fingerprint: fingerprint, limit: limit, including: including)
    }

    func feedSecret() async throws -> [UInt8] { try await store.feedSecret() }
    /// How many of the next reads of the feed's moves fail as a store that does not answer.
    let feedMovesFailures = _Locked(0)
    /// The reads of the feed's moves that failed (`feedMovesFailures`).
    let failedFeedMoves = _Locked(0)

    func feedMoves(after position: Int?, limit: Int) async throws -> (moves: [FeedMove], last: Int) {
        let fails = feedMovesFailures.withLock { left in
            defer { left = max(0, left - 1) }
            return left > 0
        }
        if fails {
            failedFeedMoves.withLock { $0 += 1 }
            throw StoreError(.unavailable, "the database does not answer")
        }
        return try await store.feedMoves(after: position, limit: limit)
    }

    func deleteList(_ list: String, discardingPending: Bool) async throws -> Int {
        try await store.deleteList(list, discardingPending: discardingPending)
    }

    func journal(of list: String, after version: Int?, limit: Int, maxBytes: Int) async throws -> JournalPage {
        reads.withLock { $0 += 1 }
        await journalGate.pass()
        return try await store.journal(of: list, after: version, limit: limit, maxBytes: maxBytes)
    }

    func journal(of list: String, after version: Int?, limit: Int, maxBytes: Int, maxEntryBytes: Int) async throws -> JournalPage {
        reads.withLock { $0 += 1 }
        await journalGate.pass()
        return try await store.journal(of: list, after: version, limit: limit, maxBytes: maxBytes, maxEntryBytes: maxEntryBytes)
    }

    func page(of list: String, at version: Int?, after cursor: ListPage.Cursor?, maxBytes: Int) async throws -> ListPage {
        try await store.page(of: list, at: version, after: cursor, maxBytes: maxBytes)
    }

    func changeset(of list: String, from version: Int, to otherVersion: Int?) async throws
        -> (from: ListSnapshot, to: ListSnapshot, changeset: ListChangeset)
    {
        try await store.changeset(of: list, from: version, to: otherVersion)
    }

    func commit(
        _ sections: [ListSection], to list: String, expectedVersion: Int?, author: String?, message: String?
    ) async throws -> CommitResult {
        let result = try await store.commit(sections, to: list, expectedVersion: expectedVersion, author: author, message: message)
        signal?.notify(path: location)
        return result
    }

    func edit(
        _ list: String, expectedVersion: Int?, author: String?, message: String?,
        _ body: @escaping @Sendable (inout ListDraft<ListItem, ListItem>) throws -> Void
    ) async throws -> CommitResult {
        try await store.edit(list, expectedVersion: expectedVersion, author: author, message: message, body)
    }

    func merge(_ push: Push, into list: String) async throws -> PushAnswer { try await store.merge(push, into: list) }
    func merge(_ push: Push, into list: String, authoredBy author: String?) async throws -> PushAnswer {
        try await store.merge(push, into: list, authoredBy: author)
    }
    func pushes(from client: String, to list: String, seqs: ClosedRange<Int>) async throws -> [PushAnswer] {
        try await store.pushes(from: client, to: list, seqs: seqs)
    }
    func registerConsumer(_ name: String, of list: String, at version: Int?) async throws -> ConsumerInfo {
        try await store.registerConsumer(name, of: list, at: version)
    }
    func acknowledge(consumer name: String, of list: String, version: Int) async throws -> ConsumerInfo {
        try await store.acknowledge(consumer: name, of: list, version: version)
    }
    func unregisterConsumer(_ name: String, of list: String) async throws -> Bool {
        try await store.unregisterConsumer(name, of: list)
    }
    func consumers(of list: String) async throws -> [ConsumerInfo] { try await store.consumers(of: list) }
    func prune(_ list: String, _ rule: PruneRule, force: Bool) async throws -> PruneResult {
        try await store.prune(list, rule, force: force)
    }
    func verify(list: String?, progress: (@Sendable (VerificationProgress) -> Void)?) async throws -> VerificationReport {
        try await store.verify(list: list, progress: progress)
    }
    func commitGeneration() -> UInt64 { signal?.generation(of: location) ?? store.commitGeneration() }
    func sizeInBytes() async throws -> Int { try await store.sizeInBytes() }

    func blob(_ hash: ContentHash, of list: String) async throws -> BlobStatus? { try await store.blob(hash, of: list) }
    @discardableResult
    func storeBlob<Bytes: AsyncSequence>(_ reference: BlobReference, to list: String, from bytes: Bytes, startingAt offset: Int) async throws
        -> BlobStatus where Bytes.Element == [UInt8]
    {
        try await store.storeBlob(reference, to: list, from: bytes, startingAt: offset)
    }
    func readBlob(_ hash: ContentHash, of list: String, from offset: Int, maxBytes: Int) async throws -> [UInt8] {
        try await store.readBlob(hash, of: list, from: offset, maxBytes: maxBytes)
    }

    func waitForCommit(after generation: UInt64, timeout: Duration) async {
        if let signal {
            await signal.wait(path: location, unlessGenerationIsNot: generation, timeout: timeout)
        } else {
            await store.waitForCommit(after: generation, timeout: timeout)
        }
    }
}
