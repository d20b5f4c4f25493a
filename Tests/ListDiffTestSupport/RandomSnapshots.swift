import ListDiff

/// SplitMix64: a small, fast, seedable generator, so every failing case can be replayed from its seed.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// An item with a string identity and integer content, for tests.
public struct TestItem: Differentiable, Hashable, Sendable, CustomStringConvertible {
    public var id: String
    public var content: Int
    public init(_ id: String, _ content: Int = 0) {
        self.id = id
        self.content = content
    }
    public var differenceIdentifier: String { id }
    public func isContentEqual(to source: TestItem) -> Bool { content == source.content }
    public var description: String { content == 0 ? id : "\(id):\(content)" }
}

public typealias TestSnapshot = [ArraySection<TestItem, TestItem>]

/// Random snapshot pairs: a source, and a target made from it by random edits of every kind.
public struct RandomSnapshots {
    public var rng: SplitMix64
    /// Whether identifiers may repeat.
    public var duplicates: Bool
    private var counter = 0
    private static let alphabet = ["a", "b", "é", "日本", "🙂", "a\u{0}b", "", "Z"]

    public init(seed: UInt64, duplicates: Bool = false) {
        rng = SplitMix64(seed: seed)
        self.duplicates = duplicates
    }

    private mutating func freshID(_ prefix: String) -> String {
        if duplicates && Int.random(in: 0..<3, using: &rng) == 0 {
            return prefix + Self.alphabet[Int.random(in: 0..<Self.alphabet.count, using: &rng)]
        }
        counter += 1
        return prefix + Self.alphabet[counter % Self.alphabet.count] + String(counter)
    }

    private mutating func item(_ prefix: String) -> TestItem {
        TestItem(freshID(prefix), Int.random(in: 0..<3, using: &rng))
    }

    /// A random sectioned snapshot with up to `maxSections` sections of up to `maxElements` elements.
    public mutating func snapshot(maxSections: Int, maxElements: Int) -> TestSnapshot {
        (0..<Int.random(in: 0...maxSections, using: &rng)).map { _ in
            ArraySection(
                model: item("s"),
                elements: (0..<Int.random(in: 0...maxElements, using: &rng)).map { _ in item("e") })
        }
    }

    /// A random linear list of up to `maxElements` elements.
    public mutating func list(maxElements: Int) -> [TestItem] {
        (0..<Int.random(in: 0...maxElements, using: &rng)).map { _ in item("e") }
    }

    /// A target made from `source` by random deletes, inserts, moves (also across sections), updates,
    /// section deletes, inserts, moves and updates; `intensity` in 0...1 scales how much changes.
    public mutating func edit(_ source: TestSnapshot, intensity: Double) -> TestSnapshot {
        var target = source
        func chance() -> Bool { Double.random(in: 0..<1, using: &rng) < intensity }
        // Section-level edits.
        target = target.filter { _ in !chance() || !chance() }
        if chance(), !target.isEmpty {
            let from = Int.random(in: 0..<target.count, using: &rng)
            let section = target.remove(at: from)
            target.insert(section, at: Int.random(in: 0...target.count, using: &rng))
        }
        for i in target.indices where chance() && chance() { target[i].model.content += 1 }
        if chance() {
            let new = ArraySection(model: item("s"), elements: (0..<Int.random(in: 0...4, using: &rng)).map { _ in item("e") })
            target.insert(new, at: Int.random(in: 0...target.count, using: &rng))
        }
        guard !target.isEmpty else { return target }
        // Element-level edits.
        for s in target.indices {
            target[s].elements = target[s].elements.filter { _ in !chance() || !chance() }
            for e in target[s].elements.indices where chance() { target[s].elements[e].content += 1 }
            for _ in 0..<Int.random(in: 0...2, using: &rng) where chance() {
                target[s].elements.insert(item("e"), at: Int.random(in: 0...target[s].elements.count, using: &rng))
            }
        }
        for _ in 0..<Int.random(in: 0...4, using: &rng) where chance() {
            let s = Int.random(in: 0..<target.count, using: &rng)
            guard !target[s].elements.isEmpty else { continue }
            let moved = target[s].elements.remove(at: Int.random(in: 0..<target[s].elements.count, using: &rng))
            let d = Int.random(in: 0..<target.count, using: &rng)
            target[d].elements.insert(moved, at: Int.random(in: 0...target[d].elements.count, using: &rng))
        }
        if chance() {
            for s in target.indices where chance() { target[s].elements.shuffle(using: &rng) }
        }
        return target
    }
}
