import Crypto
import ListStore

/// The replay-1k input: a 10,000-element list and 1,000 successive versions, each changing 1% of it.
///
/// Docs/Benchmarks.md names the scenario; its input is specified here, in the terms of that page's
/// "How the inputs are made", so that another implementation can reproduce it:
///
/// - SplitMix64 seeded base + 5 (`seedOffset`).
/// - Version 0: 10 sections ("s<j>", j), section j holding ("e<g>", g) for g = j·1000 + i, i in 0..<1000.
/// - Version v (1…1000) from version v−1: flat = every element, section after section, in order;
///   pick = partialFY(flat.count, 75) mapped through flat. pick[0..<25] are deleted, pick[25..<50] get
///   content + 1, pick[50..<75] move: the deleted and the movers are removed, then for each mover in
///   pick order dest = bounded(10) and it is inserted into section dest at bounded(dest.count + 1);
///   then for k in 0..<25 the new element ("n<v>.<k>", −1 − (25·(v−1) + k)) is inserted the same way
///   (dest = bounded(10), then the index). 100 changes per version; the list keeps 10,000 elements.
/// - Fingerprint: FNV-1a 64 (sectioned form) of version 0, the byte 0xFF, then version 1000.
///
/// Every element also carries a row position for the raw SQLite baseline, which keeps its own
/// positions the way a program storing an ordered list in SQLite would: version 0 at i·2^32 in each
/// section; a row inserted (or moved) between two neighbours goes halfway between them, after the last
/// one at +2^32, before the first at −2^32, and never at a position that a row deleted or moved away in
/// the same version held (so the baseline can change row keys in any order). `advance()` returns the
/// row writes of each version in those positions.
struct ReplayInput {
    static let seedOffset: UInt64 = 5
    static let sectionCount = 10
    static let sectionSize = 1_000
    static let versionCount = 1_000
    /// Per version: deleted, updated, moved and inserted elements.
    static let changesPerKind = 25
    /// The distance between the baseline's version-0 positions.
    static let positionSpacing: Int64 = 1 << 32
    /// FNV-1a 64 of version 0, 0xFF, version 1000; checked so that the input cannot change unnoticed.
    static let expectedFingerprint = "99ac38cf7b9bad7b"

    /// One element with its baseline row position.
    struct Row {
        var item: Item
        var listItem: ListItem
        var position: Int64
    }

    /// The rows one version writes in the baseline's table (sections numbered from 0 here).
    struct RowWrites {
        struct Update {
            var section: Int
            var position: Int64
            var content: [UInt8]
            var hash: [UInt8]
        }
        struct Move {
            var fromSection: Int
            var fromPosition: Int64
            var toSection: Int
            var toPosition: Int64
        }
        struct Insert {
            var section: Int
            var position: Int64
            var id: [UInt8]
            var content: [UInt8]
            var hash: [UInt8]
        }
        var deletes: [(section: Int, position: Int64)] = []
        var moves: [Move] = []
        var updates: [Update] = []
        var inserts: [Insert] = []

        var count: Int { deletes.count + moves.count + updates.count + inserts.count }
    }

    private var random = SplitMix64(seed: SplitMix64.baseSeed + seedOffset)
    let models: [Item]
    private(set) var rows: [[Row]]
    /// The version `rows` holds (0 before the first `advance()`).
    private(set) var version = 0

    /// Version 0.
    init() {
        models = (0..<Self.sectionCount).map { Item("s\($0)", $0) }
        rows = (0..<Self.sectionCount).map { j in
            (0..<Self.sectionSize).map { i in
                let item = Item("e\(j * Self.sectionSize + i)", j * Self.sectionSize + i)
                return Row(item: item, listItem: StoreInput.listItem(item), position: Int64(i) * Self.positionSpacing)
            }
        }
    }

    /// The current version as the store takes it.
    var listSections: [ListSection] {
        models.indices.map { s in
            ListSection(model: StoreInput.listItem(models[s]), elements: rows[s].map(\.listItem))
        }
    }

