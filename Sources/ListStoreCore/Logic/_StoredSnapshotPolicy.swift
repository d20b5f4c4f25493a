/// When a commit also stores the snapshot of the list at its new version, so that time
/// travel replays at most the distance from the nearest stored point (a stored snapshot or the base)
/// instead of the whole history.
///
/// Replaying one version costs about its stage bytes plus the elements of the sections it touches;
/// reading a stored point costs about the snapshot's size. A commit stores a snapshot when, since
/// the newest stored point, at least `minVersions` versions were committed and either
/// `maxVersions` were or their stages hold as many bytes as `bytesPerElement` per element of the
/// list (about a snapshot's size). So:
/// - a time travel replays at most `maxVersions` versions, or fewer holding about one snapshot of
///   stages;
/// - a list stores at most one snapshot per `minVersions` versions, and more than one per
///   `maxVersions` versions only while its journal grows by `bytesPerElement` bytes per element
///   between them (a snapshot of elements of up to 64 bytes then takes no more than that journal).
///
/// Not API: package-visible, so that both engines store snapshots alike.
package enum _StoredSnapshotPolicy {
    package static let minVersions = 16
    package static let maxVersions = 128
    package static let bytesPerElement = 64

    /// Whether the commit of `version`, with `bytesSince` bytes of stages (its own included) since
    /// the newest stored point at `pointVersion`, stores a snapshot of the `elementCount` elements.
    package static func isDue(version: Int, pointVersion: Int, bytesSince: Int, elementCount: Int) -> Bool {
        let versions = version - pointVersion
        guard versions >= minVersions else { return false }
        return versions >= maxVersions || bytesSince >= bytesPerElement * max(elementCount, 1)
    }
}
