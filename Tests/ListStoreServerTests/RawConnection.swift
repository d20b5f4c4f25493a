import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One TCP connection to 127.0.0.1 driven by hand, for clients an HTTP library would not be: one
/// that never reads, one that sends its headers a byte at a time, one that stays silent. Every call
/// blocks, so tests call them through `run(_:)`, on a thread of their own.
final class RawConnection: @unchecked Sendable {
    let fd: Int32

    /// Connects; with `receiveBuffer`, the socket's receive buffer is set that small first (a
    /// client that does not read then stops the server's writes sooner).
    init(port: Int, receiveBuffer: Int32? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        if var size = receiveBuffer {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = RawSocket.loopback(port: port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        // Not closed here: an initializer that throws once every property is set still runs
        // `deinit`, which closes it (twice would close whatever descriptor took its number).
        guard connected == 0 else { throw POSIXError(.ECONNREFUSED) }
        var time = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit {
        close(fd)
    }

    /// Runs blocking work on a thread of its own, never on one of the threads that run tasks.
    static func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try work() }) }.start()
        }
    }

    /// Sends `text`; `false` when the connection is gone.
    @discardableResult
    func send(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { sendAll(fd, $0) } == bytes.count
    }

    /// Sends `bytes`; `false` when the connection is gone.
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { sendAll(fd, $0) } == bytes.count
    }

    /// Ends the sending side (the server reads end of file).
    func shutdownWrite() {
        shutdown(fd, Int32(SHUT_WR))
    }

    /// Reads until `done` holds for what came last (the bytes of the last read and the 4 KiB before
    /// them: `done` looks for short marks), the server closes, or `timeout` passes; returns all that
    /// came.
    func receive(timeout: Duration, until done: (String) -> Bool = { _ in false }) -> (text: String, closed: Bool) {
        var received = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 65536)
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) { return (String(decoding: received, as: UTF8.self), true) }
            if n > 0 {
                received += buffer[0..<n]
                if done(String(decoding: received.suffix(n + 4096), as: UTF8.self)) { break }
            }
        }
        return (String(decoding: received, as: UTF8.self), false)
    }

    /// Reads until `count` bytes came, the server closes, or `timeout` passes; returns what came.
    func receive(upTo count: Int, timeout: Duration) -> [UInt8] {
        var received = [UInt8]()
        received.reserveCapacity(count)
        var buffer = [UInt8](repeating: 0, count: 65536)
        let deadline = ContinuousClock.now + timeout
        while received.count < count, ContinuousClock.now < deadline {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, min($0.count, count - received.count), 0) }
            if n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) { break }
            if n > 0 { received += buffer[0..<n] }
        }
        return received
    }

    /// Sends `byte` every `interval` (a client dribbling its request head) until the server closes
    /// the connection or `timeout` passes; whether the server closed it.
    func dribble(_ byte: String, every interval: Duration, timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if !send(byte) { return true }
            if receive(timeout: interval).closed { return true }
        }
        return false
    }
}

/// An HTTP/1.1 answer as it came over the wire.
struct RawAnswer {
    var status: Int
    var headers: [String: String]
    var body: String

    /// Parses `text` (a whole answer with Content-Length); `nil` when it is not one.
    init?(_ text: String) {
        guard let split = text.range(of: "\r\n\r\n") else { return nil }
        let lines = text[..<split.lowerBound].components(separatedBy: "\r\n")
        let statusLine = lines[0].split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { return nil }
        self.status = status
        headers = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        body = String(text[split.upperBound...])
    }

    /// Sends one request on a new connection (`Connection: close`) and reads the whole answer.
    static func exchange(port: Int, _ head: String, body: String = "", timeout: Duration = .seconds(20)) async throws -> RawAnswer {
        let text = try await RawConnection.run {
            let connection = try RawConnection(port: port)
            connection.send(head + "Connection: close\r\n\r\n" + body)
            return connection.receive(timeout: timeout).text
        }
        guard let answer = RawAnswer(text) else { throw POSIXError(.EBADMSG) }
        return answer
    }

    /// The error code of a JSON error document body.
    var errorCode: String? {
        guard let data = body.data(using: .utf8),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let error = object["error"] as? [String: Any]
        else { return nil }
        return error["code"] as? String
    }
}

/// `send(2)` without SIGPIPE on a connection the server closed.
private func sendAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int {
    #if canImport(Glibc)
    return send(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
    #else
    var one: Int32 = 1
    setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
    return send(fd, bytes.baseAddress, bytes.count, 0)
    #endif
}
