import Testing

@testable import ListSync

@Suite struct EventStreamParserTests {
    typealias Event = _EventStreamParser.Event

    /// A stream's events, whatever pieces its bytes arrive in.
    private func events(_ text: String, pieces: [Int], maxEventBytes: Int = 1 << 20) throws -> [Event] {
        var parser = _EventStreamParser(maxEventBytes: maxEventBytes)
        let bytes = Array(text.utf8)
        var events: [Event] = []
        var start = 0
        var k = 0
        while start < bytes.count {
            let end = min(bytes.count, start + max(1, pieces[k % pieces.count]))
            events += try parser.feed(bytes[start..<end])
            start = end
            k += 1
        }
        return events
    }

    private func event(_ type: String, _ id: String?, _ data: String) -> Event {
        Event(type: type, id: id, data: Array(data.utf8))
    }

    @Test func eventsCommentsAndLineEndings() throws {
        let text =
            ": keep-alive\n\nid: 2\nevent: commit\ndata: {\"version\":2}\n\n"
            + "id: 3\r\nevent: commit\r\ndata: a\r\ndata:b\r\n\r\n"
            + "event: error\rdata: {}\r\r"
            + "data\n\n"  // a field without a colon: empty data
            + "id: 9\n\n"  // no data: a browser dispatches nothing, but moves its last id: type ""
            + ": keep-alive\n\n"  // no id set in the block: nothing
            + "event: x\ndata: last\n"  // not ended by a blank line: not dispatched
        let expected = [
            event("commit", "2", "{\"version\":2}"), event("commit", "3", "a\nb"), event("error", "3", "{}"),
            event("message", "3", ""), event("", "9", ""),
        ]
        #expect(try events(text, pieces: [text.utf8.count]) == expected)
    }

    /// Whatever pieces the body arrives in (a CRLF split between two of them included), the events
    /// are the same: checked over a thousand random splits.
    @Test func piecesOfAnySizeGiveTheSameEvents() throws {
        let text = (1...20).map { "id: \($0)\r\nevent: commit\r\ndata: {\"v\":\($0)}\r\n\r\n: ping\r\n\r\n" }.joined()
        let whole = try events(text, pieces: [text.utf8.count])
        #expect(whole.count == 20)
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<1000 {
            let pieces = (0..<8).map { _ in Int.random(in: 1...40, using: &generator) }
            #expect(try events(text, pieces: pieces) == whole, "pieces \(pieces)")
        }
    }

    @Test func anEventLargerThanTheLimitIsAnError() throws {
        let small = "data: " + String(repeating: "x", count: 90) + "\n\n"
        #expect(try events(small, pieces: [7], maxEventBytes: 100).count == 1)
        let large = "data: " + String(repeating: "x", count: 60) + "\ndata: " + String(repeating: "y", count: 60) + "\n\n"
        #expect(throws: _EventStreamParser.TooLarge.self) { try events(large, pieces: [7], maxEventBytes: 100) }
    }
}
