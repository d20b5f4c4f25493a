#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import GRDB
import ListStoreCore

// A full disk stops a blob's upload before it fills the disk: its parts are written only while the
// store keeps room for what must still be written (commits, the upload's end or undoing, and the
// checkpoints that copy the write-ahead log into the file).

extension SQLiteTransaction {
    /// Throws `.storageFull` when writing `count` bytes of a blob would leave the store with less
    /// room than `Store.Configuration.blobRoomKeptMiB`. Its room: what the file system has free for
    /// this process (`statvfs`'s available blocks), plus the store file's free pages (reused before
    /// the file grows), less what the next checkpoint adds to the file (pages the write-ahead log
    /// holds beyond the file's end). Nothing when it cannot tell (SQLite's own "disk is full" stops
    /// the store then, if ever).
    /// - Complexity: two system calls and three pragmas that read the file's header.
    func ensureRoom(forBlobBytes count: Int) throws {
        let kept = Int64(min(max(0, store.configuration.blobRoomKeptMiB), 1 << 30)) << 20
        guard kept > 0 else { return }
        var (disk, file) = (statvfs(), stat())
        guard statvfs(store.path, &disk) == 0, stat(store.path, &file) == 0 else { return }
        let free = UInt64(disk.f_bavail).multipliedReportingOverflow(by: UInt64(disk.f_frsize))
        guard !free.overflow, free.partialValue < UInt64(Int64.max >> 1) else { return }
        let pageSize = Int64(try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 0)
        let pages = Int64(try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0)
        let freePages = Int64(try Int.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0)
        let growth = max(0, pages * pageSize - Int64(file.st_size))
        let room = Int64(free.partialValue) + freePages * pageSize - growth
        guard room < kept + Int64(max(0, count)) else { return }
        throw StoreError(
            .storageFull,
            "no room for a blob's bytes on the disk of \(store.path), which keeps \(kept >> 20) MiB of room for other writes; nothing was written")
    }
}
