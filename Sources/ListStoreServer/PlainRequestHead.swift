/// An HTTP/1.1 request head read from a connection's bytes by the narrowest grammar of RFC 9112:
/// what `LongPollHandler` reads in front of the HTTP decoder, so that a long poll costs no
/// decoding into Hummingbird's request.
///
/// A head is read only when every line of it is plainly written: `METHOD SP target SP HTTP/1.1`,
/// then `name: value` fields (a token, a colon, visible ASCII, spaces and tabs), each ended by CRLF,
/// then an empty line. Anything else (a bare CR or LF, a folded line, a byte outside ASCII, another
/// version, a head longer than `limit`) is `unsupported`, and the handler leaves the connection to
/// the decoder: every head read here is one the decoder reads the same way, so the two never
/// disagree on where a request ends. A request whose head names a body, a change of protocol or the
/// connection's end (`Content-Length`, `Transfer-Encoding`, `Upgrade`, `Expect`, a `Connection`
/// other than one `Connection: keep-alive`, which HTTP/1.1 means anyway, the method `CONNECT`) says
/// so in `needsTheFramework`: its end may not be its head's, or what follows it may not be requests.
///
/// ```swift
/// switch buffer.withUnsafeReadableBytes({ PlainRequestHead.parse($0, limit: 16_384) }) {
/// case .head(let head): print(head.method, head.target, head.length)
/// case .incomplete, .unsupported: break
/// }
/// ```
struct PlainRequestHead: Equatable {
    /// What `parse(_:limit:)` found.
    enum Parsed: Equatable {
        /// A whole head, plainly written.
        case head(PlainRequestHead)
        /// Plainly written so far, not whole yet, and within the limit.
        case incomplete
        /// Not plainly written, or longer than the limit.
        case unsupported
    }

    /// The number of bytes of the head, its empty last line included.
    var length: Int
    var method: String
    var target: String
    /// The value of `Host`, when the head has exactly one.
    var host: String?
    /// The value of `Authorization`, when the head has exactly one.
    var authorization: String?
    /// Whether the head has a field a poll taken beneath must not have: `Origin`, or a `Host` or
    /// `Authorization` given more than once.
    var hasRouteFields = false
    /// Whether the head names a body, a change of protocol or the connection's end (see the
    /// type's overview).
    var needsTheFramework = false

    /// Reads the head at the start of `bytes`.
    /// - Complexity: O(length of the head), at most O(`limit`).
    static func parse(_ bytes: UnsafeRawBufferPointer, limit: Int) -> Parsed {
        var reader = Reader(bytes: bytes, end: min(bytes.count, limit))
        let outcome = reader.head()
        switch outcome {
        case .head: return outcome
        case .unsupported: return .unsupported
        case .incomplete: return bytes.count >= limit ? .unsupported : .incomplete
        }
    }

    /// Whether `bytes` may end the head they begin, searching from `start` (the bytes before it
    /// were searched before): they hold the CR LF CR LF that ends a head, or a byte no plainly
    /// written head has there (a first byte that no method starts with, an LF without its CR, a
    /// control byte, a byte outside ASCII). Bytes that may not are `incomplete`, so a reader may
    /// skip `parse(_:limit:)` until they may (a head that trickles in then costs each byte once),
    /// and still refuses such bytes as soon as they come.
    /// - Complexity: O(bytes from `start`).
    static func mayEnd(_ bytes: UnsafeRawBufferPointer, from start: Int) -> Bool {
        guard let first = bytes.first else { return false }
        if start == 0, !tokenBytes[Int(first)] { return true }
        var i = max(0, start - 3)
        while i < bytes.count {
            let byte = bytes[i]
            if byte == Reader.lf {
                guard i > 0, bytes[i - 1] == Reader.cr else { return true }
                if i >= 3, bytes[i - 2] == Reader.lf, bytes[i - 3] == Reader.cr { return true }
            } else if byte != Reader.cr, !isLineByte(byte) {
                return true
            }
            i += 1
        }
        return false
    }

    /// Whether `byte` may be in a plainly written line: visible ASCII, a space or a tab.
    static func isLineByte(_ byte: UInt8) -> Bool {
        (byte >= 0x20 && byte < 0x7F) || byte == Reader.tab
    }

    /// The bytes of a token (RFC 9110 §5.6.2: a method, a field's name).
    static let tokenBytes: [Bool] = (0..<256).map { byte in
        guard let scalar = Unicode.Scalar(UInt32(byte)), byte < 0x80 else { return false }
        let character = Character(scalar)
        return character.isLetter || character.isNumber || "!#$%&'*+-.^_`|~".contains(character)
    }

    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        let end: Int
        var at = 0

