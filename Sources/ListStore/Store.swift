import Foundation
import GRDB
import ListStoreMigrations

/// A file of named, ordered, sectioned lists, each with a journal of staged changesets (SQLite,
/// through GRDB).
///
/// Every commit diffs the new snapshot against the list's head and writes the changed rows and the
/// journal entry in one transaction. Several `Store` values, threads and processes may use one file
/// at once: writers queue behind SQLite's write lock (a losing writer with an expected version gets
/// `.versionConflict`, never "database is locked") and readers see whole commits only.
///
/// ```swift
/// let store = try Store(path: "inbox.liststore")
/// let result = try store.commit([
///     ListSection(model: ListItem(id: "today", json: ["title": "Today"]),
///                 elements: [ListItem(id: "m1", json: ["text": "hi"])]),
/// ], to: "inbox")
/// result.version      // 1
/// try store.snapshot(of: "inbox").sections
/// ```
///
/// The file is created on the first write; reading a store that does not exist throws
/// `.storeNotFound` and creates nothing. A file that is not a ListStore database, or one written by a
/// newer schema, is refused (`.notAStore`, `.unsupportedSchema`) and left untouched; so is anything
/// that is not a regular file (a FIFO or a device is never opened). A store this process may not
/// write (a read-only file, directory or medium) is opened read-only: reads work, writes throw `.io`,
/// and nothing is created beside it. Such a store is read as an immutable file unless a writer has it
/// open (its `-wal` and `-shm` exist), so do not read it this way while another user starts writing.
public final class Store: Sendable {
    /// How a store opens its file.
    public struct Configuration: Sendable {
        /// How long a writer waits for another process's write to finish before giving up.
        public var busyTimeout: Double = 30
        /// Whether each commit is flushed to stable storage (`true`, SQLite `synchronous = FULL`) or
        /// only handed to the operating system (`false`, `NORMAL`). Both survive a killed process;
        /// only `true` survives a power cut.
        public var flushesEachCommit: Bool = true
        /// The most memory, in MiB, SQLite's page cache of each of the store's connections takes
        /// (`PRAGMA cache_size`; taken between 1 MiB and 1 TiB). 16 MiB keeps a replica of a
        /// million elements within a phone's means (ListStoreCore's article "Lists of Any Size");
        /// a server of large lists may give more.
        public var pageCacheMiB: Int = 16
        /// How much room, in MiB, the store keeps from blobs' bytes: no part of a blob (1 MiB) is
        /// written when it would leave less, so that commits, the upload's end or undoing, and
        /// checkpoints still find room. The room is what the disk has free, plus the pages the store
        /// file freed (released blobs, pruned versions), less what the next checkpoint adds to the
        /// file. Such an upload fails with `storageFull` and is given up. An app may keep more for
        /// the rest of the device; 0 turns the check off.
        public var blobRoomKeptMiB: Int = 16

        /// The defaults: 30 s busy timeout, every commit flushed, 16 MiB of page cache, 16 MiB of
        /// disk kept from blobs.
        public init() {}
    }

    /// The path of the store file.
    public let path: String
    let configuration: Configuration
    let state = _Locked(_State())
    /// The snapshots paged reads are read in (`page(of:at:after:maxBytes:)`).
    let pins = _PinnedVersions<DatabaseSnapshot>()
    /// Where async callers open the file and make snapshots, one after another (a serial queue, as
    /// GRDB's own async access uses): that reads the file and may wait for another connection's
    /// lock up to the busy timeout, never on a thread of Swift's cooperative pool.
    let files = DispatchQueue(label: "ListStore.Store.files")

    struct _State {
        var pool: DatabasePool?
        var heads: [String: StoredHead] = [:]
    }

    /// The schema version this release writes.
    public static var schemaVersion: Int { SchemaMigration.all.count }

    /// Opens the store at `path` without creating it: the file is created by the first write.
    ///
    /// - Throws: `StoreError` `.notAStore` (a directory, or a file that is not a ListStore database),
    ///   `.unsupportedSchema` (written by a newer release, or its schema files differ), `.damaged`,
    ///   `.io`. The file is never modified by a failed open.
    public init(path: String, configuration: Configuration = Configuration()) throws {
        self.path = path
        self.configuration = configuration
        if _StoreFile.exists(path) {
            _ = try pool(creating: false)
        }
    }

