import Foundation
import ListStore
import ListStoreTestSupport
import ListDiffTestSupport
import Testing

/// List and consumer names that would print like another name are refused when they are new.
@Suite(.heavyWork) struct NameRulesTests {
    static let lookalikes: [(name: String, why: String)] = [
        ("cafe\u{301}", "normalization form C"),  // NFD twin of "café"
        ("A\u{30A}ngstro\u{308}m", "normalization form C"),
        ("inbox\u{202E}txt.exe", "invisible formatting"),  // right-to-left override
        ("in\u{200B}box", "invisible formatting"),  // zero-width space
        ("\u{FEFF}inbox", "invisible formatting"),  // byte order mark
        ("a\u{2066}b\u{2069}", "invisible formatting"),  // isolates
        ("line\u{2028}break", "invisible formatting"),
        ("bell\u{7}", "control characters"),
        ("next\u{85}line", "control characters"),  // C1 NEL
    ]

    @Test(arguments: lookalikes)
    func newListsWithLookalikeNamesAreRefused(_ name: String, _ why: String) throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("n.liststore"))
        try store.commit(linearList(1), to: "café")
        #expect {
            try store.commit(linearList(2), to: name)
        } throws: { error in
            let error = error as? StoreError
            return error?.code == .invalidListName && error?.message.contains(why) == true
        }
        #expect(try store.lists().map(\.name) == ["café"])
        #expect {
            try store.registerConsumer(name, of: "café")
        } throws: { error in
            let error = error as? StoreError
            return error?.code == .invalidArgument && error?.message.contains(why) == true
        }
        #expect(try store.consumers(of: "café").isEmpty)
    }

    /// A new list's name has at most 64 segments (split by `/`), so that matching it against a
    /// pattern stays cheap; a consumer's name is not split.
    @Test func newListsWithTooManySegmentsAreRefused() throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("n.liststore"))
        let deepest = Array(repeating: "s", count: 64).joined(separator: "/")
        #expect(try store.commit(linearList(1), to: deepest).version == 1)
        for name in [deepest + "/s", deepest + "/", String(repeating: "/", count: 64)] {
            #expect {
                try store.commit(linearList(2), to: name)
            } throws: { error in
                let error = error as? StoreError
                return error?.code == .invalidListName && error?.message.contains("64 segments") == true
            }
        }
        #expect(try store.lists().map(\.name) == [deepest])
        #expect(try store.registerConsumer(deepest + "/s", of: deepest).name == deepest + "/s")
    }

    @Test func namesInNFCWithEmojiSequencesAreAccepted() throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("n.liststore"))
        let names = ["café", "Ångström", "家族👨\u{200D}👩\u{200D}👧", "עברית", "x y"]
        for name in names {
            #expect(try store.commit(linearList(1), to: name).version == 1)
            #expect(try store.registerConsumer(name, of: name).name == name)
        }
        #expect(Set(try store.lists().map(\.name)) == Set(names))
    }
}
