import ListJSON
import ListStore

/// A list's row: its id, head and base.
struct _ListInfo: Sendable {
    var id: Int64
    var name: String
    var headVersion: Int
    var headDigest: ListDigest
    var baseVersion: Int
    var baseSnapshot: [UInt8]?

    /// Throws `.versionNotFound` unless `version` is in the retained history.
    func checkRetained(_ version: Int) throws {
        guard version >= baseVersion, version <= headVersion else {
            throw StoreError(
                .versionNotFound,
                "version \(version) of list '\(name)' is not in its history (versions \(baseVersion) to \(headVersion))")
        }
    }

    /// The snapshot at the base version.
    /// - Throws: `.damaged` when the stored document does not decode.
    func baseSections() throws -> [ListSection] {
        guard let bytes = baseSnapshot else { return [] }
        do {
            return try SnapshotDocument.sections(decoding: try JSONParser().parse(bytes))
        } catch {
            throw StoreError(.damaged, "the base snapshot of list '\(name)' does not decode: \(error)")
        }
    }
}
