import Foundation
import ListDiffTestSupport
import ListStoreTestSupport
import ListSync
import Observation
import Testing

/// An app's models, as it would write them.
struct Board: StorableItem, Hashable, Sendable {
    var id: String
    var title: String
    var differenceIdentifier: String { id }
    func isContentEqual(to source: Board) -> Bool { title == source.title }
}

struct Card: StorableItem, Hashable, Sendable {
    var id: String
    var text: String
    var done = false
    var differenceIdentifier: String { id }
    func isContentEqual(to source: Card) -> Bool { text == source.text && done == source.done }
}

/// The typed observable model: the same transitions as the untyped one, in the app's types.
@Suite @MainActor struct TypedReplicaListModelTests {
    typealias Column = ArraySection<Board, Card>

    /// A source holding `start` and a typed model of a replica that pulled it, loaded.
    @available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
    func setUp(_ directory: TemporaryDirectory, _ start: [Column]) async throws -> (Store, TypedReplicaListModel<Board, Card>) {
        let source = try Store(path: directory.file("source.liststore"))
        try await source.commit(start, to: "board")
        let replica = Replica(store: try Store(path: directory.file("phone.liststore")), list: "board")
        try await replica.pull(from: LocalSource(source))
        let model = TypedReplicaListModel<Board, Card>(replica: replica, source: LocalSource(source))
        await model.refresh()
        return (source, model)
    }

    @available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
    @Test func theModelShowsEditsAndSyncsInTheAppsTypes() async throws {
        let directory = try TemporaryDirectory()
        let start = [Column(model: Board(id: "todo", title: "To do"), elements: [Card(id: "c1", text: "milk"), Card(id: "c2", text: "bread")])]
        let (source, model) = try await setUp(directory, start)
        #expect(model.sections == start && model.version == 1 && model.status.isLoaded && model.decodingError == nil)

        var transitions = model.transitions().makeAsyncIterator()
        let result = try await model.edit(author: "ana") { draft in
            try draft.reloadElement(Card(id: "c1", text: "milk", done: true))
            try draft.moveElement("c2", to: ElementPath(section: 0, element: 0))
            draft.appendSection(Board(id: "done", title: "Done"))
        }
        let edited = [
            Column(model: Board(id: "todo", title: "To do"), elements: [Card(id: "c2", text: "bread"), Card(id: "c1", text: "milk", done: true)]),
            Column(model: Board(id: "done", title: "Done"), elements: []),
        ]
        #expect(model.sections == edited && result.pendingSeq == 1)  // at once
        let local = try #require(await transitions.next())
        #expect(local.cause == .localEdit && local.sections == edited)
        #expect(throws: Never.self) { try BatchUpdateValidator.validate(local.changeset, source: start, target: edited) }

        try await source.edit("board", as: Column.self) { draft in try draft.append(Card(id: "c3", text: "eggs"), toSection: "todo") }
        let synced = try #require(await model.sync())
        #expect(synced.push.pushed == 1 && synced.pull.pending == 0)
        let pulled = try #require(await transitions.next())
        #expect(pulled.cause == .sync)
        #expect(throws: Never.self) { try BatchUpdateValidator.validate(pulled.changeset, source: edited, target: pulled.sections) }
        #expect(model.sections == (try await source.snapshot(of: "board", as: Column.self)))
        #expect(model.sections[0].elements.map(\.id) == ["c2", "c1", "c3"])
    }

    /// A content the types cannot read leaves the sections as they were, refuses edits, and the
    /// next transition that decodes is one diff from what the model showed.
    @available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
    @Test func aContentTheTypesCannotReadIsReportedAndEditsWait() async throws {
        let directory = try TemporaryDirectory()
        let start = [Column(model: Board(id: "todo", title: "To do"), elements: [Card(id: "c1", text: "milk")])]
        let (source, model) = try await setUp(directory, start)
        var transitions = model.transitions().makeAsyncIterator()

        try await source.edit("board") { draft in try draft.append(ListItem(id: "odd", json: ["shape": "not a card"]), toSection: "todo") }
        await model.sync()
        #expect(model.decodingError != nil && model.sections == start)
        await #expect(throws: StoreError.self) { try await model.edit { _ in } }

        try await source.edit("board") { draft in try draft.removeElement("odd") }
        try await source.edit("board", as: Column.self) { draft in try draft.append(Card(id: "c2", text: "tea"), toSection: "todo") }
        await model.sync()
        #expect(model.decodingError == nil)
        let after = try #require(await transitions.next())
        #expect(throws: Never.self) { try BatchUpdateValidator.validate(after.changeset, source: start, target: after.sections) }
        #expect(model.sections[0].elements.map(\.id) == ["c1", "c2"])
    }

