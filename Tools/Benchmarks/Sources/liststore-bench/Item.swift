import ListDiff

/// An element of the benchmark inputs: `(id: String, content: Int)` (Docs/Benchmarks.md).
///
/// The id is the difference identifier; the content decides updates. Sections of the sectioned
/// scenario use the same type as their model.
struct Item: Differentiable, Sendable, CustomStringConvertible {
    var id: String
    var content: Int

    init(_ id: String, _ content: Int) {
        self.id = id
        self.content = content
    }

    var differenceIdentifier: String { id }

    func isContentEqual(to source: Item) -> Bool { content == source.content }

    var description: String { "(\(id), \(content))" }
}

typealias Section = ArraySection<Item, Item>
