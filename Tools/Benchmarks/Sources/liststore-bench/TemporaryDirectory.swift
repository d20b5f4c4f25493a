import Foundation

/// A new, empty directory under the system's temporary directory, for the store and SQLite files that
/// a run creates; it is deleted, with everything in it, by `remove()` or when the last reference goes
/// away.
final class TemporaryDirectory {
    let path: String

    /// Creates `<tmp>/liststore-bench-<label>-<uuid>`.
    init(label: String) throws {
        let base = FileManager.default.temporaryDirectory.path
        path = base + "/liststore-bench-\(label)-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
    }

    deinit {
        remove()
    }

    /// Deletes the directory now.
    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// The path of `name` in the directory.
    func file(_ name: String) -> String {
        path + "/" + name
    }
}
