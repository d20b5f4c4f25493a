import Foundation
import ListJSON
import ListStore
import ListStoreTestSupport
import ListDiffTestSupport
import Testing

/// One depth rule for what is written and what is read: a store accepts contents nested up to
/// `JSONParser.maxContentDepth` levels, and everything it wrote about them reads back.
@Suite(.heavyWork) struct ContentDepthTests {
    /// A JSON value `depth` levels deep, alternating objects and arrays.
    static func nested(_ depth: Int) -> JSONValue {
        var value: JSONValue = "leaf"
        for level in 0..<depth { value = level % 2 == 0 ? ["k": value] : [value] }
        return value
    }

    @Test func contentAtTheLimitCommitsAndReadsBackEverywhere() throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("deep.liststore"))
        let deep = Self.nested(JSONParser.maxContentDepth)
        let v1 = [ListSection(model: ListItem(id: "s", json: deep), elements: [ListItem(id: "e", json: deep)])]
        // Version 2 inserts a section whose element is deep (the deepest place a stage puts a
        // content) and updates another element to a deep content.
        let v2 = [
            ListSection(model: ListItem(id: "s", json: 1), elements: [ListItem(id: "e", json: 2), ListItem(id: "f", json: deep)]),
            ListSection(model: ListItem(id: "t", json: deep), elements: [ListItem(id: "g", json: deep)]),
        ]
        let v3 = [ListSection(model: ListItem(id: "t", json: 3), elements: [ListItem(id: "g", json: deep), ListItem(id: "e", json: deep)])]
        for sections in [v1, v2, v3] { #expect(try store.commit(sections, to: "l").changed) }

        #expect(try store.verify().isValid)
        #expect(try store.snapshot(of: "l", at: 1).sections == v1)
        #expect(try store.snapshot(of: "l", at: 2).sections == v2)
        var state: [ListSection] = []
        for entry in try store.journal(of: "l").entries {
            state = try entry.changeset(applyingTo: state).result
        }
        #expect(state == v3)
        let (_, head, changeset) = try store.changeset(of: "l", from: 1)
        #expect(head.version == 3)
        #expect(try changeset.apply(to: v1) == v3)
    }

    @Test func contentPastTheLimitIsRefusedAndWritesNothing() throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("deep.liststore"))
        try store.commit(linearList(2), to: "l")
        let tooDeep = Self.nested(JSONParser.maxContentDepth + 1)
        let attempts: [[ListSection]] = [
            [ListSection(model: ListItem(id: "s", json: tooDeep), elements: [])],
            [ListSection(model: ListItem("s"), elements: [ListItem(id: "e0", json: tooDeep)])],
            [ListSection(model: ListItem("s"), elements: [ListItem("e0"), ListItem(id: "new", json: tooDeep)])],
        ]
        for sections in attempts {
            #expect {
                try store.commit(sections, to: "l")
            } throws: { error in
                let error = error as? StoreError
                return error?.code == .invalidSnapshot && error?.message.contains("deeper than 500 levels") == true
            }
            #expect(throws: StoreError.self) { try store.commit(sections, to: "other") }
        }
        #expect(try store.summary(of: "l").version == 1)
        #expect(try store.lists().map(\.name) == ["l"])
        #expect(try store.verify().isValid)
    }
}
