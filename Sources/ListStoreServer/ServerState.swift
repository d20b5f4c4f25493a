import ListStoreCore
import NIOCore

/// What a running `JournalServer` holds, shared by its parts: its connections, waiting requests,
/// port, access rules and counts.
final class ServerState: Sendable {
    /// Open connections, at most `maxConnections`.
    let connections: ConnectionLimiter
    /// Long polls that wait and event streams, at most `maxStreams`.
    let streams: ConnectionLimiter
    /// The reads of list pages, `maxPageReads` at once.
    let pageReads: PageReadTurns
    /// The open connections that hold no request, oldest first.
    let idleConnections = IdleConnections()
    private let boundPort = _Locked(Int?.none)
    private let streamedBytes = _Locked(0)
    private let merging = _Locked(0)
    /// The access configuration in force, and how many times it was replaced.
    private let currentAccess: _Locked<(access: AccessConfiguration?, generation: UInt64)>
    private let cursorSeal = _Locked(FeedCursorSeal?.none)
    private let knownIdentity = _Locked(StoreIdentity?.none)

    /// The store's identity as the head watcher last read it (at most a second old while streams
    /// are open): an event stream that started under another epoch ends.
    var storeIdentity: StoreIdentity? {
        get { knownIdentity.withLock { $0 } }
        set { knownIdentity.withLock { $0 = newValue } }
    }

    /// How many times the head watcher read the store's identity (for tests that count a client's).
    var watcherIdentityReads: Int { identityReads.withLock { $0 } }
    func countIdentityRead() { identityReads.withLock { $0 += 1 } }
    private let identityReads = _Locked(0)

    init(_ configuration: JournalServer.Configuration) {
        connections = ConnectionLimiter(maximum: configuration.effectiveMaxConnections)
        streams = ConnectionLimiter(maximum: configuration.effectiveMaxStreams)
        pageReads = PageReadTurns(maximum: configuration.maxPageReads ?? System.coreCount)
        currentAccess = _Locked((configuration.access, 0))
    }

    /// The port the server is bound to, once known.
    var port: Int? {
        get { boundPort.withLock { $0 } }
        set { boundPort.withLock { $0 = newValue } }
    }

    /// The bytes event streams have written so far (a write counts once it returns).
    var eventBytesWritten: Int { streamedBytes.withLock { $0 } }

    /// Counts `count` bytes written to an event stream.
    func addEventBytes(_ count: Int) {
        streamedBytes.withLock { $0 += count }
    }

    /// The pushes being merged now.
    var mergesInProgress: Int { merging.withLock { $0 } }

    /// Runs `body`, a push's merge, counted among `mergesInProgress` while it runs.
    func countingMerge<T>(_ body: () async throws -> T) async rethrows -> T {
        merging.withLock { $0 += 1 }
        defer { merging.withLock { $0 -= 1 } }
        return try await body()
    }

    /// The seal of the store feed's cursors, once read from the store (see `JournalRoutes.feedSeal()`).
    var feedCursorSeal: FeedCursorSeal? {
        get { cursorSeal.withLock { $0 } }
        set { cursorSeal.withLock { $0 = newValue } }
    }

    /// The access configuration in force (`nil`: the service token alone).
    var access: AccessConfiguration? { currentAccess.withLock { $0.access } }

    /// The access configuration in force and its generation: 0 for the server's configuration, one
    /// more at each replacement. What was decided under a generation holds until it changes.
    var accessInForce: (access: AccessConfiguration?, generation: UInt64) { currentAccess.withLock { $0 } }

    /// The generation of the access configuration in force (see `accessInForce`).
    var accessGeneration: UInt64 { currentAccess.withLock { $0.generation } }

    /// Puts `access` in force, as the next generation.
    func replaceAccess(_ access: AccessConfiguration?) {
        currentAccess.withLock { $0 = (access, $0.generation &+ 1) }
    }
}
