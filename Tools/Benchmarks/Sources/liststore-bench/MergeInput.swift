import ListStore

/// The merge-1pct input: a 100,000-element base, theirs (the source's head, 1% changed from the base)
/// and mine (a replica's list, 1% changed from the same base), mostly on different items.
///
/// Docs/Benchmarks.md names the scenario; its input is specified here, in the terms of that page's
/// "How the inputs are made", so that another implementation can reproduce it:
///
/// - SplitMix64 seeded base + 7 (`seedOffset`).
/// - Base: 100 sections ("s<j>", {"n":j}), section j holding ("e<g>", {"n":g,"state":0,"text":0}) for
///   g = j·1000 + i, i in 0..<1000. Contents are canonical JSON objects (keys sorted, no spaces).
/// - pick = partialFY(100,000, 1,400) (element numbers g). Ten overlap groups of 10, pick[10k..<10k+10]
///   for k = 0…9: A theirs deletes / mine moves; B theirs deletes / mine edits; C both delete; D theirs
///   moves / mine deletes; E both move; F theirs edits / mine edits another key; G both edit the same
///   key; H theirs edits / mine deletes; I theirs edits / mine moves; J theirs moves / mine edits. Then
///   items one side alone changes: pick[100..<320] theirs deletes (the first 10 are K), [320..<540]
///   theirs moves, [540..<750] theirs edits, [750..<970] mine deletes, [970..<1190] mine moves,
///   [1190..<1400] mine edits. Each side: 250 deletes, 250 moves, 250 edits, 250 inserts (1,000 changes,
///   1% of the list).
/// - A side is made from the base: remove its deleted and its moved elements; its edits set "state" to
///   1 (theirs) or "text" to 1 (mine; "state" to 2 for G); its movers, in order (theirs: D, E, J, its
///   own; mine: A, E, I, its own), go to another section: own = g/1000, r = bounded(99),
///   dest = r < own ? r : r+1, inserted at bounded(dest.count + 1); then its 250 inserts k = 0…249 in
///   order: theirs ("c<k>" for k < 10, else "t<k>", {"n":−1−k,"state":1,"text":0}) and mine ("c<k>" for
///   k < 10, else "m<k>", {"n":−1−k,"state":0,"text":1}) go to section bounded(100) at
///   bounded(count + 1), except mine's k = 10…19, each inserted right after K[k−10] (an element theirs
///   deletes and mine keeps in place), drawing nothing. Theirs is made first, then mine, from one
///   generator.
/// - Fingerprint: FNV-1a 64 (sectioned form, but an item's content is utf8 of its JSON text instead
///   of int64-LE) of the base, 0xFF, theirs, 0xFF, mine.
///
/// So both sides create c0…c9 (one item each after the merge, merge rule 2); mine moves or edits
/// items theirs deleted (A, B: reported as `deleted`); both edit one key of G (`contentConflict`),
/// different keys of F (merged without a conflict); mine's inserts after K are anchored on an item that
/// is gone (placed by their `before` anchor).
struct MergeInput {
    static let seedOffset: UInt64 = 7
    static let sectionCount = 100
    static let sectionSize = 1_000
    /// Deletes, moves, edits and inserts per side.
    static let changesPerKind = 250
    /// Items per overlap group (A…J) and shared inserts (c0…c9).
    static let overlap = 10
    /// FNV-1a 64 of base, 0xFF, theirs, 0xFF, mine; checked so that the input cannot change unnoticed.
    static let expectedFingerprint = "8230c121ba0e7249"

    /// An element: an id and the three keys of its JSON object content.
    struct Element: Equatable {
        var id: String
        var n: Int
        var state: Int
        var text: Int

        var json: String { "{\"n\":\(n),\"state\":\(state),\"text\":\(text)}" }
        var listItem: ListItem { ListItem(id: id, content: Array(json.utf8)) }
    }

    /// The overlap groups (see the type).
    enum Group: Int, CaseIterable {
        case a, b, c, d, e, f, g, h, i, j
    }

    /// Elements per section; sections never move or change, section j is ("s<j>", {"n":j}).
    typealias Sections = [[Element]]

    let base: Sections
    let theirs: Sections
    let mine: Sections
    /// Element numbers of each overlap group.
    let groups: [Group: [Int]]
    /// The base elements (by number) each side deleted and edited.
    let theirsDeleted: Set<Int>
    let mineDeleted: Set<Int>
    let theirsEdited: Set<Int>
    let mineEdited: Set<Int>
    /// The destination section of each element a side moved, by number.
    let theirsMoved: [Int: Int]
    let mineMoved: [Int: Int]
    /// Where each side put its inserts, and what they hold, by id.
    let theirsInserted: [String: (section: Int, element: Element)]
    let mineInserted: [String: (section: Int, element: Element)]

