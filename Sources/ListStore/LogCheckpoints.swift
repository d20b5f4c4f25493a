import Foundation
import GRDB
import GRDBSQLite

/// When a store's write-ahead log (`<path>-wal`) is copied back into the file. SQLite's WAL hook
/// tells, after each commit of one of the store's connections, how many frames (pages, with their
/// headers) the log holds since it last started again from its beginning:
///
/// - each time it holds `backgroundFrames` (1,024: about 4 MiB) more than when the last one was
///   queued, a passive checkpoint runs on a background queue through a connection of its own,
///   which takes no write lock, so that neither this commit nor the next waits for it (a reader
///   that holds the log keeps it from starting again: the count since the last checkpoint, not
///   since the start, keeps each commit from queueing one of its own then);
/// - past `ownFrames` (10,000), the committing connection checkpoints the log itself, as SQLite's
///   automatic checkpoint does (a hook of one's own replaces it): the backstop when the background
///   checkpoints fall behind.
///
/// The frames, not the log file's size: the file keeps its size once the log starts again (up to
/// `journal_size_limit`), and a size past 4 MiB once made every later commit open a connection to
/// checkpoint a log that held one commit (in `liststore-bench replay-1k`, about four commits in
/// five).
final class LogCheckpoints: Sendable {
    /// The frames past which a commit checkpoints the log in the background.
    static let backgroundFrames: Int32 = 1024
    /// The frames past which the committing connection checkpoints the log itself.
    static let ownFrames: Int32 = 10_000

    /// The size to which the first commit after a checkpoint cuts a larger write-ahead log back
    /// (`journal_size_limit`): 64 MiB, above SQLite's own checkpoint at 10,000 pages (40 MiB), so
    /// that the log of ordinary work (commits and blobs' parts, checkpointed in the background or
    /// at 10,000 pages) is overwritten rather than cut and grown again (a limit of 4 MiB made
    /// uploads about a tenth slower, one of 16 MiB a few hundredths), and only a larger write (a
    /// bulk import, an upload whose parts outran the checkpoints) gives its room back.
    static let keptBytes = 64 << 20

    private let path: String
    /// Whether the store is open: a store closed meanwhile is not opened again (a file deleted or
    /// restored meanwhile is not made again). It holds the store's state weakly: the state holds
    /// the pool, which holds this object.
    private let isOpen: @Sendable () -> Bool
    /// Whether a background checkpoint is queued or running, and the frames the log held when the
    /// last one was queued. Not the store's state: the hook runs inside commits, and some commits
    /// (a migration's) run with the state's lock held.
    private let running = _Locked((queued: false, frames: Int32(0)))

    init(path: String, state: _Locked<Store._State>) {
        self.path = path
        self.isOpen = { [weak state] in state?.withLock { $0.pool != nil } ?? false }
    }

    /// Installs the hook on `connection`. The hook holds this object unretained: the pool's
    /// `prepareDatabase`, which holds it, outlives every connection of the pool.
    func install(on connection: SQLiteConnection?) {
        sqlite3_wal_hook(connection, logHook, Unmanaged.passUnretained(self).toOpaque())
    }

    /// After a commit of `connection` that left `frames` in the log of `database`.
    fileprivate func committed(frames: Int32, connection: SQLiteConnection?, database: UnsafePointer<CChar>?) {
        if frames >= Self.ownFrames {
            // What SQLite's automatic checkpoint does; a reader that holds the log leaves it to the
            // next commit.
            _ = sqlite3_wal_checkpoint(connection, database)
        } else if frames >= Self.backgroundFrames {
            startInBackground(frames: frames)
        }
    }

    /// Queues a passive checkpoint unless one is queued or running, or the log grew by less than
    /// `backgroundFrames` since the last one was queued: a reader that holds the log (a paged
    /// read's snapshot) keeps it from starting again, and each commit would otherwise queue a
    /// checkpoint (and open a connection) to copy its own few pages.
    private func startInBackground(frames: Int32) {
        let start = running.withLock { running -> Bool in
            // Fewer frames than at the last one: the log started again since.
            if frames < running.frames { running.frames = 0 }
            guard !running.queued, frames - running.frames >= Self.backgroundFrames else { return false }
            running = (true, frames)
            return true
        }
        guard start else { return }
        let (path, isOpen, running) = (self.path, self.isOpen, self.running)
        Self.queue.async {
            defer { running.withLock { $0.queued = false } }
            // `close()` waits for a checkpoint that started before (`waitForAll()`).
            guard isOpen() else { return }
            var configuration = GRDB.Configuration()
            configuration.journalMode = .default
            guard let queue = try? DatabaseQueue(path: path, configuration: configuration) else { return }
            _ = try? queue.writeWithoutTransaction { db in try db.checkpoint(.passive) }
            try? queue.close()
        }
    }

    /// Where background checkpoints run, one after another (one queue per process), never on
    /// Swift's cooperative thread pool.
    private static let queue = DispatchQueue(label: "ListStore.checkpoint", qos: .utility)

    /// Returns once the background checkpoints queued before the call have run.
    static func waitForAll() {
        queue.sync {}
    }
}

/// SQLite's WAL hook (`sqlite3_wal_hook`): `context` is the `LogCheckpoints` of the connection.
private func logHook(context: UnsafeMutableRawPointer?, connection: SQLiteConnection?, database: UnsafePointer<CChar>?, frames: Int32) -> Int32 {
    guard let context else { return SQLITE_OK }
    Unmanaged<LogCheckpoints>.fromOpaque(context).takeUnretainedValue().committed(frames: frames, connection: connection, database: database)
    return SQLITE_OK
}
