import Foundation

/// Where the full-disk tests run: the small file system `LISTSTORE_TEST_SMALL_DISK` names
/// (`Tools/small-disk start` mounts a 128 MiB tmpfs and prints its directory; `.ci/run` exports it).
/// Without it the tests are skipped, except in CI (`CI=true`), where `SmallDiskEnvironmentTests`
/// fails unless `.ci/run` said that the machine cannot mount one.
public enum SmallDisk {
    /// The directory of the small file system.
    public static let path: String? = ProcessInfo.processInfo.environment["LISTSTORE_TEST_SMALL_DISK"].flatMap { $0.isEmpty ? nil : $0 }
    /// Whether this is a CI run, where the full-disk tests must run unless `unavailable` says why not.
    public static let inCI = ProcessInfo.processInfo.environment["CI"] == "true"
    /// Why the machine has no small disk, as `.ci/run` says when it cannot mount one.
    public static let unavailable = ProcessInfo.processInfo.environment["LISTSTORE_TEST_SMALL_DISK_UNAVAILABLE"]
    /// Why the tests are skipped.
    public static let reason =
        "LISTSTORE_TEST_SMALL_DISK is not set (to run them, as root: export LISTSTORE_TEST_SMALL_DISK=$(Tools/small-disk start))"

    /// The bytes free on the file system that holds `path`, for this process.
    public static func freeBytes(at path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfFileSystem(forPath: path)
        return (attributes[.systemFreeSize] as? NSNumber)?.intValue ?? 0
    }
}

extension SmallDisk {
    /// A directory of one test on the small disk, removed (with its filler) when the test is done
    /// with it.
    /// - Throws: when `LISTSTORE_TEST_SMALL_DISK` is not set, or the directory cannot be made.
    public static func directory() throws -> TemporaryDirectory {
        guard let path else { throw CocoaError(.fileNoSuchFile, userInfo: [NSLocalizedDescriptionKey: reason]) }
        return try TemporaryDirectory(in: path)
    }
}

extension TemporaryDirectory {
    private var filler: String { file("filler") }

    /// Writes a file of zeros that leaves about `bytes` free on the directory's disk (fewer, when
    /// that many were not free). When the disk fills before the file is written (a process on it,
    /// PostgreSQL's, wrote meanwhile), the file is cut back by `bytes`.
    public func fill(leaving bytes: Int) throws {
        let size = max(0, try SmallDisk.freeBytes(at: path) - bytes)
        guard FileManager.default.createFile(atPath: filler, contents: nil) else { throw CocoaError(.fileWriteUnknown) }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: filler))
        defer { try? handle.close() }
        let chunk = Data(count: 1 << 20)
        var written = 0
        while written < size {
            let piece = min(chunk.count, size - written)
            do {
                try handle.write(contentsOf: chunk.prefix(piece))
            } catch let error as NSError where error.domain == NSCocoaErrorDomain && error.code == CocoaError.fileWriteOutOfSpace.rawValue {
                let end = try handle.seekToEnd()
                try handle.truncate(atOffset: end - min(end, UInt64(bytes)))
                return
            }
            written += piece
        }
    }

    /// Removes the file of zeros `fill(leaving:)` wrote: the disk has room again.
    public func empty() throws { try FileManager.default.removeItem(atPath: filler) }
}
