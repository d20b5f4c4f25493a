#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ListStoreCore

// A full disk stops a blob's upload before it fills the disk: its parts are written only while the
// file system keeps room for what must still be written (commits, the upload's end or undoing, and
// the checkpoints that copy the write-ahead log into the file).

extension SQLiteTransaction {
    /// Throws `.storageFull` when writing `count` bytes would leave the file system that holds the
    /// store with less than `Store.Configuration.blobRoomKeptMiB` free for this process
    /// (`statvfs`'s available blocks); nothing when it cannot tell (SQLite's own "disk is full"
    /// stops the store then, if ever).
    /// - Complexity: one system call.
    func ensureRoom(forBlobBytes count: Int) throws {
        let kept = UInt64(min(max(0, store.configuration.blobRoomKeptMiB), 1 << 30)) << 20
        guard kept > 0 else { return }
        var stats = statvfs()
        guard statvfs(store.path, &stats) == 0 else { return }
        let free = UInt64(stats.f_bavail).multipliedReportingOverflow(by: UInt64(stats.f_frsize))
        guard !free.overflow, free.partialValue < kept + UInt64(max(0, count)) else { return }
        throw StoreError(
            .storageFull,
            "no room for a blob's bytes on the disk of \(store.path), which keeps \(kept >> 20) MiB of room for other writes; nothing was written")
    }
}
