import Foundation
import GRDB
import GRDBSQLite
@_spi(StoreDriver) @_spi(Replication) @_spi(FeedCursors) import ListStoreCore

// Where the store's logic runs on SQLite: every public method opens one of these transactions and
// calls the logic (`StoreTransaction`, in ListStoreCore) with a `SQLiteTransaction`.
//
// - The blocking methods run on the calling thread, as GRDB's synchronous `read` and `write` do.
// - The async methods use GRDB's async access: the work runs on GRDB's own dispatch queues (a
//   reader, or the pool's one writer), never on Swift's cooperative thread pool, and the calling
//   task is resumed when it is done. Only opening the file (the first use of a `Store` whose file
//   did not exist when it was made, or the first after `close()`) runs on the calling thread. Writes through one `Store` run one after another on its
//   writer; other `Store`s and processes queue behind SQLite's write lock.
// - Cancellation: a task cancelled before its work starts throws `CancellationError` and nothing
//   is read or written; cancelled while it runs, GRDB interrupts the statement SQLite runs, the
//   store's logic checks before a commit's first write and between verified entries, and the
//   transaction is rolled back with `CancellationError` (a commit already writing lands). A commit
//   lands whole or not at all, and the caller learns which.

extension Store: StoreDriver, BlockingStore {
    /// Runs `body` in one transaction with GRDB's async access, off the cooperative thread pool:
    /// `.read` on one of GRDB's readers, `.write` and `.create` in an `IMMEDIATE` transaction on the
    /// store's writer (`.create` making the store file first when there is none).
    /// - Throws: what `body` throws; SQLite's failures as `StoreError`; `CancellationError`.
    /// - Complexity: that of `body`, plus one transaction.
    @_spi(StoreDriver)
    public func transaction<T: Sendable>(
        _ access: StoreAccess, _ body: @escaping @Sendable (DriverTransaction) throws -> T
    ) async throws -> T {
        switch access {
        case .read, .readBytes: return try await reading(caching: access == .read) { try body(DriverTransaction($0)) }
        case .write, .create, .writeUnflushed, .writeBytes:
            return try await writing(creating: access == .create, flushed: access == .write || access == .create, caching: access != .writeBytes) {
                try body(DriverTransaction($0))
            }
        }
    }

    /// `transaction(_:_:)` on the calling thread, as GRDB's synchronous `read` and `write`.
    /// - Throws: what `body` throws; SQLite's failures as `StoreError`.
    /// - Complexity: that of `body`, plus one transaction.
    @_spi(StoreDriver)
    public func blockingTransaction<T>(_ access: StoreAccess, _ body: (DriverTransaction) throws -> T) throws -> T {
        switch access {
        case .read, .readBytes: return try reading(caching: access == .read) { try body(DriverTransaction($0)) }
        case .write, .create, .writeUnflushed, .writeBytes:
            return try writing(creating: access == .create, flushed: access == .write || access == .create, caching: access != .writeBytes) {
                try body(DriverTransaction($0))
            }
        }
    }

    @_spi(Replication) public func localCommitGeneration() -> UInt64 {
        commitGeneration()
    }

    @_spi(Replication) public func waitForLocalCommit(unlessGenerationIsNot generation: UInt64, timeout: Duration) async {
        await waitForCommit(after: generation, timeout: timeout)
    }
}

extension Store {
    /// Runs `body` in a read transaction on one of GRDB's readers, on the calling thread; unless
    /// `caching`, the reader's page cache is let go once it holds more than `bytesCacheBytes`
    /// (`StoreAccess.readBytes`).
    /// - Throws: `.storeNotFound`; what `body` throws, mapped as `mapErrors` does.
    func reading<T>(caching: Bool = true, _ body: (SQLiteTransaction) throws -> T) throws -> T {
        let pool = try existingPool()
        return try Store.mapErrors(path: path) {
            try pool.read { db in try Store.releasingPages(db, unless: caching) { try body(SQLiteTransaction(self, db)) } }
        }
    }

    /// Runs `body` in a read transaction on one of GRDB's readers, off the cooperative thread pool.
    /// - Throws: as the blocking `reading`, and `CancellationError`.
    func reading<T: Sendable>(caching: Bool = true, _ body: @Sendable (SQLiteTransaction) throws -> T) async throws -> T {
        try Task.checkCancellation()
        let pool = try await existingPool()
        do {
            return try await pool.read { db in try Store.releasingPages(db, unless: caching) { try body(SQLiteTransaction(self, db)) } }
        } catch {
            throw Store.asyncError(error, path: path)
        }
    }

    /// `body`, after which, unless `caching`, connection `db` lets go of every page in its cache
    /// that no transaction uses (`sqlite3_db_release_memory`) once they take more than
    /// `bytesCacheBytes`: a blob's parts pass through without filling the cache, and the pages of
    /// the parts before are reused as they come (rather than allocated and freed part by part).
    /// The connection's other pages go too, and are read again when needed.
    static func releasingPages<T>(_ db: Database, unless caching: Bool, _ body: () throws -> T) rethrows -> T {
        defer {
            if !caching {
                var (used, highest): (Int32, Int32) = (0, 0)
                sqlite3_db_status(db.sqliteConnection, SQLITE_DBSTATUS_CACHE_USED, &used, &highest, 0)
                if used > bytesCacheBytes { sqlite3_db_release_memory(db.sqliteConnection) }
            }
        }
        return try body()
    }

