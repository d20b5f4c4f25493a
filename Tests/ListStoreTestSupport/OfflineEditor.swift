import ListDiffTestSupport
import ListJSON
import ListStore

/// Random offline edit sessions of one client, for convergence tests: inserts (fresh ids, so every
/// insert is traceable), deletes, moves within and across sections, content edits of object keys,
/// section inserts, moves and deletes. It remembers what it inserted and deleted.
public struct OfflineEditor: Sendable {
    /// The client's name, part of every id it makes.
    public let client: String
    private var rng: SplitMix64
    private var counter = 0
    /// Element ids this editor inserted.
    public private(set) var insertedElements: [String] = []
    /// Element ids this editor deleted one by one.
    public private(set) var deletedElements: Set<String> = []
    /// Element ids that were in a section when this editor deleted it.
    public private(set) var deletedWithSections: Set<String> = []
    /// Section ids this editor deleted.
    public private(set) var deletedSections: Set<String> = []

    public init(client: String, seed: UInt64) {
        self.client = client
        rng = SplitMix64(seed: seed)
    }

    /// A starting list: `sections` sections of `elements` elements, ids prefixed "base".
    public static func start(sections: Int, elements: Int) -> [ListSection] {
        (0..<sections).map { s in
            ListSection(
                model: ListItem(id: "base-s\(s)", json: ["title": .string("s\(s)")]),
                elements: (0..<elements).map { ListItem(id: "base-e\(s).\($0)", json: ["a": 0, "b": 0]) })
        }
    }

    private mutating func below(_ n: Int) -> Int { n <= 0 ? 0 : Int(rng.next() % UInt64(n)) }

    private mutating func fresh(_ kind: String) -> String {
        counter += 1
        return "\(client)-\(kind)\(counter)"
    }

    /// `sections` with one to three random operations applied.
    public mutating func edit(_ sections: [ListSection]) -> [ListSection] {
        var list = sections
        for _ in 0..<(1 + below(3)) { apply(&list) }
        return list
    }

    private mutating func apply(_ list: inout [ListSection]) {
        let elementCount = list.reduce(0) { $0 + $1.elements.count }
        let op = below(100)
        switch op {
        case 0..<25 where !list.isEmpty:  // insert an element
            let s = below(list.count)
            let id = fresh("e")
            insertedElements.append(id)
            list[s].elements.insert(ListItem(id: id, json: ["a": 0, "b": 0]), at: below(list[s].elements.count + 1))
        case 25..<40 where elementCount > 0:  // delete an element
            let (s, e) = randomElement(list)
            deletedElements.insert(list[s].elements[e].id)
            list[s].elements.remove(at: e)
        case 40..<55 where elementCount > 0:  // move within its section
            let (s, e) = randomElement(list)
            let item = list[s].elements.remove(at: e)
            list[s].elements.insert(item, at: below(list[s].elements.count + 1))
        case 55..<65 where elementCount > 0 && list.count > 1:  // move across sections
            let (s, e) = randomElement(list)
            let item = list[s].elements.remove(at: e)
            let t = below(list.count)
            list[t].elements.insert(item, at: below(list[t].elements.count + 1))
        case 65..<82 where elementCount > 0:  // edit one key of an element's content
            let (s, e) = randomElement(list)
            var object = (try? list[s].elements[e].json)?.objectValue ?? JSONObject()
            object[["a", "b", "c"][below(3)]] = JSONValue(below(1000))
            list[s].elements[e] = ListItem(id: list[s].elements[e].id, json: .object(object))
        case 82..<88:  // insert a section, with an element or two
            let id = fresh("s")
            let elements = (0..<below(3)).map { _ in fresh("e") }
            insertedElements += elements
            list.insert(
                ListSection(
                    model: ListItem(id: id, json: ["title": .string(id)]),
                    elements: elements.map { ListItem(id: $0, json: ["a": 0, "b": 0]) }),
                at: below(list.count + 1))
        case 88..<93 where list.count > 1:  // move a section
            let section = list.remove(at: below(list.count))
            list.insert(section, at: below(list.count + 1))
        case 93..<96 where list.count > 2:  // delete a section (rarely, and never the last ones)
            let section = list.remove(at: below(list.count))
            deletedSections.insert(section.model.id)
            deletedWithSections.formUnion(section.elements.map(\.id))
        case 96..<100 where !list.isEmpty:  // edit a section's title
            let s = below(list.count)
            list[s].model = ListItem(id: list[s].model.id, json: ["title": .string(fresh("t"))])
        default:
            break
        }
    }

    private mutating func randomElement(_ list: [ListSection]) -> (Int, Int) {
        var k = below(list.reduce(0) { $0 + $1.elements.count })
        for (s, section) in list.enumerated() {
            if k < section.elements.count { return (s, k) }
            k -= section.elements.count
        }
        preconditionFailure("no element")
    }
}
