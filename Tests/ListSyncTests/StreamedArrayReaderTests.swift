import Foundation
import ListDiffTestSupport
import ListJSON
import ListStore
import ListStoreTestSupport
import ListStoreWire
import Testing

/// The reader that lets a client decode a journal page entry by entry as it arrives
/// (`StreamedArrayReader`): whatever pieces the answer comes in, it finds the same entries as
/// decoding the whole answer, strings holding braces, brackets, quotes and escapes included.
@Suite struct StreamedArrayReaderTests {
    /// A journal page of `list` whose items' ids and contents are made to trip a careless scanner.
    static func page() async throws -> (bytes: [UInt8], page: JournalPage) {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        let awkward = ["{", "}", "[", "]", "\"", "\\", "\\\"", "a,b", "{\"commits\":[", "é", "\u{1F600}", ":", " "]
        var sections: [ListSection] = []
        for k in 0..<12 {
            let id = awkward[k % awkward.count] + "\(k)"
            let content: JSONValue = ["text": .string(awkward.reversed()[k % awkward.count]), "n": JSONValue(k)]
            sections.append(ListSection(model: ListItem(id: "s\(k % 3)", json: .null), elements: [ListItem(id: id, json: content)]))
            try await store.commit(sections, to: "l{\"]\\")
        }
        let page = try await store.journal(of: "l{\"]\\", after: 0, limit: 1000)
        return (WireDocument.journal(page, list: "l{\"]\\"), page)
    }

    @Test func anyPiecesGiveTheEntriesOfTheWholeAnswer() async throws {
        let (bytes, page) = try await Self.page()
        var rng = SplitMix64(seed: 0x57_4EA3)
        for round in 0..<2_000 {
            var reader = StreamedArrayReader(member: "commits", maxElementBytes: 1 << 20, maxOtherBytes: 1 << 10)
            var entries: [JournalEntry] = []
            var offset = 0
            while offset < bytes.count {
                let size = round == 0 ? 1 : Int.random(in: 1...max(1, bytes.count / Int.random(in: 1...40, using: &rng)), using: &rng)
                let piece = bytes[offset..<min(bytes.count, offset + size)]
                try reader.read(piece) { entries.append(try WireDocument.decodeCommitObject($0, list: "l{\"]\\")) }
                offset += piece.count
            }
            #expect(entries == page.entries)
            let frame = try WireDocument.decodeJournalFrame(try reader.finish())
            #expect(frame.list == "l{\"]\\" && frame.hasMore == page.hasMore)
            if entries != page.entries { break }
        }
    }

    @Test func answersThatAreNotWhatWasAskedAreRefusedAsSoonAsThatShows() throws {
        func failure(_ text: String, maxElementBytes: Int = 100, maxOtherBytes: Int = 100) -> String? {
            var reader = StreamedArrayReader(member: "commits", maxElementBytes: maxElementBytes, maxOtherBytes: maxOtherBytes)
            do {
                try reader.read(Array(text.utf8)) { _ in }
                _ = try reader.finish()
                return nil
            } catch {
                return String(describing: error)
            }
        }
        #expect(failure(#"{"commits":[{"a":1},{"b":2}],"hasMore":false}"#) == nil)
        #expect(failure(#"{"commits":[{"a":"\#(String(repeating: "x", count: 200))"}]}"#)?.contains("larger than 100 bytes") == true)
        #expect(failure(#"{"list":"\#(String(repeating: "x", count: 200))"}"#)?.contains("members are larger") == true)
        #expect(failure(#"{"commits":[1,2]}"#)?.contains("is not an object") == true)
        #expect(failure(#"{"commits":["x"]}"#)?.contains("is not an object") == true)
        #expect(failure(#"{"commits":["{"]}"#)?.contains("is not an object") == true)
        #expect(failure(#"{"commits":[{}{}]}"#)?.contains("without a comma") == true)
        #expect(failure(#"{"commits":[,{}]}"#)?.contains("comma out of place") == true)
        #expect(failure(#"{"commits":[{},]}"#)?.contains("comma out of place") == true)
        #expect(failure(#"{"commits":[{},,{}]}"#)?.contains("comma out of place") == true)
        #expect(failure(#"{"commits":[ { } , {"a":[1,{"b":"]"}]} ] }"#) == nil)
        // The rest must still be a page: its array there, left empty.
        #expect(throws: (any Error).self) { try WireDocument.decodeJournalFrame(Array(#"{"hasMore":false,"list":"l"}"#.utf8)) }
        #expect(throws: (any Error).self) { try WireDocument.decodeJournalFrame(Array(#"{"commits":{},"hasMore":false,"list":"l"}"#.utf8)) }
        #expect(failure(#"[{"commits":[]}]"#)?.contains("not one JSON object") == true)
        #expect(failure(#"{"commits":[{"a":1}"#)?.contains("ended before") == true)
        #expect(failure(#"{"commits":[]}{"#)?.contains("not one JSON object") == true)
        // Another member's array is kept as it is, not read as elements.
        var reader = StreamedArrayReader(member: "commits", maxElementBytes: 100, maxOtherBytes: 100)
        var elements: [String] = []
        try reader.read(Array(#"{"commitsX":[{"a":1}],"x":"commits","commits":[{"b":"]}"}]}"#.utf8)) {
            elements.append(String(decoding: $0, as: UTF8.self))
        }
        #expect(elements == [#"{"b":"]}"}"#])
        #expect(String(decoding: try reader.finish(), as: UTF8.self) == #"{"commitsX":[{"a":1}],"x":"commits","commits":[]}"#)
    }
}
