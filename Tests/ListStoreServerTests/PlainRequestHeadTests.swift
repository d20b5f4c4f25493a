import HTTPTypes
import ListDiffTestSupport
@testable import ListStoreServer
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

/// `PlainRequestHead` against NIO's HTTP decoder (the one Hummingbird's connections use): every
/// head it reads without a body, the decoder reads the same way and ends the request where it
/// does, or refuses (a method it does not know: never a poll), so the handler in front of the
/// decoder and the decoder never disagree on a connection's requests.
@Suite struct PlainRequestHeadTests {
    /// What NIO's decoder makes of `bytes`: the first request's head and whether the request ended
    /// within them; `nil` when the decoder refuses them.
    static func decoded(_ bytes: [UInt8]) -> (head: HTTPRequestHead?, ended: Bool)? {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(HTTPRequestDecoder()))
        defer { _ = try? channel.finish() }
        do {
            try channel.writeInbound(ByteBuffer(bytes: bytes))
            var head: HTTPRequestHead?
            while let part = try channel.readInbound(as: HTTPServerRequestPart.self) {
                switch part {
                case .head(let h): head = h
                case .body: break
                case .end: return (head, true)
                }
            }
            return (head, false)
        } catch {
            return nil
        }
    }

    /// The fields that leave a request to the framework (`Connection` unless it is one
    /// `Connection: keep-alive`).
    static let frameworkFields = ["Content-Length", "Transfer-Encoding", "Upgrade", "Expect"]

    /// Whether NIO's reading of a head leaves it to the framework.
    static func needsTheFramework(_ head: HTTPRequestHead) -> Bool {
        let connection = head.headers["Connection"].map { HTTPField(name: HTTPField.Name("Connection")!, value: $0).value.lowercased() }
        return frameworkFields.contains { head.headers.contains(name: $0) } || head.method == .CONNECT || !(connection.isEmpty || connection == ["keep-alive"])
    }

    static func parse(_ bytes: [UInt8], limit: Int = 16_384) -> PlainRequestHead.Parsed {
        bytes.withUnsafeBytes { PlainRequestHead.parse($0, limit: limit) }
    }

    /// A random request head, plainly written or, with `mutate`, spoilt in one of the ways a head
    /// may be: a bare LF or CR, a folded line, a byte outside ASCII, a space before a colon,
    /// another version, a body's fields.
    static func randomHead(_ random: inout SplitMix64, mutate: Bool) -> [UInt8] {
        let methods = ["GET", "HEAD", "POST", "DELETE", "PUT", "OPTIONS", "PATCH", "CONNECT"]
        let pathBytes = Array("abcXYZ019-._~!$&'()*+,;=:@/%?".utf8)
        var target = "/"
        for _ in 0..<Int.random(in: 0...30, using: &random) { target.append(Character(Unicode.Scalar(pathBytes.randomElement(using: &random)!))) }
        if Bool.random(using: &random) { target = "/v1/lists/l/journal?since=\(Int.random(in: 0...99, using: &random))&wait=30" }
        let names = ["Host", "Authorization", "Accept", "User-Agent", "X-Trace_id", "origin", "CONNECTION", "content-length", "Transfer-Encoding", "Upgrade", "Expect", "host", "Connection"]
        let valueBytes = Array("abc XYZ 0123 -_./:;=,\"'()[]{}<>?\t!#$%&*+^`|~".utf8)
        var lines = ["\(methods.randomElement(using: &random)!) \(target) HTTP/1.1"]
        for _ in 0..<Int.random(in: 0...6, using: &random) {
            var value = ""
            for _ in 0..<Int.random(in: 0...20, using: &random) { value.append(Character(Unicode.Scalar(valueBytes.randomElement(using: &random)!))) }
            let name = names.randomElement(using: &random)!
            if name.lowercased() == "content-length" { value = String(Int.random(in: 0...3, using: &random)) }
            if name == "Connection" { value = ["keep-alive", "Keep-Alive", "close", "keep-alive, Upgrade"].randomElement(using: &random)! }
            lines.append("\(name):\(Bool.random(using: &random) ? " " : "")\(value)")
        }
        var bytes = Array((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8)
        guard mutate else { return bytes }
        let at = Int.random(in: 0..<bytes.count, using: &random)
        switch Int.random(in: 0..<8, using: &random) {
        case 0: bytes.insert(UInt8(ascii: "\n"), at: at)
        case 1: bytes.insert(UInt8(ascii: "\r"), at: at)
        case 2: bytes.insert(UInt8.random(in: 0x80...0xFF, using: &random), at: at)
        case 3: bytes.insert(UInt8.random(in: 0x00...0x1F, using: &random), at: at)
        case 4:
            if let colon = bytes.firstIndex(of: UInt8(ascii: ":")) { bytes.insert(UInt8(ascii: " "), at: colon) }
        case 5:
            // A folded line: a field's value going on in a line that starts with a space.
            if let end = bytes.indices.dropLast(4).first(where: { bytes[$0] == 13 && $0 > 20 }) { bytes.insert(contentsOf: Array("\r\n folded".utf8), at: end) }
        case 6:
            if let one = bytes.firstIndex(of: UInt8(ascii: "1")), bytes[..<one].contains(UInt8(ascii: "/")) { bytes[one] = UInt8(ascii: "0") }
        default:
            bytes.remove(at: at)
        }
        return bytes
    }

    /// Thousands of random heads, plain and spoilt: each one read is read alike by NIO's decoder,
    /// ends the request where the decoder ends it when it names no body, and every shorter prefix
    /// of it is incomplete; a plain head is always read.
    @Test(arguments: 0..<4) func headsReadAreReadAlikeByNIOsDecoder(seed: UInt64) throws {
        var random = SplitMix64(seed: 0x4EAD + seed)
        var read = 0, refused = 0
        for round in 0..<2_500 {
            let mutate = round % 2 == 1
            let bytes = Self.randomHead(&random, mutate: mutate)
            let parsed = Self.parse(bytes)
            guard case .head(let head) = parsed else {
                #expect(mutate, "a plain head is not read: \(String(decoding: bytes, as: UTF8.self).debugDescription)")
                refused += 1
                continue
            }
            read += 1
            let text = String(decoding: bytes, as: UTF8.self).debugDescription
            // A head naming a body goes on to the decoder with everything behind it: the decoder
            // alone reads that request (and may refuse it).
            guard !head.needsTheFramework else {
                if let nioHead = Self.decoded(bytes)?.head {
                    #expect(Self.needsTheFramework(nioHead), "\(text)")
                }
                continue
            }
            guard let nio = Self.decoded(Array(bytes[..<head.length])), let nioHead = nio.head else {
                // The decoder refuses what it does not know (a method, a target not starting with
                // a slash): then the route answers it 400, and it is no poll the handler may take.
                #expect(head.method != "GET" || LongPollHandler.journalTarget(head.target[...].utf8) == nil, "NIO's decoder refuses a poll read: \(text)")
                continue
            }
            #expect(nio.ended, "NIO's decoder does not end the request with its head: \(text)")
            #expect(nioHead.method.rawValue == head.method && nioHead.uri == head.target && nioHead.version == .http1_1, "\(text)")
            // The values as the route sees them (`HTTPFields`, which trims them).
            let hosts = nioHead.headers["Host"].map { HTTPField(name: HTTPField.Name("Host")!, value: $0).value }
            let authorizations = nioHead.headers["Authorization"].map { HTTPField(name: .authorization, value: $0).value }
            #expect(head.host == hosts.last && head.authorization == authorizations.last, "\(text)")
            #expect(head.hasRouteFields == (hosts.count > 1 || authorizations.count > 1 || nioHead.headers.contains(name: "Origin")), "\(text)")
            #expect(!Self.needsTheFramework(nioHead), "\(text)")
            for cut in stride(from: 0, to: head.length, by: max(1, head.length / 16)) {
                #expect(Self.parse(Array(bytes[..<cut])) == .incomplete, "a prefix of \(cut) bytes of \(text)")
            }
        }
        #expect(read > 1_300 && refused > 100, "read \(read), refused \(refused)")
    }

    /// The handler reads a head only once the bytes that came may end it
    /// (`PlainRequestHead.mayEnd(_:from:)`): over random heads, plain and spoilt, coming in
    /// random pieces, a piece after which it does not read them never completes a head, nor
    /// brings a byte that spoils any head (an LF without its CR, a control byte, a byte outside
    /// ASCII: those are refused at once; other spoilt heads when their end comes).
    @Test(arguments: 0..<2) func headsComingInPiecesAreReadAsSoonAsTheyCanBe(seed: UInt64) throws {
        var random = SplitMix64(seed: 0x91EC + seed)
        var skipped = 0
        for round in 0..<2_000 {
            let bytes = Self.randomHead(&random, mutate: round % 2 == 1) + Array("GET / HTTP/1.1\r\n".utf8)
            var buffer = ByteBuffer()
            var searched = 0, at = 0
            while at < bytes.count {
                let piece = min(bytes.count - at, Int.random(in: 1...40, using: &random))
                buffer.writeBytes(bytes[at..<(at + piece)])
                at += piece
                let parsed = Self.parse(Array(buffer.readableBytesView))
                if buffer.withUnsafeReadableBytes({ PlainRequestHead.mayEnd($0, from: searched) }) {
                    if parsed != .incomplete { break }
                } else {
                    skipped += 1
                    let seen = Array(buffer.readableBytesView)
                    let text = String(decoding: bytes, as: UTF8.self).debugDescription
                    #expect(!Self.spoils(seen), "skipped after \(at) bytes of \(text)")
                    if case .head = parsed { Issue.record("a whole head skipped after \(at) bytes of \(text)") }
                }
                searched = buffer.readableBytes
            }
        }
        #expect(skipped > 1_000)
    }

    /// Whether `bytes` hold a byte no plainly written head has there: a first byte no method
    /// starts with, an LF without its CR, a control byte, a byte outside ASCII.
    static func spoils(_ bytes: [UInt8]) -> Bool {
        if let first = bytes.first, !PlainRequestHead.tokenBytes[Int(first)] { return true }
        for i in bytes.indices {
            let byte = bytes[i]
            if byte >= 0x7F { return true }
            if byte == 10 {
                if i == 0 || bytes[i - 1] != 13 { return true }
            } else if byte < 0x20, byte != 9, byte != 13 {
                return true
            }
        }
        return false
    }

    /// Named cases: what a head needs to be read, and what makes it unsupported or incomplete.
    @Test func namedHeads() {
        let poll = "GET /v1/lists/l/journal?since=1&wait=30 HTTP/1.1\r\nHost: h:1\r\nAuthorization: Bearer t\r\nAccept: */*\r\n\r\n"
        guard case .head(let head) = Self.parse(Array(poll.utf8)) else { Issue.record("not read"); return }
        #expect(head == PlainRequestHead(length: poll.utf8.count, method: "GET", target: "/v1/lists/l/journal?since=1&wait=30", host: "h:1", authorization: "Bearer t"))
        // Two requests back to back: the first one's length.
        guard case .head(let first) = Self.parse(Array((poll + poll).utf8)) else { Issue.record("not read"); return }
        #expect(first.length == poll.utf8.count)
        #expect(Self.parse(Array("GET / HTTP/1.1\r\nHost: h\r\n".utf8)) == .incomplete)
        #expect(Self.parse(Array("GET / HTTP/1.0\r\n\r\n".utf8)) == .unsupported)
        #expect(Self.parse(Array("GET / HTTP/1.1\nHost: h\n\n".utf8)) == .unsupported)
        #expect(Self.parse(Array("GET / HTTP/1.1\r\nHost : h\r\n\r\n".utf8)) == .unsupported)
        #expect(Self.parse(Array("GET / HTTP/1.1\r\nX: a\r\n b\r\n\r\n".utf8)) == .unsupported)
        #expect(Self.parse(Array("GET / HTTP/1.1\r\nX: caf\u{E9}\r\n\r\n".utf8)) == .unsupported)
        // Longer than the limit, whole or not.
        let long = Array("GET /\(String(repeating: "a", count: 100)) HTTP/1.1\r\n\r\n".utf8)
        #expect(Self.parse(long, limit: 64) == .unsupported)
        #expect(Self.parse(Array(long.prefix(70)), limit: 64) == .unsupported)
        guard case .head(let fields) = Self.parse(Array("GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)) else {
            Issue.record("not read")
            return
        }
        #expect(fields.hasRouteFields && fields.needsTheFramework)
        guard case .head(let keptAlive) = Self.parse(Array("GET / HTTP/1.1\r\nConnection:  Keep-Alive \r\n\r\n".utf8)) else {
            Issue.record("not read")
            return
        }
        #expect(!keptAlive.needsTheFramework && !keptAlive.hasRouteFields)
        for head in [
            "CONNECT h:1 HTTP/1.1\r\nHost: h:1\r\n\r\n", "GET / HTTP/1.1\r\nConnection: close\r\n\r\n",
            "GET / HTTP/1.1\r\nConnection: keep-alive\r\nConnection: keep-alive\r\n\r\n",
        ] {
            guard case .head(let framework) = Self.parse(Array(head.utf8)) else {
                Issue.record("not read")
                return
            }
            #expect(framework.needsTheFramework && !framework.hasRouteFields, "\(head)")
        }
    }
}
