import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Plain TCP on loopback, for what an HTTP client library hides: reading an event stream as it
/// comes, and a server that breaks off its answers.
enum RawSocket {
    /// Sends `request` to 127.0.0.1:`port` and reads until `done` holds for what came (or the
    /// connection closes, or `timeout` passes); returns what came. The blocking reads run on a
    /// thread of their own, never on one of the few threads that run tasks (and the server).
    static func exchange(
        port: Int, _ request: String, timeout: Duration, until done: @escaping @Sendable (String) -> Bool
    ) async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Result { try blockingExchange(port: port, request, timeout: timeout, until: done) })
            }.start()
        }
    }

    private static func blockingExchange(port: Int, _ request: String, timeout: Duration, until done: (String) -> Bool) throws -> String {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        defer { close(fd) }
        var address = loopback(port: port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw POSIXError(.ECONNREFUSED) }
        var time = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        let bytes = Array(request.utf8)
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
        var received = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 65536)
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n == 0 { break }
            if n > 0 {
                received += buffer[0..<n]
                if done(String(decoding: received, as: UTF8.self)) { break }
            }
        }
        return String(decoding: received, as: UTF8.self)
    }

    /// A socket listening on a free loopback port, and the port.
    static func listening() throws -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = loopback(port: 0)
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(fd, $0, &length) }
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}

/// A server on a free loopback port that answers every request with the start of a 200 answer
/// announcing more bytes than it sends, then closes the connection: a server that goes away
/// mid-answer.
final class BreakingServer: @unchecked Sendable {
    let port: Int
    private let fd: Int32

    init() throws {
        let (fd, port) = try RawSocket.listening()
        self.fd = fd
        self.port = port
        // The accepting thread owns the socket: `deinit` only shuts it down, which ends the blocked
        // `accept`, and the thread closes it. Closed anywhere else, its number could be reused by
        // another test's socket while this thread still accepts on it, taking that one's clients.
        Thread { [fd] in
            defer { close(fd) }
            while true {
                let client = accept(fd, nil, nil)
                if client < 0 {
                    if errno == EINTR || errno == ECONNABORTED { continue }
                    return
                }
                var buffer = [UInt8](repeating: 0, count: 65536)
                _ = buffer.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
                let answer = Array("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n{\"commits\":[{\"ver".utf8)
                _ = answer.withUnsafeBytes { send(client, $0.baseAddress, $0.count, 0) }
                close(client)
            }
        }.start()
    }

    deinit {
        shutdown(fd, Int32(SHUT_RDWR))
    }
}
