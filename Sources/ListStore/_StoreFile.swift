import Foundation
import GRDB

/// The file-level checks and the atomic creation of a store file.
enum _StoreFile {
    /// `PRAGMA application_id` of every ListStore database ("LIST").
    static let applicationID: UInt32 = 0x4C49_5354

    /// Whether something exists at `path`.
    static func exists(_ path: String) -> Bool {
        FileManager.default.fileExists(atPath: path)
    }

    /// Refuses, without opening it through SQLite, a file that is not a ListStore database or was
    /// written by a newer schema.
    /// - Throws: `StoreError` `.notAStore`, `.unsupportedSchema` or `.io`.
    static func checkHeader(_ path: String, supportedSchema: Int) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw StoreError(.storeNotFound, "no store at \(path)")
        }
        if isDirectory.boolValue { throw StoreError(.notAStore, "\(path) is a directory, not a ListStore database") }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw StoreError(.io, "cannot read \(path)")
        }
        defer { try? handle.close() }
        let header: Data
        do {
            header = try handle.read(upToCount: 100) ?? Data()
        } catch {
            throw StoreError(.io, "cannot read \(path): \(error.localizedDescription)")
        }
        let bytes = [UInt8](header)
        guard bytes.count == 100, bytes.starts(with: Array("SQLite format 3\u{0}".utf8)) else {
            throw StoreError(.notAStore, "\(path) is not a ListStore database (not an SQLite file); it was left untouched")
        }
        func bigEndian(at offset: Int) -> UInt32 {
            bytes[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
        }
        guard bigEndian(at: 68) == applicationID else {
            throw StoreError(
                .notAStore, "\(path) is an SQLite database of another application, not a ListStore database; it was left untouched")
        }
        let schema = Int(bigEndian(at: 60))
        guard schema <= supportedSchema else {
            throw StoreError(
                .unsupportedSchema,
                "\(path) has schema version \(schema), newer than this release supports (\(supportedSchema)); it was left untouched")
        }
    }

    /// Creates a migrated, empty store at `path` unless one appears there first; the file appears
    /// complete or not at all (it is built under a temporary name, then linked into place).
    static func create(at path: String, configure: (Database) throws -> Void) throws {
        let directory = (path as NSString).deletingLastPathComponent
        let prefix = ".\((path as NSString).lastPathComponent).creating-"
        removeAbandoned(prefix: prefix, in: directory.isEmpty ? "." : directory)
        let temporary = (directory.isEmpty ? "." : directory) + "/" + prefix + "\(getpid())-\(UUID().uuidString)"
        defer {
            for suffix in ["", "-wal", "-shm", "-journal"] { unlink(temporary + suffix) }
        }
        do {
            var configuration = Configuration()
            configuration.journalMode = .default
            let queue = try DatabaseQueue(path: temporary, configuration: configuration)
            try queue.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA application_id = \(Int32(bitPattern: applicationID))")
                try configure(db)
                try db.execute(sql: "PRAGMA journal_mode = WAL")
            }
            try queue.close()
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(.io, "cannot create a store at \(path): \(error)")
        }
        if link(temporary, path) != 0 && errno != EEXIST {
            throw StoreError(.io, "cannot create a store at \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// Removes files a creation killed midway left behind: `prefix<pid>-<uuid>` whose process is gone.
    private static func removeAbandoned(prefix: String, in directory: String) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        for name in names where name.hasPrefix(prefix) {
            let rest = name.dropFirst(prefix.count)
            guard let dash = rest.firstIndex(of: "-"), let pid = pid_t(rest[..<dash]), pid > 0 else { continue }
            // kill(pid, 0) fails with ESRCH once the process no longer exists.
            guard kill(pid, 0) != 0 && errno == ESRCH else { continue }
            unlink(directory + "/" + name)
        }
    }
}
