/// Reads a `text/event-stream` body (Server-Sent Events, as `liststore serve` writes them on
/// `GET /v1/lists/<list>/events`) as it arrives, in pieces of any size: lines end with LF, CRLF or
/// CR; `field: value` lines build an event and a blank line dispatches it; comments (`:` first) are
/// skipped, and so is an event without data, unless it sets an id (it is answered with type "",
/// the id, no data). One event larger than `maxEventBytes` is an error.
///
/// ```swift
/// var parser = _EventStreamParser(maxEventBytes: 1 << 20)
/// for event in try parser.feed(Array("id: 3\nevent: commit\ndata: {}\n\n".utf8)) { print(event.type, event.id ?? "-") }
/// ```
/// - Complexity: O(bytes fed).
struct _EventStreamParser: Sendable {
    /// One dispatched event.
    struct Event: Sendable, Hashable {
        /// Its `event:` type (`message` when it names none).
        var type: String
        /// The last `id:` seen so far in the stream, if any.
        var id: String?
        /// Its `data:` lines, joined with LF.
        var data: [UInt8]
    }

    /// An event larger than the limit.
    struct TooLarge: Error, CustomStringConvertible {
        let limit: Int
        var description: String { "an event of the stream is larger than \(limit) bytes" }
    }

    /// The largest event accepted (its data and the line being read).
    let maxEventBytes: Int
    private var line: [UInt8] = []
    private var afterCR = false
    private var type: String?
    private var id: String?
    private var data: [UInt8] = []
    private var hasData = false
    private var idInBlock = false

    init(maxEventBytes: Int) {
        self.maxEventBytes = maxEventBytes
    }

    /// The events that `bytes`, the next piece of the body, completes.
    /// - Throws: `TooLarge` when an event grows past `maxEventBytes` (the parser is then unusable).
    mutating func feed(_ bytes: some Sequence<UInt8>) throws -> [Event] {
        var events: [Event] = []
        for byte in bytes {
            if byte == UInt8(ascii: "\n"), afterCR {  // the LF of a CRLF
                afterCR = false
                continue
            }
            afterCR = byte == UInt8(ascii: "\r")
            if byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") {
                if let event = endLine() { events.append(event) }
                continue
            }
            line.append(byte)
            if line.count + data.count > maxEventBytes { throw TooLarge(limit: maxEventBytes) }
        }
        return events
    }

    /// Takes in the line read; returns the event a blank line dispatches.
    private mutating func endLine() -> Event? {
        defer { line.removeAll(keepingCapacity: true) }
        guard !line.isEmpty else {
            defer {
                type = nil
                data.removeAll(keepingCapacity: true)
                hasData = false
                idInBlock = false
            }
            // A block with an id and no data dispatches nothing in a browser, but moves its last
            // event id: it is answered as an event of type "" (a feed's keep-alive moves its cursor).
            return hasData ? Event(type: type ?? "message", id: id, data: data) : idInBlock ? Event(type: "", id: id, data: []) : nil
        }
        if line.first == UInt8(ascii: ":") { return nil }
        let colon = line.firstIndex(of: UInt8(ascii: ":")) ?? line.endIndex
        let field = String(decoding: line[..<colon], as: UTF8.self)
        var value = colon < line.endIndex ? line[(colon + 1)...] : []
        if value.first == UInt8(ascii: " ") { value = value.dropFirst() }
        switch field {
        case "data":
            if hasData { data.append(UInt8(ascii: "\n")) }
            data.append(contentsOf: value)
            hasData = true
        case "event":
            type = String(decoding: value, as: UTF8.self)
        case "id" where !value.contains(0):
            id = String(decoding: value, as: UTF8.self)
            idInBlock = true
        default:
            break  // `retry:` and unknown fields
        }
        return nil
    }
}
