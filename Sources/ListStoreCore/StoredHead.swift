/// A list's head as an engine keeps it in memory between commits: the snapshot plus, for every
/// section and element, its row (section id / position) and content hash.
///
/// Not API: package-visible for the engines, which read it from their tables and give it to
/// `CommitPlan` and `CommitRows`.
package struct StoredHead: Sendable {
    package var listID: Int64
    package var version: Int
    package var digest: ListDigest
    package var sections: [ListSection]
    package var sectionRows: [Int64]
    package var sectionPositions: [Int64]
    package var sectionHashes: [ContentHash]
    /// Element positions and hashes, flat: section after section, in order.
    package var elementPositions: [Int64]
    package var elementHashes: [ContentHash]
    /// The pairing hash of every element's identifier, flat, as the diff pairs them (valid in this
    /// process only: `PairingHashSeed.process` is drawn per process); `nil` until a diff needs them.
    package var elementIDHashes: [Int]?

    /// A list that has no version yet.
    package static let empty = StoredHead(
        listID: 0, version: 0, digest: ListDigest.of([]), sections: [], sectionRows: [], sectionPositions: [],
        sectionHashes: [], elementPositions: [], elementHashes: [], elementIDHashes: nil)
}
