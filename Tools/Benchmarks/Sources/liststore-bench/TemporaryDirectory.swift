import Foundation

/// A new, empty directory under the system's temporary directory, for store and SQLite files that a
/// run creates; `remove()` deletes it with everything in it.
struct TemporaryDirectory {
    let path: String

    /// Creates `<tmp>/liststore-bench-<label>-<uuid>`.
    init(label: String) throws {
        let base = FileManager.default.temporaryDirectory.path
        path = base + "/liststore-bench-\(label)-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
    }

    /// The path of `name` in the directory.
    func file(_ name: String) -> String {
        path + "/" + name
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}
