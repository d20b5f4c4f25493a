#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Tells `CommitSignal` of commits other processes make to the store files this process waits on,
/// as they land: on Linux, inotify watches the directories of those files, and a write to a store
/// file or to its write-ahead log (`<file>-wal`, which every commit appends to) signals the file.
/// A signal is a hint, like every other: waiters read the head and wait again when nothing is new
/// (a checkpoint writing the file wakes them for nothing). A commit's last write to the log comes
/// just before readers can see it (SQLite then syncs the log and publishes it in its shared-memory
/// index, which raises no notification), so each signal is repeated 1 ms and 5 ms later. Where inotify is not available
/// (`shared` is `nil`; other platforms), followers poll.
///
/// One inotify descriptor for the process, read by a thread of its own (never a thread of the
/// cooperative pool); a directory is watched from the first wait on a file in it for as long as the
/// process runs (a few hundred bytes of kernel memory each).
///
/// ```swift
/// let watched = _StoreFileWatcher.shared?.watch("/data/mail.liststore") ?? false
/// ```
package final class _StoreFileWatcher: Sendable {
    /// The process's watcher; `nil` where file notifications are not available.
    package static let shared: _StoreFileWatcher? = _StoreFileWatcher()

    #if os(Linux)
    private let descriptor: Int32
    /// Per watched directory (by its watch descriptor): the names in it that signal, and the store
    /// file each one signals.
    private let watches = _Locked([Int32: [String: String]]())
    /// The store files watched (their `CommitSignal` keys), and whether the watch succeeded.
    private let files = _Locked([String: Bool]())
    /// The store files whose signal is to be repeated.
    private let repeating = _Locked(Set<String>())

    private init?() {
        let descriptor = inotify_init1(Int32(IN_CLOEXEC))
        guard descriptor >= 0 else { return nil }
        self.descriptor = descriptor
        let thread = Thread { [self] in readEvents() }
        thread.name = "liststore-file-watcher"
        thread.start()
    }
    #else
    private init?() { return nil }
    #endif

    /// Watches the store file at `path` (its `CommitSignal` key) from now on; returns whether it is
    /// watched (a directory that cannot be watched is not: its followers poll).
    /// - Complexity: O(1) once the file is watched.
    @discardableResult
    package func watch(_ path: String) -> Bool {
        #if os(Linux)
        let key = CommitSignal.key(path)
        if let watched = files.withLock({ $0[key] }) { return watched }
        let url = URL(fileURLWithPath: key)
        let directory = url.deletingLastPathComponent().path
        let name = url.lastPathComponent
        let mask = UInt32(IN_MODIFY) | UInt32(IN_MOVED_TO) | UInt32(IN_CREATE)
        return files.withLock { files -> Bool in
            if let watched = files[key] { return watched }
            // Under `files`' lock, so that two first waits on one directory add it once.
            let wd = inotify_add_watch(descriptor, directory, mask)
            let watched = wd >= 0
            if watched {
                watches.withLock { watches in
                    watches[wd, default: [:]][name] = key
                    watches[wd, default: [:]][name + "-wal"] = key
                }
            }
            files[key] = watched
            return watched
        }
        #else
        return false
        #endif
    }

    #if os(Linux)
    /// Reads events for as long as the process runs, signalling the files they name.
    private func readEvents() {
        let capacity = 64 * 1024
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 8)
        defer { buffer.deallocate() }
        let header = MemoryLayout<inotify_event>.size
        while true {
            let count = read(descriptor, buffer, capacity)
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                return
            }
            var keys = Set<String>()
            var offset = 0
            let watches = watches.withLock { $0 }
            while offset + header <= count {
                let wd = buffer.loadUnaligned(fromByteOffset: offset, as: Int32.self)
                let length = Int(buffer.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                let nameStart = buffer.advanced(by: offset + header).assumingMemoryBound(to: UInt8.self)
                let nameBytes = UnsafeBufferPointer(start: nameStart, count: length)
                let name = String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)
                if let key = watches[wd]?[name] { keys.insert(key) }
                offset += header + length
            }
            for key in keys { CommitSignal.shared.notify(path: key) }
            let fresh = repeating.withLock { repeating in keys.filter { repeating.insert($0).inserted } }
            guard !fresh.isEmpty else { continue }
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(1)) {
                for key in fresh { CommitSignal.shared.notify(path: key) }
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(5)) { [repeating] in
                repeating.withLock { $0.subtract(fresh) }
                for key in fresh { CommitSignal.shared.notify(path: key) }
            }
        }
    }
    #endif
}
