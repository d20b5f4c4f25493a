import Foundation
import ListDiffTestSupport
import ListJSON
@_spi(Replication) import ListStore
import ListStoreTestSupport
import ListStoreWire
import Testing

/// A page's records as a client reads them from the wire (`WireDocument.decodePageRecord`): a record
/// written as a server writes one is taken as it is, its content not parsed, and must read as the
/// parser reads it; any other text is read by the parser; a content that is not canonical JSON is
/// carried as it came and refused by the store it lands in.
@Suite struct PageRecordWireTests {
    /// Ids and contents made to trip a careless scanner.
    static let awkward = ["{", "}", "[", "]", "\"", "\\", "\\\"", "a,b", "\",\"id\":\"x", "é", "\u{1F600}", ":", " ", "\u{01}", "\n", ""]

    /// The records of a page read element by element, as `HTTPSource` reads them.
    static func streamedRecords(_ bytes: [UInt8]) throws -> [ListPage.Record] {
        var reader = StreamedArrayReader(member: "records", maxElementBytes: 1 << 20, maxOtherBytes: 1 << 10)
        var records: [ListPage.Record] = []
        try reader.read(bytes) { records.append(try WireDocument.decodePageRecord($0)) }
        _ = try reader.finish()
        return records
    }

    @Test func recordsReadAsTheyAreReadWhenParsed() throws {
        var rng = SplitMix64(seed: 0x9A6E_2EC0)
        for round in 0..<2_000 {
            var records: [ListPage.Record] = []
            for k in 0..<Int.random(in: 1...8, using: &rng) {
                let id = (0..<Int.random(in: 0...3, using: &rng)).map { _ in Self.awkward.randomElement(using: &rng)! }.joined() + "\(k)"
                let text = Self.awkward.randomElement(using: &rng)!
                let content: JSONValue =
                    switch Int.random(in: 0..<6, using: &rng) {
                    case 0: .string(text)
                    case 1: .number(JSONNumber(Int.random(in: -1000...1000, using: &rng)))
                    case 2: [.string(text), ["a,b": .string(text)], .null]
                    case 3: .null
                    case 4: .bool(round % 2 == 0)
                    default: ["text": .string(text), "n": JSONValue(k), "nested": ["x": [JSONValue(k)]]]
                    }
                records.append(ListPage.Record(isSection: k == 0 || Bool.random(using: &rng), item: ListItem(id: id, json: content)))
            }
            let page = ListPage(
                list: "l", version: 1, digest: ListDigest(hex: String(repeating: "0", count: 64)), listID: nil,
                store: StoreIdentity(uuid: "u", epoch: 1), sectionCount: 1, elementCount: 1, after: nil, records: records, next: nil)
            let bytes = WireDocument.listPage(page)
            let streamed = try Self.streamedRecords(bytes)
            #expect(streamed == records)
            #expect(streamed == (try WireDocument.decodeListPage(bytes)).records)
            if streamed != records { break }
        }
    }

    @Test func recordsWrittenOtherwiseAreParsedOrRefused() throws {
        func record(_ text: String) throws -> ListPage.Record { try WireDocument.decodePageRecord(Array(text.utf8)) }
        // Written otherwise, read by the parser: members in another order, blanks, an escaped id.
        #expect(try record(#"{"id":"a","content":{"b":1,"a":2}}"#) == ListPage.Record(isSection: false, item: ListItem(id: "a", json: ["a": 2, "b": 1])))
        #expect(try record(#"{ "content" : 1 , "id" : "a" , "section" : true }"#) == ListPage.Record(isSection: true, item: ListItem(id: "a", json: 1)))
        #expect(try record(#"{"content":1,"id":"a\u0041\"","section":false}"#) == ListPage.Record(isSection: false, item: ListItem(id: "aA\"", json: 1)))
        // Refused.
        for text in [
            #"{"content":,"id":"a"}"#, #"{"content":1,"id":"a","section":"yes"}"#, #"{"content":1}"#, #"{"content":1,"id":7}"#,
            "{\"content\":1,\"id\":\"a\u{01}\"}", #"{"content":1],"id":"a"}"#, #"{"content":1,"id":"a"}x"#,
        ] {
            #expect(throws: (any Error).self, "\(text)") { try record(text) }
        }
        #expect(throws: (any Error).self) { try WireDocument.decodePageRecord(Array(#"{"content":1,"id":""#.utf8) + [0xFF] + Array(#""}"#.utf8)) }
    }

    @Test func aContentThatIsNotCanonicalIsCarriedAsItCameAndRefusedByTheStore() async throws {
        // Written as a server writes a record, so taken as it is: its content is not canonical.
        let record = try WireDocument.decodePageRecord(Array(#"{"content":{"b":1, "a":2},"id":"a","section":true}"#.utf8))
        #expect(record.item.content == Array(#"{"b":1, "a":2}"#.utf8))
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        let page = ListPage(
            list: "l", version: 1, digest: ListDigest(hex: String(repeating: "0", count: 64)), listID: nil,
            store: StoreIdentity(uuid: "u", epoch: 1), sectionCount: 1, elementCount: 0, after: nil, records: [record], next: nil)
        do {
            _ = try await store.stage(page, of: "l", reason: "initial")
            Issue.record("a page whose content is not canonical JSON landed")
        } catch let error as StoreError {
            #expect(error.code == .invalidSnapshot)
        }
        #expect(try await store.stagedSync(of: "l") == nil)
    }
}