    /// Random typed edits, source commits and syncs: every typed transition turns the sections
    /// shown before it into its own as batch updates, the typed sections always decode what the
    /// untyped model shows, and replica and source converge.
    @available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
    @Test(arguments: (1...8).map { 0x7E_0000 + UInt64($0) })
    func randomTypedEditsAndSyncsReplayAndConverge(seed: UInt64) async throws {
        let directory = try TemporaryDirectory()
        let (source, model) = try await setUp(directory, [Column(model: Board(id: "b0", title: "0"), elements: [])])
        var random = SplitMix64(seed: seed)
        var shown = model.sections
        let stream = model.transitions()
        var transitions = stream.makeAsyncIterator()
        var expected = 0
        var checked = 0
        for step in 0..<60 {
            switch Int.random(in: 0..<4, using: &random) {
            case 0, 1:
                let before = model.version
                try await model.edit { draft in Self.randomEdit(&draft, step: step, using: &random) }
                if model.version != before { expected += 1 }
            case 2:
                try await source.edit("board", as: Column.self) { [random] draft in
                    var random = random
                    Self.randomEdit(&draft, step: 1000 + step, using: &random)
                }
                _ = random.next()
            default:
                let before = model.sections
                await model.sync()
                if model.sections != before { expected += 1 }
            }
            while checked < expected {
                let transition = try #require(await transitions.next())
                #expect(throws: Never.self, "seed \(seed), step \(step)") {
                    try BatchUpdateValidator.validate(transition.changeset, source: shown, target: transition.sections)
                }
                shown = transition.sections
                checked += 1
            }
            #expect(shown == model.sections, "seed \(seed), step \(step)")
            #expect(model.sections == (try model.untyped.sections.map(Self.decode)), "seed \(seed), step \(step)")
        }
        try #require(await model.sync() != nil)
        while model.sections != shown {
            let transition = try #require(await transitions.next())
            try BatchUpdateValidator.validate(transition.changeset, source: shown, target: transition.sections)
            shown = transition.sections
        }
        #expect(model.status.pending == 0)
        #expect(model.sections == (try await source.snapshot(of: "board", as: Column.self)), "seed \(seed)")
    }

    /// A random edit: cards added, removed, moved, changed; columns added.
    nonisolated static func randomEdit(_ draft: inout ListDraft<Board, Card>, step: Int, using random: inout SplitMix64) {
        let cards = draft.sections.flatMap(\.elements)
        switch Int.random(in: 0..<5, using: &random) {
        case 0 where draft.sections.count < 4:
            draft.appendSection(Board(id: "b\(step)", title: "\(step)"))
        case 1 where !cards.isEmpty:
            try? draft.removeElement(cards.randomElement(using: &random)!.id)
        case 2 where !cards.isEmpty:
            let card = cards.randomElement(using: &random)!
            try? draft.removeElement(card.id)
            let section = Int.random(in: 0..<draft.sections.count, using: &random)
            try? draft.insert(card, at: ElementPath(section: section, element: Int.random(in: 0...draft.sections[section].elements.count, using: &random)))
        case 3 where !cards.isEmpty:
            var card = cards.randomElement(using: &random)!
            card.done.toggle()
            card.text += "!"
            try? draft.reloadElement(card)
        default:
            let section = Int.random(in: 0..<draft.sections.count, using: &random)
            draft.sections[section].elements.append(Card(id: "c\(step)", text: "card \(step)"))
        }
    }

    nonisolated static func decode(_ section: ListSection) throws -> Column {
        Column(
            model: try JSONDecoder().decode(Board.self, from: Data(section.model.content)),
            elements: try section.elements.map { try JSONDecoder().decode(Card.self, from: Data($0.content)) })
    }
}

/// What a newer version of the app wrote survives the edits of this one.
@Suite @MainActor struct TypedReplicaListModelNewerContentTests {
    @available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
    @Test func membersTheAppDoesNotKnowSurviveEditsOfOtherItems() async throws {
        let directory = try TemporaryDirectory()
        let source = try Store(path: directory.file("source.liststore"))
        // "color": a member of a newer Card.
        let newer = ListItem(id: "c1", json: ["color": "red", "done": false, "id": "c1", "text": "milk"])
        try await source.commit(
            [ListSection(model: ListItem(id: "todo", json: ["id": "todo", "title": "To do"]), elements: [newer])], to: "board")
        let replica = Replica(store: try Store(path: directory.file("phone.liststore")), list: "board")
        try await replica.pull(from: LocalSource(source))
        let model = TypedReplicaListModel<Board, Card>(replica: replica, source: LocalSource(source))
        await model.refresh()
        #expect(model.sections[0].elements == [Card(id: "c1", text: "milk")] && model.decodingError == nil)

        try await model.edit { draft in try draft.append(Card(id: "c2", text: "tea"), toSection: "todo") }
        let stored = try await replica.store.snapshot(of: "board").sections[0].elements
        #expect(stored.map(\.id) == ["c1", "c2"])
        #expect(stored[0] == newer, "an item the edit did not change keeps its stored bytes")
        await model.sync()
        #expect(try await source.snapshot(of: "board").sections[0].elements[0] == newer)

        // Changing the item itself writes what this app knows of it.
        try await model.edit { draft in try draft.reloadElement(Card(id: "c1", text: "milk", done: true)) }
        #expect(try await replica.store.snapshot(of: "board").sections[0].elements[0] == ListItem(id: "c1", json: ["done": true, "id": "c1", "text": "milk"]))
    }
}
