/// A list's head as an engine keeps it in memory between commits: for every section and element,
/// its id, content hash and row (section row id / position), and no content: a commit diffs,
/// replays stages and makes its digest from these, and reads contents from rows only where it
/// needs them (about 64 bytes per element beside the id's own).
///
/// Not API: package-visible for the engines, which read it from their tables and give it to
/// `CommitPlan` and `CommitRows`.
package struct StoredHead: Sendable {
    package var listID: Int64
    package var version: Int
    package var digest: ListDigest
    /// The ids and content hashes, as sections of items that bring no content.
    package var sections: [HeadSection]
    package var sectionRows: [Int64]
    package var sectionPositions: [Int64]
    /// Element positions, flat: section after section, in order.
    package var elementPositions: [Int64]
    /// The pairing hash of every element's identifier, flat, as the diff pairs them (valid in this
    /// process only: `PairingHashSeed.process` is drawn per process); `nil` until a diff needs them.
    package var elementIDHashes: [Int]?
    /// Whether every item has its content's fingerprint (a head a commit made in this process; not
    /// one read from rows).
    package var fingerprinted: Bool
    /// The sections whose elements were not read (a head read in part for a replayed entry, by an
    /// engine that keeps element records): they hold no elements here, and have no element positions
    /// among `elementPositions`. Empty for a whole head, the only kind an engine keeps in memory.
    package var unloadedSections: Set<Int> = []

    /// A list that has no version yet.
    package static let empty = StoredHead(
        listID: 0, version: 0, digest: ListDigest.of([]), sections: [], sectionRows: [], sectionPositions: [],
        elementPositions: [], elementIDHashes: nil, fingerprinted: false)
}
