import Foundation

extension Store {
    /// The store file's path.
    public var location: String { path }

    /// The generation of the commits the process learned of for the store file: its own, and on
    /// Linux other processes' through file notifications (inotify; elsewhere readers poll for them).
    /// The first call for a file starts watching its directory, so that a commit landing after it
    /// moves the generation.
    public func commitGeneration() -> UInt64 {
        _StoreFileWatcher.shared?.watch(path)
        return CommitSignal.shared.generation(of: path)
    }

    /// Returns after a commit to the store file (this process's, or on Linux another's, as a file
    /// notification tells of it), after `timeout`, or when the task is cancelled.
    public func waitForCommit(after generation: UInt64, timeout: Duration) async {
        _StoreFileWatcher.shared?.watch(path)
        await CommitSignal.shared.wait(path: path, unlessGenerationIsNot: generation, timeout: timeout)
    }

    /// The store file's size with its `-wal` and `-shm` files.
    /// - Throws: `StoreError` `.io` when the store file cannot be read (`stat`).
    public func sizeInBytes() async throws -> Int {
        var status = stat()
        guard stat(path, &status) == 0 else {
            throw StoreError(.io, "cannot read the size of \(path): \(String(cString: strerror(errno)))")
        }
        return _StoreFile.companions(of: path).reduce(Int(status.st_size)) { total, companion in
            var status = stat()
            return total + (stat(companion.path, &status) == 0 ? Int(status.st_size) : 0)
        }
    }
}
