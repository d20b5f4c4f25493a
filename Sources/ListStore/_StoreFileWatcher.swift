#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation

/// Tells `CommitSignal` of commits other processes make to the store files this process waits on,
/// as they land: on Linux, inotify watches the directories of those files, and a write to a store's
/// write-ahead log (`<file>-wal`, which every commit appends to) signals the file. A signal is a
/// hint, like every other: waiters read the head and wait again when nothing is new.
///
/// A commit's last write to the log comes before readers can see it: SQLite then syncs the log
/// (`synchronous = FULL`: milliseconds on a real disk) and publishes the commit in its
/// shared-memory index (`<file>-shm`), which raises no notification. So each write is signalled at
/// once and again 1, 3, 7, 15 and 31 ms after the last write of a burst. (The index is never opened
/// here: closing a descriptor of a file releases every POSIX lock the process holds on it, SQLite's
/// locks on the index included.) A lost watch (the directory deleted or moved, the event queue
/// overflowing) signals its files and is forgotten, so the next wait watches again; where inotify
/// is not available (`shared` is `nil`; other platforms), followers poll.
///
/// One inotify descriptor for the process, read by a thread of its own (never a thread of the
/// cooperative pool); a directory is watched from the first wait on a file in it for as long as it
/// exists (a few hundred bytes of kernel memory each). Paths are resolved (symbolic links too), as
/// SQLite resolves them.
///
/// ```swift
/// let watched = _StoreFileWatcher.shared?.watch("/data/mail.liststore") ?? false
/// ```
package final class _StoreFileWatcher: Sendable {
    /// The process's watcher; `nil` where file notifications are not available.
    package static let shared: _StoreFileWatcher? = _StoreFileWatcher()

    #if os(Linux)
    private struct Watched {
        /// The store file's `CommitSignal` key.
        var key: String
    }

    private struct Settling {
        /// The step of the next repeat.
        var step: Int
        /// Whether a write came since the last repeat (the repeats then start over).
        var written: Bool
    }

    private struct State {
        /// Per watched directory (by watch descriptor): the log names in it, and their files.
        var watches: [Int32: [String: Watched]] = [:]
        /// The store files watched (their keys), and whether the watch succeeded.
        var files: [String: Bool] = [:]
        /// The files whose signal is being repeated after a write.
        var settling: [String: Settling] = [:]
        /// Whether the reading thread runs.
        var reading = true
    }

    private let descriptor: Int32
    private let state = _Locked(State())
    private let settleQueue = DispatchQueue(label: "liststore.file-watcher.settle")
    /// The delays between a write and the repeats of its signal, in milliseconds (each after the one
    /// before).
    private static let repeats = [1, 2, 4, 8, 16]

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

    /// Watches the store file at `path` (its `CommitSignal` key) from now on: a commit of another
    /// process that lands after this call signals it. Returns whether it is watched (a directory that
    /// cannot be watched is not: its followers poll).
    /// - Complexity: O(1) once the file is watched.
    @discardableResult
    package func watch(_ path: String) -> Bool {
        #if os(Linux)
        let key = CommitSignal.key(path)
        if let watched = state.withLock({ $0.files[key] }) { return watched }
        let real = Self.resolved(key)
        let url = URL(fileURLWithPath: real)
        let directory = url.deletingLastPathComponent().path
        let log = url.lastPathComponent + "-wal"
        let mask = UInt32(IN_MODIFY) | UInt32(IN_MOVED_TO) | UInt32(IN_CREATE)
        // Under the lock, so that an event of the new watch finds its name, and two first waits on
        // one directory add it once.
        return state.withLock { state -> Bool in
            if let watched = state.files[key] { return watched }
            guard state.reading else { return false }
            let wd = inotify_add_watch(descriptor, directory, mask)
            if wd >= 0 { state.watches[wd, default: [:]][log] = Watched(key: key) }
            state.files[key] = wd >= 0
            return wd >= 0
        }
        #else
        return false
        #endif
    }

    #if os(Linux)
    /// `path` with its symbolic links resolved (its directory's, when the file is not there yet).
    private static func resolved(_ path: String) -> String {
        if let real = realpath(path, nil) {
            defer { free(real) }
            return String(cString: real)
        }
        let url = URL(fileURLWithPath: path)
        guard let directory = realpath(url.deletingLastPathComponent().path, nil) else { return path }
        defer { free(directory) }
        return URL(fileURLWithPath: String(cString: directory)).appendingPathComponent(url.lastPathComponent).path
    }

    /// Reads events for as long as the process runs, signalling the files they name.
    private func readEvents() {
        let capacity = 64 * 1024
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 8)
        defer { buffer.deallocate() }
        let header = MemoryLayout<inotify_event>.size
        while true {
            let count = read(descriptor, buffer, capacity)
            if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
            guard count > 0 else {
                // Nothing will be heard any more: every file counts as not watched, and polls.
                let lost = state.withLock { state -> [Watched] in
                    state.reading = false
                    state.files = [:]
                    defer { state.watches = [:] }
                    return state.watches.values.flatMap(\.values)
                }
                signal(lost)
                return
            }
            var offset = 0
            var events: [(wd: Int32, mask: UInt32, name: String)] = []
            while offset + header <= count {
                let wd = buffer.loadUnaligned(fromByteOffset: offset, as: Int32.self)
                let mask = buffer.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
                let length = Int(buffer.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                let nameStart = buffer.advanced(by: offset + header).assumingMemoryBound(to: UInt8.self)
                let name = String(decoding: UnsafeBufferPointer(start: nameStart, count: length).prefix { $0 != 0 }, as: UTF8.self)
                events.append((wd, mask, name))
                offset += header + length
            }
            let written = state.withLock { state -> [Watched] in
                var written: [String: Watched] = [:]
                for event in events {
                    if event.mask & UInt32(IN_Q_OVERFLOW) != 0 {
                        // Events were dropped: any file may have been written.
                        for watched in state.watches.values.flatMap(\.values) { written[watched.key] = watched }
                    } else if event.mask & UInt32(IN_IGNORED) != 0 {
                        // The watch is gone (its directory was deleted or moved): its files are
                        // signalled, and watched anew by their next wait.
                        for watched in (state.watches.removeValue(forKey: event.wd) ?? [:]).values {
                            written[watched.key] = watched
                            state.files[watched.key] = nil
                        }
                    } else if let watched = state.watches[event.wd]?[event.name] {
                        written[watched.key] = watched
                    }
                }
                return Array(written.values)
            }
            signal(written)
        }
    }

    /// Signals the files now, and repeats it after each of `repeats` (starting over at a new write).
    private func signal(_ files: [Watched]) {
        guard !files.isEmpty else { return }
        var starting: [Watched] = []
        for file in files {
            let running = state.withLock { state -> Bool in
                if state.settling[file.key] != nil {
                    state.settling[file.key]!.written = true
                    return true
                }
                state.settling[file.key] = Settling(step: 0, written: false)
                return false
            }
            if !running { starting.append(file) }
            CommitSignal.shared.notify(path: file.key)
        }
        for file in starting { repeatSignal(file, after: Self.repeats[0]) }
    }

    /// Signals `file` in `milliseconds`, then goes on with the next repeat.
    private func repeatSignal(_ file: Watched, after milliseconds: Int) {
        settleQueue.asyncAfter(deadline: .now() + .milliseconds(milliseconds)) { [self] in
            let next = state.withLock { state -> Int? in
                guard var settling = state.settling[file.key] else { return nil }
                settling.step = settling.written ? 0 : settling.step + 1
                settling.written = false
                guard settling.step < Self.repeats.count else {
                    state.settling[file.key] = nil
                    return nil
                }
                state.settling[file.key] = settling
                return Self.repeats[settling.step]
            }
            CommitSignal.shared.notify(path: file.key)
            if let next { repeatSignal(file, after: next) }
        }
    }
    #endif
}
