import Foundation
import ListDiff
import ListDiffTestSupport
import ListStore

/// A directory that is removed when the value goes away.
public final class TemporaryDirectory: Sendable {
    public let path: String

    /// A new directory in `parent` (the system's temporary directory by default).
    public init(in parent: String = FileManager.default.temporaryDirectory.path) throws {
        path = URL(fileURLWithPath: parent).appendingPathComponent("liststore-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    /// A path inside the directory.
    public func file(_ name: String) -> String { path + "/" + name }

    /// A new directory in memory (`/dev/shm` where there is one), for a test that writes many
    /// megabytes and flushes them: on a disk, a burst like that holds up the flushes of every other
    /// test (a PostgreSQL server sharing the disk stopped answering for half a minute in CI).
    public static func inMemory() throws -> TemporaryDirectory {
        var isDirectory: ObjCBool = false
        let memory = FileManager.default.fileExists(atPath: "/dev/shm", isDirectory: &isDirectory) && isDirectory.boolValue
        return try memory ? TemporaryDirectory(in: "/dev/shm") : TemporaryDirectory()
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

extension ListItem {
    /// A test item whose content is the JSON number `content`.
    public init(_ id: String, _ content: Int = 0) {
        self.init(id: id, content: Array(String(content).utf8))
    }
}

/// Converts the diff tests' random snapshots into store snapshots (contents become JSON numbers).
public func listSections(_ snapshot: TestSnapshot) -> [ListSection] {
    snapshot.map { section in
        ListSection(
            model: ListItem(section.model.id, section.model.content),
            elements: section.elements.map { ListItem($0.id, $0.content) })
    }
}

/// `count` elements "e0", "e1", … (contents `content`, `content + 1`, …) in one section "s".
public func linearList(_ count: Int, prefix: String = "e", content: Int = 0) -> [ListSection] {
    [ListSection(model: ListItem("s"), elements: (0..<count).map { ListItem("\(prefix)\($0)", $0 + content) })]
}

/// What happens to store files outside the store, for tests of copied and restored stores.
public enum StoreFileFaults {
    /// Writes the bytes of `backup` into the file at `path` itself (the same device and inode), as a
    /// restore that overwrites a file in place does; the file's WAL and shared-memory files go. The
    /// store must be closed.
    public static func restoreInPlace(_ path: String, from backup: String) throws {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: backup))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: bytes)
        try handle.close()
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    /// The file's device and inode numbers, as `stat` tells them.
    public static func fileNumbers(_ path: String) throws -> [NSNumber?] {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return [attributes[.systemNumber] as? NSNumber, attributes[.systemFileNumber] as? NSNumber]
    }
}

/// Reads blob `hash` of `list` whole from `store`, in reads of at most `step` bytes.
public func readWholeBlob(_ hash: ContentHash, of list: String, in store: any ListStoreEngine, step: Int = 1 << 20) async throws -> [UInt8] {
    var bytes = [UInt8]()
    while true {
        let piece = try await store.readBlob(hash, of: list, from: bytes.count, maxBytes: step)
        bytes += piece
        if piece.count < step { return bytes }
    }
}