    /// Opens the store at the file URL `url` without creating it, as `init(path:configuration:)`.
    ///
    /// ```swift
    /// let store = try Store(url: URL.documentsDirectory.appending(path: "mail.liststore"))
    /// ```
    /// - Throws: `StoreError` `.invalidArgument` when `url` is not a file URL; otherwise as
    ///   `init(path:configuration:)`.
    public convenience init(url: URL, configuration: Configuration = Configuration()) throws {
        guard url.isFileURL else {
            throw StoreError(.invalidArgument, "a store is a file: '\(url.absoluteString)' is not a file URL")
        }
        try self.init(path: url.path, configuration: configuration)
    }

    /// Whether the store file exists (it is created by the first write).
    public var exists: Bool { _StoreFile.exists(path) }

    /// The open pool, opening (and with `creating`, creating) the file when needed; `nil` when the
    /// file does not exist and `creating` is false.
    func pool(creating: Bool) throws -> DatabasePool? {
        try state.withLock { state in
            if let pool = state.pool { return pool }
            if !_StoreFile.exists(path) {
                guard creating else { return nil }
                try _StoreFile.create(at: path) { db in try migrate(db, creating: true) }
            }
            try _StoreFile.checkHeader(path, supportedSchema: Store.schemaVersion)
            let readOnly = try _StoreFile.readOnlyLocation(of: path)
            let pool = try Store.mapErrors(path: path) {
                let migrating = try checkMigrationsReadOnly(at: readOnly ?? path)
                if migrating, readOnly != nil {
                    throw StoreError(
                        .io, "the store at \(path) needs this release's schema changes but is read-only for this process; it was left untouched")
                }
                return try openPool(readOnlyAt: readOnly, migrating: migrating)
            }
            state.pool = pool
            return pool
        }
    }

    /// Closes the store's connections to its file now, rather than when the last reference to the
    /// store goes away; the next use of the store opens the file again.
    ///
    /// The last connection to close checkpoints the file and removes its `-wal` and `-shm` side
    /// files, so call this before a process ends with `exit` while work it started may still hold
    /// the store (a command-line tool, say). Closing is never needed for correctness: a process that
    /// ends without it loses nothing committed.
    ///
    /// ```swift
    /// let store = try Store(path: "inbox.liststore")
    /// try store.commit(sections, to: "inbox")
    /// try store.close()
    /// ```
    ///
    /// - Complexity: O(1), plus the checkpoint of what the write-ahead log holds.
    /// - Throws: `StoreError` `.io` when a read or write is still running on another thread; the
    ///   store then stays open.
    public func close() throws {
        // The pool is taken out under the lock and closed outside it: a commit under way takes the
        // lock to keep its head, and closing waits for that commit.
        guard let pool = state.withLock({ state -> DatabasePool? in
            defer { (state.pool, state.heads) = (nil, [:]) }
            return state.pool
        }) else { return }
        // The snapshots of paged reads, a background checkpoint, then the readers: the last
        // connection removes the side files only if it may write. The snapshots' connections (let
        // go of on another queue) and a checkpoint under way (which no longer starts once the pool
        // is out) are closed before this returns: with no read under way, a store closed lets go of
        // its file.
        pins.removeAll()
        _LetGo.waitForEverythingLetGo()
        LogCheckpoints.waitForAll()
        pool.releaseMemory()
        do {
            try Store.mapErrors(path: path) { try pool.close() }
        } catch {
            state.withLock { state in if state.pool == nil { state.pool = pool } }
            throw error
        }
    }

    /// The pool, or `.storeNotFound`.
    func existingPool() throws -> DatabasePool {
        try existing(pool(creating: false))
    }

    /// `existingPool()` for async callers (see `openedPool(creating:)`).
    func existingPool() async throws -> DatabasePool {
        try existing(await openedPool(creating: false))
    }

    /// `pool`, or `.storeNotFound`.
    func existing(_ pool: DatabasePool?) throws -> DatabasePool {
        guard let pool else { throw StoreError(.storeNotFound, "no store at \(path)") }
        return pool
    }

