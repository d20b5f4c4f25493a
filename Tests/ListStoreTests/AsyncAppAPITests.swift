import Foundation
import ListStore
import ListStoreTestSupport
import Testing

/// What an app writes with `import ListStore` alone: the async API with typed models, a store at a
/// file URL, drafts that name items by plain strings.
@Suite struct AsyncAppAPITests {
    static let mail = [
        ArraySection(
            model: Folder(id: "inbox", title: "Inbox"),
            elements: [Message(id: 1, text: "hi", unread: true), Message(id: 2, text: "é", unread: false)]),
    ]

    /// The typed async methods, on every engine that has them: SQLite's store and the one in memory.
    func typedRoundTrip(_ store: some ListStoreEngine) async throws {
        typealias MailSection = ArraySection<Folder, Message>
        let first = try await store.commit(Self.mail, to: "mail", expectedVersion: nil, author: "ana", message: nil)
        #expect(first.version == 1)
        #expect(try await store.snapshot(of: "mail", as: MailSection.self) == Self.mail)
        #expect(try await store.snapshot(of: "mail", at: nil).sections[0].elements[0].id == "1")

        let edited = try await store.edit("mail", as: MailSection.self, author: "ana") { draft in
            try draft.reloadElement(Message(id: 1, text: "hi", unread: false))
            try draft.append(Message(id: 3, text: "new", unread: true), toSection: "inbox")
            try draft.removeElement(2)
        }
        #expect(edited.version == 2 && edited.changeCount == 3)
        let head = try await store.snapshot(of: "mail", as: MailSection.self)
        #expect(head[0].elements == [Message(id: 1, text: "hi", unread: false), Message(id: 3, text: "new", unread: true)])
        #expect(try await store.snapshot(of: "mail", at: 1, as: MailSection.self) == Self.mail)

        // A head that does not decode as the type is refused, and the edit writes nothing.
        try await store.commit([ListSection(model: ListItem(id: "x", json: ["oops": true]), elements: [])], to: "other",
            expectedVersion: nil, author: nil, message: nil)
        await #expect(throws: StoreError.self) {
            try await store.edit("other", as: MailSection.self, author: nil) { _ in }
        }
        #expect(try await store.summary(of: "other").version == 1)
    }

    @Test func typedModelsGoThroughTheAsyncAPIOfEveryEngine() async throws {
        let directory = try TemporaryDirectory()
        try await typedRoundTrip(try Store(path: directory.file("typed.liststore")))
        try await typedRoundTrip(InMemoryStore(name: "typed"))
    }

    @Test func aStoreOpensAtAFileURLAndRefusesAnyOtherURL() async throws {
        let directory = try TemporaryDirectory()
        let url = URL(fileURLWithPath: directory.file("at url.liststore"))
        let store = try Store(url: url)
        try await store.commit(linearList(2), to: "l")
        #expect(store.path == url.path && FileManager.default.fileExists(atPath: url.path))
        #expect { try Store(url: URL(string: "https://example.com/a.liststore")!) } throws: { ($0 as? StoreError)?.code == .invalidArgument }
    }

    @Test func draftsNameSectionsAndElementsByPlainStrings() async throws {
        let store = InMemoryStore(name: "drafts")
        try await store.commit(
            [
                ListSection(model: ListItem(id: "today"), elements: [ListItem("m1", 1), ListItem("m2", 2)]),
                ListSection(model: ListItem(id: "later"), elements: [ListItem("m3", 3)]),
            ], to: "inbox", expectedVersion: nil, author: nil, message: nil)
        // Ids held in variables, as an app has them (not literals).
        let ids = ["today", "later", "m1", "m2", "m3", "missing"]
        try await store.edit("inbox", expectedVersion: nil, author: nil, message: nil) { draft in
            #expect(draft.sectionIndex(ids[1]) == 1)
            #expect(draft.elementPath(ids[4]) == ElementPath(section: 1, element: 0))
            try draft.moveElement(ids[2], to: ElementPath(section: 1, element: 1))
            try draft.removeElement(ids[3])
            try draft.append(ListItem("m4", 4), toSection: ids[0])
            try draft.moveSection(ids[1], to: 0)
            #expect { try draft.removeElement(ids[5]) } throws: { ($0 as? StoreError)?.code == .invalidEdit }
            #expect { try draft.removeSection(ids[5]) } throws: { ($0 as? StoreError)?.code == .invalidEdit }
        }
        let head = try await store.snapshot(of: "inbox", at: nil).sections
        #expect(head.map { [$0.model.id] + $0.elements.map(\.id) } == [["later", "m3", "m1"], ["today", "m4"]])
        try await store.edit("inbox", expectedVersion: nil, author: nil, message: nil) { draft in try draft.removeSection(ids[0]) }
        #expect(try await store.snapshot(of: "inbox", at: nil).sections.map(\.model.id) == ["later"])
    }
}
