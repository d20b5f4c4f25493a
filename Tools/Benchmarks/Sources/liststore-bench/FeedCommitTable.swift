/// Where the commits a scenario makes land in the store feed, by their list and the version each
/// gives its list: how `HTTPFollowerPool` (feed mode) tells which commit an event of a user's stream
/// is, now that the journal server seals the cursors it gives users (their `id:` lines hold no
/// position). Made whole before the pool starts and never changed, so that the pool's thread reads
/// it without a lock; a lookup allocates nothing.
///
/// ```swift
/// let table = FeedCommitTable([(list: "users/u7/l3", version: 2, position: 100_012)])
/// let name = Array("users/u7/l3".utf8)
/// name.withUnsafeBufferPointer { table.position(list: $0, version: 2) }   // 100012
/// ```
struct FeedCommitTable: Sendable {
    /// The commits whose key (`key(_:version:)`) is the same, by their index in the arrays below.
    private var candidates: [UInt64: [Int]] = [:]
    private var lists: [[UInt8]] = []
    private var versions: [Int] = []
    private var positions: [Int] = []

    /// The table of `commits`: each its list's name (as the feed's JSON writes it: names here need
    /// no escaping), the version the commit gives the list, and its feed position.
    /// - Complexity: O(total length of the names).
    init(_ commits: [(list: String, version: Int, position: Int)]) {
        for commit in commits {
            let name = Array(commit.list.utf8)
            candidates[name.withUnsafeBufferPointer { Self.key($0, version: commit.version) }, default: []].append(lists.count)
            lists.append(name)
            versions.append(commit.version)
            positions.append(commit.position)
        }
    }

    /// How many commits the table holds.
    var count: Int { positions.count }

    /// The feed position of the commit that gave `list` (its name's UTF-8 bytes) `version`, or nil
    /// when the table holds no such commit.
    /// - Complexity: O(length of the name).
    func position(list: UnsafeBufferPointer<UInt8>, version: Int) -> Int? {
        guard let found = candidates[Self.key(list, version: version)] else { return nil }
        for i in found where versions[i] == version && lists[i].elementsEqual(list) { return positions[i] }
        return nil
    }

    /// FNV-1a of the name's bytes, then of the version's 8 bytes.
    private static func key(_ name: UnsafeBufferPointer<UInt8>, version: Int) -> UInt64 {
        let prime: UInt64 = 0x100_0000_01b3
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in name { hash = (hash ^ UInt64(byte)) &* prime }
        var bits = UInt64(bitPattern: Int64(version))
        for _ in 0..<8 {
            hash = (hash ^ (bits & 0xff)) &* prime
            bits >>= 8
        }
        return hash
    }
}
