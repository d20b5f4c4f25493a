import Foundation
import ListJSON

/// A list's row as an engine reads it: its id, head and base.
///
/// Not API: package-visible, so that both engines check versions and decode the base snapshot with
/// the same code.
package struct ListRow: Sendable {
    package var id: Int64
    package var name: String
    /// The list's identity: made when the list is created, never reused (`ListSummary.id`).
    package var uid: String
    package var headVersion: Int
    package var headDigest: ListDigest
    package var baseVersion: Int
    package var baseSnapshot: [UInt8]?

    package init(
        id: Int64, name: String, uid: String, headVersion: Int, headDigest: ListDigest, baseVersion: Int, baseSnapshot: [UInt8]?
    ) {
        self.id = id
        self.name = name
        self.uid = uid
        self.headVersion = headVersion
        self.headDigest = headDigest
        self.baseVersion = baseVersion
        self.baseSnapshot = baseSnapshot
    }

    /// A new list's identity: a random UUID, lowercase.
    package static func newUID() -> String { UUID().uuidString.lowercased() }

    /// Throws `.versionNotFound` unless `version` is in the retained history.
    package func checkRetained(_ version: Int) throws {
        guard version >= baseVersion, version <= headVersion else {
            throw StoreError(
                .versionNotFound,
                "version \(version) of list '\(name)' is not in its history (versions \(baseVersion) to \(headVersion))")
        }
    }

    /// The snapshot at the base version.
    /// - Throws: `.damaged` when the stored document does not decode.
    package func baseSections() throws -> [ListSection] {
        guard let bytes = baseSnapshot else { return [] }
        return try Self.sections(of: bytes, "the base snapshot of list '\(name)'")
    }

    /// The sections of a snapshot document the store kept (`what` names it in the error).
    /// - Throws: `.damaged` when it does not decode.
    package static func sections(of document: [UInt8], _ what: @autoclosure () -> String) throws -> [ListSection] {
        do {
            return try SnapshotDocument.sections(decoding: try JSONParser().parse(document))
        } catch {
            throw StoreError(.damaged, "\(what()) does not decode: \(error)")
        }
    }
}
