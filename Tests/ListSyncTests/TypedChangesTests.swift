import Foundation
import ListDiffTestSupport
import ListStoreTestSupport
import ListSync
import Testing

/// A consumer that keeps a copy of a list in its own types, from `changes(after:)`.
@Suite(.heavyWork) struct TypedChangesTests {
    typealias Column = ArraySection<Board, Card>

    /// Random typed commits; the consumer applies each entry to its typed copy, which equals the
    /// source's version after every one, and each typed changeset is valid as batch updates.
    @Test(arguments: (1...4).map { 0x7C_0000 + UInt64($0) })
    func aTypedCopyFollowsEveryCommit(seed: UInt64) async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("source.liststore"))
        var random = SplitMix64(seed: seed)
        var head = [Column(model: Board(id: "b0", title: "0"), elements: [])]
        try await store.commit(head, to: "board")
        let source = LocalSource(store)
        var cursor = try await source.origin(of: "board")
        var copy: [Column] = []
        var changes = source.changes(after: cursor).makeAsyncIterator()
        for step in 1...120 {
            if step > 1 {
                var draft = ListDraft(sections: head)
                for _ in 0..<Int.random(in: 1...3, using: &random) {
                    TypedReplicaListModelTests.randomEdit(&draft, step: step * 10 + Int.random(in: 0..<10, using: &random), using: &random)
                }
                head = draft.sections
                guard try await store.commit(head, to: "board").changed else { continue }
            }
            let change = try #require(try await changes.next())
            let (changeset, next) = try change.entry.changeset(applyingTo: copy)
            #expect(throws: Never.self, "seed \(seed), step \(step)") {
                try BatchUpdateValidator.validate(changeset, source: copy, target: next)
            }
            copy = next
            cursor = change.cursor
            #expect(copy == head, "seed \(seed), step \(step)")
        }
        #expect(cursor.version == (try await store.summary(of: "board").version))
        #expect(copy == (try await store.snapshot(of: "board", as: Column.self)))
    }

    @Test func anEntryThatDoesNotDecodeAsTheTypesIsRefused() async throws {
        let store = InMemoryStore(name: "typed")
        try await store.commit([ListSection(model: ListItem(id: "b0", json: ["nope": 1]), elements: [])], to: "board",
            expectedVersion: nil, author: nil, message: nil)
        let entry = try #require(try await store.journal(of: "board", after: 0, limit: 1, maxBytes: .max).entries.first)
        #expect { try entry.changeset(applyingTo: [Column]()) } throws: { ($0 as? StoreError)?.code == .invalidSnapshot }
    }
}
