import Foundation
import ListStoreTestSupport
import ListSync
import Testing

/// A model of the app's own.
private struct Chore: StorableItem, Hashable {
    var id: String
    var title: String
    var done = false
    var differenceIdentifier: String { id }
    func isContentEqual(to source: Chore) -> Bool { title == source.title && done == source.done }
}

private struct Project: StorableItem, Hashable {
    var id: String
    var differenceIdentifier: String { id }
    func isContentEqual(to source: Project) -> Bool { true }
}

/// A replica's own reads and writes (`Replica.snapshot`, `Replica.edit`), with `import ListSync` alone.
@Suite struct ReplicaLocalWritesTests {
    fileprivate typealias Board = ArraySection<Project, Chore>

    @Test func aReplicaEditsItsOwnListTypedOrNotAndSyncsIt() async throws {
        let directory = try TemporaryDirectory()
        let source = try Store(path: directory.file("source.liststore"))
        try await source.commit([Board(model: Project(id: "home"), elements: [Chore(id: "t1", title: "milk")])], to: "board")
        let replica = Replica(store: try Store(path: directory.file("replica.liststore")), list: "board")

        // Before its first pull the list is not a replica: an edit is refused and makes nothing.
        await #expect { try await replica.edit { draft in draft.appendSection(ListItem(id: "x")) } } throws: {
            ($0 as? StoreError)?.code == .listNotFound
        }
        #expect(try await replica.position() == nil)

        try await replica.pull(from: LocalSource(source))
        #expect(try await replica.snapshot(as: Board.self) == [Board(model: Project(id: "home"), elements: [Chore(id: "t1", title: "milk")])])

        let typed = try await replica.edit(as: Board.self, author: "ana") { draft in
            try draft.reloadElement(Chore(id: "t1", title: "milk", done: true))
            try draft.append(Chore(id: "t2", title: "bread"), toSection: "home")
        }
        #expect(typed.pendingSeq == 1)
        let untyped = try await replica.edit(author: "ana") { draft in try draft.moveElement("t2", to: ElementPath(section: 0, element: 0)) }
        #expect(untyped.pendingSeq == 2)
        #expect(try await replica.status()?.pending == 2)
        #expect(try await replica.snapshot().sections[0].elements.map(\.id) == ["t2", "t1"])

        let synced = try await replica.sync(with: LocalSource(source))
        #expect(synced.push.pushed == 2 && synced.push.conflicts.isEmpty && synced.pull.pending == 0)
        #expect(try await source.snapshot(of: "board", as: Board.self) == [
            Board(model: Project(id: "home"), elements: [Chore(id: "t2", title: "bread"), Chore(id: "t1", title: "milk", done: true)])
        ])
    }

    @Test func anHTTPSourceIsMadeFromAStringWithATokenProvider() throws {
        let source = try HTTPSource("https://lists.example.com/sync", tokenProvider: { _ in "a JWT" })
        #expect(source.url.absoluteString == "https://lists.example.com/sync")
        #expect(throws: SyncError.self) { try HTTPSource("lists.example.com", tokenProvider: { _ in nil }) }
        #expect(throws: SyncError.self) { try HTTPSource("https://ana:pw@lists.example.com", tokenProvider: { _ in nil }) }
    }
}