        static let cr = UInt8(ascii: "\r"), lf = UInt8(ascii: "\n"), space = UInt8(ascii: " "), tab = UInt8(ascii: "\t")

        mutating func head() -> Parsed {
            // The request line.
            let methodStart = at
            while at < end, PlainRequestHead.tokenBytes[Int(bytes[at])] { at += 1 }
            guard at < end else { return .incomplete }
            guard at > methodStart, bytes[at] == Self.space else { return .unsupported }
            let method = text(methodStart, at)
            at += 1
            let targetStart = at
            while at < end, bytes[at] > 0x20, bytes[at] < 0x7F { at += 1 }
            guard at < end else { return .incomplete }
            guard at > targetStart, bytes[at] == Self.space else { return .unsupported }
            let target = text(targetStart, at)
            at += 1
            for expected in "HTTP/1.1\r\n".utf8 {
                guard at < end else { return .incomplete }
                guard bytes[at] == expected else { return .unsupported }
                at += 1
            }
            var head = PlainRequestHead(length: 0, method: method, target: target)
            var hosts = 0, authorizations = 0, connections = 0
            // The fields, up to the empty line.
            while true {
                guard at < end else { return .incomplete }
                if bytes[at] == Self.cr {
                    guard at + 1 < end else { return .incomplete }
                    guard bytes[at + 1] == Self.lf else { return .unsupported }
                    head.length = at + 2
                    if hosts > 1 || authorizations > 1 { head.hasRouteFields = true }
                    if connections > 1 { head.needsTheFramework = true }
                    if method == "CONNECT" { head.needsTheFramework = true }
                    return .head(head)
                }
                let nameStart = at
                while at < end, PlainRequestHead.tokenBytes[Int(bytes[at])] { at += 1 }
                guard at < end else { return .incomplete }
                guard at > nameStart, bytes[at] == UInt8(ascii: ":") else { return .unsupported }
                let nameEnd = at
                at += 1
                while at < end, bytes[at] == Self.space || bytes[at] == Self.tab { at += 1 }
                let valueStart = at
                var valueEnd = at
                while at < end, bytes[at] != Self.cr {
                    let byte = bytes[at]
                    guard PlainRequestHead.isLineByte(byte) else { return .unsupported }
                    at += 1
                    if byte != Self.space && byte != Self.tab { valueEnd = at }
                }
                guard at + 1 < end else { return .incomplete }
                guard bytes[at + 1] == Self.lf else { return .unsupported }
                at += 2
                switch Self.field(bytes, nameStart, nameEnd) {
                case .host?:
                    hosts += 1
                    head.host = text(valueStart, valueEnd)
                case .authorization?:
                    authorizations += 1
                    head.authorization = text(valueStart, valueEnd)
                case .route?:
                    head.hasRouteFields = true
                case .connection?:
                    connections += 1
                    if !Self.isKeepAlive(bytes, valueStart, valueEnd) { head.needsTheFramework = true }
                case .framework?:
                    head.needsTheFramework = true
                case nil:
                    break
                }
            }
        }

        func text(_ start: Int, _ end: Int) -> String {
            String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
        }

        /// The fields the head looks for, by what they tell.
        enum Field { case host, authorization, route, connection, framework }
        static let fields: [(name: [UInt8], field: Field)] = {
            let named: [(String, Field)] = [
                ("host", .host), ("authorization", .authorization), ("origin", .route), ("connection", .connection),
                ("content-length", .framework), ("transfer-encoding", .framework), ("upgrade", .framework), ("expect", .framework),
            ]
            return named.map { (Array($0.0.utf8), $0.1) }
        }()

        static let keepAlive = Array("keep-alive".utf8)

        /// Whether `bytes[start..<end]` is `keep-alive` (without regard to case).
        static func isKeepAlive(_ bytes: UnsafeRawBufferPointer, _ start: Int, _ end: Int) -> Bool {
            end - start == keepAlive.count && (0..<keepAlive.count).allSatisfy { bytes[start + $0] | 0x20 == keepAlive[$0] }
        }

        /// What the field named by `bytes[start..<end]` tells, when it is one the head looks for
        /// (names compared without regard to case).
        static func field(_ bytes: UnsafeRawBufferPointer, _ start: Int, _ end: Int) -> Field? {
            search: for (name, field) in fields where name.count == end - start {
                for i in 0..<name.count where bytes[start + i] | 0x20 != name[i] { continue search }
                return field
            }
            return nil
        }
    }
}