    /// The current version as the fingerprint takes it.
    var itemSections: [Section] {
        models.indices.map { s in Section(model: models[s], elements: rows[s].map(\.item)) }
    }

    static func hash(_ content: [UInt8]) -> [UInt8] {
        Array(SHA256.hash(data: content))
    }

    /// Makes the next version; returns its row writes for the baseline.
    mutating func advance() -> RowWrites {
        version += 1
        let k = Self.changesPerKind
        var flat = [(section: Int, index: Int)]()
        flat.reserveCapacity(Self.sectionCount * Self.sectionSize)
        for s in rows.indices { for i in rows[s].indices { flat.append((s, i)) } }
        let pick = random.partialFY(flat.count, 3 * k).map { flat[$0] }

        var writes = RowWrites()
        var vacated = [Set<Int64>](repeating: [], count: rows.count)
        var removed = [[Int]](repeating: [], count: rows.count)
        for (s, i) in pick[0..<k] {
            writes.deletes.append((s, rows[s][i].position))
            vacated[s].insert(rows[s][i].position)
            removed[s].append(i)
        }
        for (s, i) in pick[k..<2 * k] {
            rows[s][i].item.content += 1
            rows[s][i].listItem = StoreInput.listItem(rows[s][i].item)
            let content = rows[s][i].listItem.content
            writes.updates.append(.init(section: s, position: rows[s][i].position, content: content, hash: Self.hash(content)))
        }
        let movers = pick[2 * k..<3 * k].map { (s, i) in (section: s, row: rows[s][i]) }
        for (s, i) in pick[2 * k..<3 * k] {
            vacated[s].insert(rows[s][i].position)
            removed[s].append(i)
        }
        for s in rows.indices {
            for i in removed[s].sorted(by: >) { rows[s].remove(at: i) }
        }

        for mover in movers {
            let placed = place(mover.row, avoiding: vacated)
            writes.moves.append(.init(
                fromSection: mover.section, fromPosition: mover.row.position, toSection: placed.section,
                toPosition: placed.position))
        }
        for n in 0..<k {
            let item = Item("n\(version).\(n)", -1 - (k * (version - 1) + n))
            let listItem = StoreInput.listItem(item)
            let placed = place(Row(item: item, listItem: listItem, position: 0), avoiding: vacated)
            writes.inserts.append(.init(
                section: placed.section, position: placed.position, id: Array(item.id.utf8), content: listItem.content,
                hash: Self.hash(listItem.content)))
        }
        return writes
    }

    /// Inserts `row` into section bounded(10) at bounded(count + 1), with a baseline position.
    private mutating func place(_ row: Row, avoiding vacated: [Set<Int64>]) -> (section: Int, position: Int64) {
        let section = random.bounded(rows.count)
        let index = random.bounded(rows[section].count + 1)
        var row = row
        row.position = Self.position(at: index, in: rows[section], avoiding: vacated[section])
        rows[section].insert(row, at: index)
        return (section, row.position)
    }

    /// The baseline position of a row inserted at `index` of `rows`.
    static func position(at index: Int, in rows: [Row], avoiding vacated: Set<Int64>) -> Int64 {
        let previous = index > 0 ? rows[index - 1].position : nil
        let next = index < rows.count ? rows[index].position : nil
        var candidate: Int64
        switch (previous, next) {
        case (nil, nil): candidate = 0
        case (let p?, nil): candidate = p + positionSpacing
        case (nil, let n?): candidate = n - positionSpacing
        case (let p?, let n?): candidate = p + (n - p) / 2
        }
        while vacated.contains(candidate) { candidate += 1 }
        precondition(
            (previous.map { candidate > $0 } ?? true) && (next.map { candidate < $0 } ?? true),
            "replay-1k: no free baseline position between \(String(describing: previous)) and \(String(describing: next))")
        return candidate
    }
}
