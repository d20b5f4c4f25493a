/// A list's head as the store keeps it in memory between commits: the snapshot plus, for every
/// section and element, its row (section id / position) and content hash.
struct _Head: Sendable {
    var listID: Int64
    var version: Int
    var digest: ListDigest
    var sections: [ListSection]
    var sectionRows: [Int64]
    var sectionPositions: [Int64]
    var sectionHashes: [ContentHash]
    /// Element positions and hashes, flat: section after section, in order.
    var elementPositions: [Int64]
    var elementHashes: [ContentHash]
    /// `differenceIdentifier.hashValue` of every element, flat, as the diff pairs them (valid in this
    /// process only: Swift seeds its hashes per process); `nil` until a diff needs them.
    var elementIDHashes: [Int]?

    /// A list that has no version yet.
    static let empty = _Head(
        listID: 0, version: 0, digest: ListDigest.of([]), sections: [], sectionRows: [], sectionPositions: [],
        sectionHashes: [], elementPositions: [], elementHashes: [], elementIDHashes: nil)
}