    /// `pool(creating:)` for async callers: the open pool at once; otherwise the file is opened (and
    /// with `creating`, made) on `files`.
    func openedPool(creating: Bool) async throws -> DatabasePool? {
        if let pool = state.withLock({ $0.pool }) { return pool }
        return try await onFiles { try self.pool(creating: creating) }
    }

    /// Runs `work` on `files` and resumes the caller with what it returns or throws.
    func onFiles<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            files.async { continuation.resume(with: Result { try work() }) }
        }
    }

    /// Checks the migration record through a read-only connection, which cannot change the file;
    /// returns whether migrations are pending.
    private func checkMigrationsReadOnly(at location: String) throws -> Bool {
        var config = GRDB.Configuration()
        config.readonly = true
        config.busyMode = .timeout(configuration.busyTimeout)
        let queue = try DatabaseQueue(path: location, configuration: config)
        defer { try? queue.close() }
        return try queue.read { db in try !SQLiteTransaction(self, db).pendingMigrations().isEmpty }
    }

    /// Opens the pool: read-only at `readOnlyLocation` (see `_StoreFile.readOnlyLocation(of:)`) when
    /// this process may not write the store, where every write fails with `.io` and changes nothing.
    private func openPool(readOnlyAt readOnlyLocation: String?, migrating: Bool) throws -> DatabasePool {
        var config = GRDB.Configuration()
        config.readonly = readOnlyLocation != nil
        config.busyMode = .timeout(configuration.busyTimeout)
        config.label = "ListStore"
        let synchronous = configuration.flushesEachCommit ? "FULL" : "NORMAL"
        let cacheKiB = min(max(1, configuration.pageCacheMiB), 1 << 20) * 1024
        let checkpoints = LogCheckpoints(path: path, state: state)
        config.prepareDatabase { db in
            // `secure_delete = FAST`: freed pages are not written again with zeros where that
            // would add writes (SQLite's default is off; some builds, Debian's, turn it on, which
            // made releasing a blob write as many bytes as it released, room a full disk lacks).
            // `journal_size_limit`: once checkpointed, a log that a large write (a bulk import, an
            // upload whose parts outran the checkpoints) grew is cut back to 64 MiB by the next
            // commit instead of keeping that room on the disk.
            try db.execute(
                sql: """
                    PRAGMA synchronous = \(synchronous); PRAGMA cache_size = -\(cacheKiB); \
                    PRAGMA secure_delete = FAST; PRAGMA journal_size_limit = \(LogCheckpoints.keptBytes)
                    """)
            // SQLite's automatic checkpoint gives way to the hook, which does its work too.
            checkpoints.install(on: db.sqliteConnection)
        }
        let pool = try DatabasePool(path: readOnlyLocation ?? path, configuration: config)
        if migrating {
            try pool.writeWithoutTransaction { db in try migrate(db, creating: false) }
        }
        return pool
    }

    // MARK: Migrations

    /// Applies what this release adds (`SQLTransaction.migrate(creating:)`) in an `IMMEDIATE`
    /// transaction: checked again under the write lock, as another process may have done it
    /// meanwhile; with `creating`, a new file becomes a store.
    private func migrate(_ db: Database, creating: Bool) throws {
        try db.inTransaction(.immediate) {
            try SQLiteTransaction(self, db).migrate(creating: creating)
            return .commit
        }
    }

    // MARK: Errors

    /// Runs `body`, turning SQLite errors into `StoreError`s (`storeError(_:path:)`).
    static func mapErrors<T>(path: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch {
            throw storeError(error, path: path)
        }
    }

    /// The `StoreError` for a SQLite error; any other error as it is.
    static func storeError(_ error: any Error, path: String) -> any Error {
        guard let error = error as? DatabaseError else { return error }
        switch error.resultCode {
        case .SQLITE_CORRUPT, .SQLITE_NOTADB:
            return StoreError(.damaged, "the store at \(path) is damaged: \(error.message ?? "\(error.resultCode)")")
        case .SQLITE_READONLY:
            return StoreError(.io, "the store at \(path) is read-only for this process; nothing was written")
        case .SQLITE_FULL:
            return StoreError(.storageFull, "\(path) has no room (\(error.message ?? "database or disk is full")); nothing was written")
        default:
            return StoreError(.io, "the store at \(path) could not be used: \(error.message ?? "\(error.resultCode)")")
        }
    }
}

