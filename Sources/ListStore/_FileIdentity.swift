#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Which file a path names: its device and inode, as `"device:inode"` (decimal). A copy of a file,
/// or a file restored from a backup, is another file; renaming or moving it within a volume keeps
/// it. Stores record it (`store.file_identity`), so its text stays as earlier releases wrote it.
package enum _FileIdentity {
    /// The identity of the file at `path` (a symbolic link's target), or `nil` when it cannot be read.
    /// - Complexity: one `stat` call (a replica asks at each commit it pulls).
    package static func of(_ path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return "\(UInt64(info.st_dev)):\(UInt64(info.st_ino))"
    }
}
