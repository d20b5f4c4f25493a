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
    /// written by a newer schema. Only regular files are read: a FIFO, a device or a socket at
    /// `path` (or at its `-wal` or `-shm`) is refused before anything could block on it.
    /// - Throws: `StoreError` `.notAStore`, `.unsupportedSchema` or `.io`.
    static func checkHeader(_ path: String, supportedSchema: Int) throws {
        var status = stat()
        guard stat(path, &status) == 0 else {
            if errno == ENOENT { throw StoreError(.storeNotFound, "no store at \(path)") }
            throw StoreError(.io, "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        if status.st_mode & S_IFMT == S_IFDIR { throw StoreError(.notAStore, "\(path) is a directory, not a ListStore database") }
        for (file, mode) in [(path, status.st_mode)] + companions(of: path) where mode & S_IFMT != S_IFREG {
            throw StoreError(.notAStore, "\(file) is not a regular file, so \(path) is not a ListStore database; it was left untouched")
        }
        // O_NONBLOCK: should a FIFO appear at `path` after the check, opening it does not wait for a
        // writer; the descriptor's own status is checked again.
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { throw StoreError(.io, "cannot read \(path): \(String(cString: strerror(errno)))") }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            throw StoreError(.notAStore, "\(path) is not a regular file, not a ListStore database; it was left untouched")
        }
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

    /// The store's `-wal` and `-shm` files that exist, with their modes (`stat`, links followed).
    static func companions(of path: String) -> [(path: String, mode: mode_t)] {
        ["-wal", "-shm"].compactMap { suffix in
            var status = stat()
            return stat(path + suffix, &status) == 0 ? (path + suffix, status.st_mode) : nil
        }
    }

    /// How SQLite should open an existing store that this process may not write to, or `nil` when it
    /// may (the file and a place for its `-wal` and `-shm` are writable).
    ///
    /// SQLite would create a missing `-shm` even for a read-only connection, with the store file's
    /// own (read-only) mode, and that file would break later writers; so a store without a pending
    /// write-ahead log is opened as immutable (no `-shm`, no locks), and one whose `-wal` and `-shm`
    /// exist (a writer has it open) reads through them read-only.
    /// - Throws: `.io` when the store has a write-ahead log to recover that only a writer can merge.
    static func readOnlyLocation(of path: String) throws -> String? {
        let directory = (path as NSString).deletingLastPathComponent
        let writable = { (file: String) in access(file, W_OK) == 0 }
        let wal = path + "-wal"
        let shm = path + "-shm"
        var walStatus = stat()
        let walSize = stat(wal, &walStatus) == 0 ? Int(walStatus.st_size) : nil
        let shmExists = exists(shm)
        let companionsWritable = walSize != nil && shmExists && writable(wal) && writable(shm)
        if writable(path) && (writable(directory.isEmpty ? "." : directory) || companionsWritable) { return nil }
        switch (walSize ?? 0, shmExists) {
        case (0, _):
            return uri(path) + "?immutable=1"
        case (_, true):
            return path
        case (_, false):
            throw StoreError(
                .io,
                "the store at \(path) is read-only for this process and has a write-ahead log that only a writer can merge; open it once with write access")
        }
    }

    /// An SQLite `file:` URI naming `path`.
    private static func uri(_ path: String) -> String {
        let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
        var escaped = ""
        for character in absolute.unicodeScalars {
            switch character {
            case "%": escaped += "%25"
            case "?": escaped += "%3f"
            case "#": escaped += "%23"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return "file:" + escaped
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