    /// How many bytes of pages a connection may keep from reads and writes of blobs' bytes.
    static let bytesCacheBytes: Int32 = 4 << 20

    /// Runs `body` in `snapshot`'s read transaction, off the cooperative thread pool.
    /// - Throws: as the async `reading`.
    func reading<T: Sendable>(in snapshot: DatabaseSnapshot, _ body: @Sendable (SQLiteTransaction) throws -> T) async throws -> T {
        try Task.checkCancellation()
        do {
            return try await snapshot.read { db in try body(SQLiteTransaction(self, db)) }
        } catch {
            throw Store.asyncError(error, path: path)
        }
    }

    /// Runs `body` in one `IMMEDIATE` transaction on the store's writer connection, on the calling
    /// thread, committed when it returns and rolled back when it throws; then keeps the heads it
    /// wrote and tells of the commit. With `creating`, makes the store first when there is none.
    /// - Throws: `.storeNotFound` (without `creating`), what `body` throws, mapped as `mapErrors` does.
    func writing<T>(creating: Bool = false, flushed: Bool = true, caching: Bool = true, _ body: (SQLiteTransaction) throws -> T) throws -> T {
        let pool = try writable(pool(creating: creating), creating: creating)
        let (value, transaction) = try Store.mapErrors(path: path) {
            try pool.writeWithoutTransaction { db in try Store.releasingPages(db, unless: caching) { try Store.immediate(db, self, flushed: flushed, body) } }
        }
        committed(transaction)
        return value
    }

    /// `writing` on the store's writer connection, off the cooperative thread pool.
    /// - Throws: as the blocking `writing`, and `CancellationError`.
    func writing<T: Sendable>(
        creating: Bool = false, flushed: Bool = true, caching: Bool = true, _ body: @Sendable (SQLiteTransaction) throws -> T
    ) async throws -> T {
        try Task.checkCancellation()
        let pool = try writable(await openedPool(creating: creating), creating: creating)
        let value: T
        let transaction: SQLiteTransaction.Outcome
        do {
            (value, transaction) = try await pool.writeWithoutTransaction { db in
                try Store.releasingPages(db, unless: caching) { try Store.immediate(db, self, flushed: flushed, body) }
            }
        } catch {
            throw Store.asyncError(error, path: path)
        }
        committed(transaction)
        return value
    }

    /// The error of an async access: `CancellationError` for a statement SQLite interrupted because
    /// the task was cancelled, otherwise as `storeError(_:path:)`.
    private static func asyncError(_ error: any Error, path: String) -> any Error {
        if Task.isCancelled, let error = error as? DatabaseError, error.resultCode == .SQLITE_INTERRUPT { return CancellationError() }
        return storeError(error, path: path)
    }

    private func writable(_ pool: DatabasePool?, creating: Bool) throws -> DatabasePool {
        if pool == nil, creating { throw StoreError(.io, "cannot create a store at \(path)") }
        return try existing(pool)
    }

    /// Runs `body` in an `IMMEDIATE` transaction of `db`: what it returns, and what the store keeps
    /// of the transaction once committed. Unless `flushed`, a store that flushes each commit does
    /// not flush this one (`synchronous = NORMAL` for it: the next flushed commit makes it durable,
    /// the write-ahead log being written in order).
    private static func immediate<T>(
        _ db: Database, _ store: Store, flushed: Bool, _ body: (SQLiteTransaction) throws -> T
    ) throws -> (T, SQLiteTransaction.Outcome) {
        guard flushed || !store.configuration.flushesEachCommit else { return try immediate(db, store, body) }
        try db.execute(sql: "PRAGMA synchronous = NORMAL")
        let result = Result { try immediate(db, store, body) }
        try db.execute(sql: "PRAGMA synchronous = FULL")
        return try result.get()
    }

    private static func immediate<T>(
        _ db: Database, _ store: Store, _ body: (SQLiteTransaction) throws -> T
    ) throws -> (T, SQLiteTransaction.Outcome) {
        var result: (T, SQLiteTransaction.Outcome)?
        try db.inTransaction(.immediate) {
            let transaction = SQLiteTransaction(store, db)
            result = (try body(transaction), transaction.outcome)
            return .commit
        }
        return result!
    }

    /// From how many elements a head the store stops keeping is released on another thread.
    private static let largeHead = 4_096

    /// After a committed transaction: keeps the heads it wrote, and when it changed a list, tells
    /// of the commit (`LogCheckpoints` checkpoints the write-ahead log after every commit).
    private func committed(_ outcome: SQLiteTransaction.Outcome) {
        let replaced = state.withLock { state in
            outcome.newHeads.compactMap { list, head in state.heads.updateValue(head, forKey: list) }
        }
        // The heads replaced are let go of elsewhere when they are large: releasing a head's
        // items one by one would hold up the writer (and the next commit) on its own.
        if replaced.contains(where: { $0.elementPositions.count >= Self.largeHead }) {
            _LetGo.later(replaced)
        }
        if outcome.changed { CommitSignal.shared.notify(path: path) }
    }
}
