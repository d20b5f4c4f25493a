import Foundation

/// Which file a path names: its device and inode, as `"device:inode"`. A copy of a file, or a file
/// restored from a backup, is another file; renaming or moving it within a volume keeps it.
package enum _FileIdentity {
    /// The identity of the file at `path` (a symbolic link's target), or `nil` when it cannot be read.
    package static func of(_ path: String) -> String? {
        let file = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: file),
              let device = (attributes[.systemNumber] as? NSNumber)?.uint64Value,
              let inode = (attributes[.systemFileNumber] as? NSNumber)?.uint64Value
        else { return nil }
        return "\(device):\(inode)"
    }
}