    init() {
        let size = Self.sectionSize
        base = (0..<Self.sectionCount).map { j in
            (0..<size).map { i in Element(id: "e\(j * size + i)", n: j * size + i, state: 0, text: 0) }
        }
        var random = SplitMix64(seed: SplitMix64.baseSeed + Self.seedOffset)
        let k = Self.changesPerKind
        let o = Self.overlap
        // Items one side alone changes: theirs deletes, moves, edits; mine deletes, moves, edits.
        let soloCounts = [k - 3 * o, k - 3 * o, k - 4 * o, k - 3 * o, k - 3 * o, k - 4 * o]
        let pick = random.partialFY(Self.sectionCount * size, 10 * o + soloCounts.reduce(0, +))
        var groups: [Group: [Int]] = [:]
        for group in Group.allCases { groups[group] = Array(pick[group.rawValue * o..<(group.rawValue + 1) * o]) }
        var solo = [[Int]]()
        var start = 10 * o
        for count in soloCounts {
            solo.append(Array(pick[start..<start + count]))
            start += count
        }
        let g = groups
        let theirsDeletes = g[.a]! + g[.b]! + g[.c]! + solo[0]
        let theirsMoves = g[.d]! + g[.e]! + g[.j]! + solo[1]
        let theirsEdits = g[.f]! + g[.g]! + g[.h]! + g[.i]! + solo[2]
        let mineDeletes = g[.c]! + g[.d]! + g[.h]! + solo[3]
        let mineMoves = g[.a]! + g[.e]! + g[.i]! + solo[4]
        let mineEdits = g[.b]! + g[.f]! + g[.g]! + g[.j]! + solo[5]
        precondition([theirsDeletes, theirsMoves, theirsEdits, mineDeletes, mineMoves, mineEdits].allSatisfy { $0.count == k })
        let anchors = Array(solo[0][0..<o])  // K

        let theirsEdited = Set(theirsEdits)
        let mineEdited = Set(mineEdits)
        let stateTwo = Set(g[.g]!)
        var theirsMoved: [Int: Int] = [:]
        var mineMoved: [Int: Int] = [:]
        var theirs = Self.side(
            from: base, deleting: Set(theirsDeletes), moving: theirsMoves, edit: { e in
                if theirsEdited.contains(e.n) { e.state = 1 }
            }, random: &random, moved: &theirsMoved)
        var theirsInserted: [String: (section: Int, element: Element)] = [:]
        for n in 0..<k {
            let element = Element(id: n < o ? "c\(n)" : "t\(n)", n: -1 - n, state: 1, text: 0)
            let dest = random.bounded(Self.sectionCount)
            theirs[dest].insert(element, at: random.bounded(theirs[dest].count + 1))
            theirsInserted[element.id] = (dest, element)
        }
        var mine = Self.side(
            from: base, deleting: Set(mineDeletes), moving: mineMoves, edit: { e in
                if stateTwo.contains(e.n) { e.state = 2 } else if mineEdited.contains(e.n) { e.text = 1 }
            }, random: &random, moved: &mineMoved)
        var mineInserted: [String: (section: Int, element: Element)] = [:]
        for n in 0..<k {
            let element = Element(id: n < o ? "c\(n)" : "m\(n)", n: -1 - n, state: 0, text: 1)
            let dest: Int
            if n >= o && n < 2 * o {
                let anchor = anchors[n - o]
                dest = anchor / size
                guard let at = mine[dest].firstIndex(where: { $0.n == anchor }) else {
                    preconditionFailure("merge-1pct: anchor e\(anchor) is not in mine's section s\(dest)")
                }
                mine[dest].insert(element, at: at + 1)
            } else {
                dest = random.bounded(Self.sectionCount)
                mine[dest].insert(element, at: random.bounded(mine[dest].count + 1))
            }
            mineInserted[element.id] = (dest, element)
        }
        self.theirs = theirs
        self.mine = mine
        self.groups = groups
        self.theirsDeleted = Set(theirsDeletes)
        self.mineDeleted = Set(mineDeletes)
        self.theirsEdited = theirsEdited
        self.mineEdited = mineEdited
        self.theirsMoved = theirsMoved
        self.mineMoved = mineMoved
        self.theirsInserted = theirsInserted
        self.mineInserted = mineInserted
    }

