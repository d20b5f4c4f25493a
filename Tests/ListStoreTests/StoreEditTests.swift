import ListDiff
import ListJSON
import ListStore
import ListStoreTestSupport
import ListDiffTestSupport
import Testing

/// A typed model, as an app would have it.
struct Folder: StorableItem, Hashable {
    var id: String
    var title: String
    var differenceIdentifier: String { id }
    func isContentEqual(to source: Folder) -> Bool { title == source.title }
}

struct Message: StorableItem, Hashable {
    var id: Int
    var text: String
    var unread: Bool
    var differenceIdentifier: Int { id }
    func isContentEqual(to source: Message) -> Bool { text == source.text && unread == source.unread }
}

@Suite(.heavyWork) struct StoreEditTests {
    @Test func editAppliesDirectorOperationsAndCommitsOnce() throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("e.liststore"))
        try store.commit([
            ListSection(model: ListItem(id: "today", json: ["title": "Today"]), elements: [ListItem("m1", 1), ListItem("m2", 2)]),
            ListSection(model: ListItem(id: "later", json: ["title": "Later"]), elements: [ListItem("m3", 3)]),
        ], to: "inbox")
        let result = try store.edit("inbox", author: "ana", message: "tidy") { draft in
            draft.appendSection(ListItem(id: "done", json: ["title": "Done"]))
            try draft.append(ListItem("m4", 4), toSection: "today")
            try draft.moveElement("m1", to: ElementPath(section: 1, element: 0))
            try draft.reloadElement(ListItem("m3", 33))
            try draft.moveSection("later", to: 0)
            try draft.reloadSection(ListItem(id: "today", json: ["title": "Now"]))
            try draft.removeElement("m2")
        }
        #expect(result.version == 2)
        let head = try store.snapshot(of: "inbox").sections
        #expect(head.map(\.model.id) == ["later", "today", "done"])
        #expect(head.map { $0.elements.map(\.id) } == [["m1", "m3"], ["m4"], []])
        #expect(head[0].elements[1] == ListItem("m3", 33))
        #expect(try head[1].model.json == ["title": "Now"])
        let entry = try #require(try store.journal(of: "inbox", after: 1).entries.first)
        #expect(entry.author == "ana" && entry.message == "tidy")
    }

    @Test func failedEditChangesNothing() throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("e.liststore"))
        try store.commit(linearList(3), to: "l")
        #expect {
            try store.edit("l") { draft in
                try draft.removeElement("e0")
                try draft.removeElement("nope")
            }
        } throws: { error in
            (error as? StoreError)?.code == .invalidEdit
        }
        #expect(try store.snapshot(of: "l").sections == linearList(3))
        #expect(try store.snapshot(of: "l").version == 1)
        var draft = ListDraft(sections: linearList(2))
        #expect(throws: StoreError.self) { try draft.insert(ListItem("x"), at: ElementPath(section: 0, element: 3)) }
        #expect(throws: StoreError.self) { try draft.moveSection("s", to: 1) }
        #expect(draft.sections == linearList(2))
    }

    @Test func typedModelsRoundTripAsCanonicalJSON() throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("t.liststore"))
        let sections = [
            ArraySection(
                model: Folder(id: "inbox", title: "Inbox"),
                elements: [Message(id: 1, text: "hi / there", unread: true), Message(id: 2, text: "é", unread: false)]),
        ]
        try store.commit(sections, to: "mail")
        #expect(try store.snapshot(of: "mail", as: ArraySection<Folder, Message>.self) == sections)
        let raw = try store.snapshot(of: "mail").sections
        #expect(raw[0].elements[0].id == "1")
        #expect(String(decoding: raw[0].elements[0].content, as: UTF8.self) == #"{"id":1,"text":"hi / there","unread":true}"#)

        let result = try store.edit("mail", as: ArraySection<Folder, Message>.self) { draft in
            try draft.reloadElement(Message(id: 1, text: "hi / there", unread: false))
            try draft.append(Message(id: 3, text: "new", unread: true), toSection: "inbox")
        }
        #expect(result.changeCount == 2)
        let typed = try store.snapshot(of: "mail", as: ArraySection<Folder, Message>.self)
        #expect(typed[0].elements.map(\.id) == [1, 2, 3])
        #expect(typed[0].elements[0].unread == false)
    }
}
