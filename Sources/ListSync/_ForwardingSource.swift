import ListDiff
import ListStore

/// A source that hands every request to `base`, except those its type implements itself: for
/// wrappers that watch or change a few requests (the command line's sync noting its pushes, sources
/// that fail on purpose in tests). A follow (`commits(of:after:pageSize:wait:)`) goes to `base` too,
/// so a wrapper that changes `journal` pages sees pulls, not follows. Not API (package-visible).
package protocol _ForwardingSource: ListSource {
    /// The source requests go to.
    var base: any ListSource { get }
}

extension _ForwardingSource {
    package func identity() async throws -> StoreIdentity { try await base.identity() }

    package func summary(of list: String) async throws -> ListSummary { try await base.summary(of: list) }

    package func journal(of list: String, after version: Int, limit: Int) async throws -> JournalPage {
        try await base.journal(of: list, after: version, limit: limit)
    }

    package func snapshot(of list: String, at version: Int?) async throws -> ListSnapshot {
        try await base.snapshot(of: list, at: version)
    }

    package func page(of list: String, at version: Int?, after cursor: ListPage.Cursor?, maxBytes: Int) async throws -> ListPage {
        try await base.page(of: list, at: version, after: cursor, maxBytes: maxBytes)
    }

    package func catchUp(of list: String, from version: Int, applyingTo state: [ListSection]) async throws
        -> (changeset: ListChangeset, head: ListSnapshot)
    {
        try await base.catchUp(of: list, from: version, applyingTo: state)
    }

    package func waitForCommit(to list: String, after version: Int, timeout: Duration) async throws -> Bool {
        try await base.waitForCommit(to: list, after: version, timeout: timeout)
    }

    package func commits(of list: String, after version: Int, pageSize: Int, wait: Duration)
        -> AsyncThrowingStream<JournalEntry, any Error>
    {
        base.commits(of: list, after: version, pageSize: pageSize, wait: wait)
    }

    package func acknowledge(consumer name: String, of list: String, version: Int) async throws {
        try await base.acknowledge(consumer: name, of: list, version: version)
    }

    package func push(_ push: Push, to list: String) async throws -> PushAnswer { try await base.push(push, to: list) }

    package func pushes(from client: String, to list: String, seqs: ClosedRange<Int>) async throws -> [PushAnswer] {
        try await base.pushes(from: client, to: list, seqs: seqs)
    }

    package func upstreamStore(of list: String) async throws -> StoreIdentity? { try await base.upstreamStore(of: list) }

    package func blob(_ hash: ContentHash, of list: String) async throws -> BlobStatus? { try await base.blob(hash, of: list) }

    package func readBlob(_ hash: ContentHash, of list: String, from offset: Int, maxBytes: Int) async throws -> [UInt8] {
        try await base.readBlob(hash, of: list, from: offset, maxBytes: maxBytes)
    }

    @discardableResult
    package func storeBlob<Bytes: AsyncSequence>(_ reference: BlobReference, to list: String, from bytes: Bytes, startingAt offset: Int)
        async throws -> BlobStatus where Bytes.Element == [UInt8]
    {
        try await base.storeBlob(reference, to: list, from: bytes, startingAt: offset)
    }
}