    /// One side made from the base: deletes and movers removed, edits applied, movers placed.
    private static func side(
        from base: Sections, deleting deleted: Set<Int>, moving movers: [Int], edit: (inout Element) -> Void,
        random: inout SplitMix64, moved: inout [Int: Int]
    ) -> Sections {
        let moving = Set(movers)
        var sections: Sections = base.map { elements in
            var kept = [Element]()
            kept.reserveCapacity(elements.count)
            for var element in elements where !deleted.contains(element.n) && !moving.contains(element.n) {
                edit(&element)
                kept.append(element)
            }
            return kept
        }
        for g in movers {
            var element = base[g / sectionSize][g % sectionSize]
            edit(&element)
            let own = g / sectionSize
            let r = random.bounded(sectionCount - 1)
            let dest = r < own ? r : r + 1
            sections[dest].insert(element, at: random.bounded(sections[dest].count + 1))
            moved[g] = dest
        }
        return sections
    }

    static func sectionID(_ j: Int) -> String { "s\(j)" }

    static func listSections(_ sections: Sections) -> [ListSection] {
        sections.enumerated().map { j, elements in
            ListSection(model: ListItem(id: sectionID(j), content: Array("{\"n\":\(j)}".utf8)), elements: elements.map(\.listItem))
        }
    }

    var fingerprint: String {
        var f = Fingerprint()
        func add(_ sections: Sections) {
            for (j, elements) in sections.enumerated() {
                f.addByte(0x1E)
                f.add(Self.sectionID(j))
                f.addByte(0x1F)
                f.add("{\"n\":\(j)}")
                for element in elements {
                    f.add(element.id)
                    f.addByte(0x1F)
                    f.add(element.json)
                }
            }
        }
        add(base)
        f.addByte(0xFF)
        add(theirs)
        f.addByte(0xFF)
        add(mine)
        return f.hex
    }

    // MARK: What the merge must give (from the merge rules, not from Rebase)

    /// Where every element of the merged list is and what it holds, by id: base elements neither side
    /// deleted (in mine's section if mine moved them, else theirs' if theirs did, else their own;
    /// "state" from theirs except G's 2 from mine, "text" from mine), theirs' and mine's inserts (c0…c9
    /// once, where mine put them, with mine's values on the keys both set).
    var expectedElements: [String: (section: Int, json: String)] {
        var result: [String: (section: Int, json: String)] = [:]
        for elements in base {
            for element in elements where !theirsDeleted.contains(element.n) && !mineDeleted.contains(element.n) {
                var merged = element
                if groups[.g]!.contains(element.n) {
                    merged.state = 2
                } else if theirsEdited.contains(element.n) {
                    merged.state = 1
                }
                if mineEdited.contains(element.n) && !groups[.g]!.contains(element.n) { merged.text = 1 }
                let section = mineMoved[element.n] ?? theirsMoved[element.n] ?? element.n / Self.sectionSize
                result[element.id] = (section, merged.json)
            }
        }
        for (id, inserted) in theirsInserted { result[id] = (inserted.section, inserted.element.json) }
        for (id, inserted) in mineInserted { result[id] = (inserted.section, inserted.element.json) }
        return result
    }

    /// The conflict report the merge must give, as canonical JSON texts, sorted: `deleted` for A (mine's
    /// move) and B (mine's edit, with mine's content), `contentConflict` on "state" for G, on "state" and
    /// "text" for c0…c9.
    var expectedConflicts: [String] {
        var result = [String]()
        for g in groups[.a]! {
            result.append("{\"id\":\"e\(g)\",\"kind\":\"deleted\",\"section\":\"s\(mineMoved[g]!)\"}")
        }
        for g in groups[.b]! {
            let mine = Element(id: "e\(g)", n: g, state: 0, text: 1)
            result.append("{\"id\":\"e\(g)\",\"kind\":\"deleted\",\"mine\":\(mine.json),\"section\":\"s\(g / Self.sectionSize)\"}")
        }
        for g in groups[.g]! {
            result.append("{\"id\":\"e\(g)\",\"key\":\"state\",\"kind\":\"contentConflict\",\"mine\":2,"
                + "\"section\":\"s\(g / Self.sectionSize)\",\"theirs\":1}")
        }
        for n in 0..<Self.overlap {
            let section = mineInserted["c\(n)"]!.section
            result.append("{\"id\":\"c\(n)\",\"key\":\"state\",\"kind\":\"contentConflict\",\"mine\":0,\"section\":\"s\(section)\",\"theirs\":1}")
            result.append("{\"id\":\"c\(n)\",\"key\":\"text\",\"kind\":\"contentConflict\",\"mine\":1,\"section\":\"s\(section)\",\"theirs\":0}")
        }
        return result.sorted()
    }
}
