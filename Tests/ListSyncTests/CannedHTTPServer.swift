import Foundation
import ListStoreCore
import ListStoreTestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A tiny HTTP server on a free loopback port for what a real server would not do: redirect
/// elsewhere, send an endless answer, stall. Each connection is served on a thread of its own by
/// `respond`, which gets the request's head (request line and headers) and writes what it likes to
/// the connection; the server records every request head it read.
final class CannedHTTPServer: @unchecked Sendable {
    // Safe: `fd` and `port` are set in `init` and then only read; `heads` and `closedByClient` are
    // reached through their locks.
    let port: Int
    private let fd: Int32
    private let heads = _Locked([String]())
    private let closedByClient = _Locked(0)
    /// Broadcast whenever a request is read or a client goes away (`wait(until:)`).
    private let changed = NSCondition()

    /// How `respond` talks to one client.
    struct Connection {
        let fd: Int32
        let server: CannedHTTPServer

        /// Sends `text`; returns `false` once the client has gone away.
        @discardableResult
        func send(_ text: String) -> Bool { send(Array(text.utf8)) }

        /// Sends `bytes`; returns `false` once the client has gone away (and records that).
        @discardableResult
        func send(_ bytes: [UInt8]) -> Bool {
            var offset = 0
            while offset < bytes.count {
                let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if n <= 0 {
                    server.closedByClient.withLock { $0 += 1 }
                    server.announceChange()
                    return false
                }
                offset += n
            }
            return true
        }
    }

    /// Starts listening; `respond` serves each request.
    init(_ respond: @escaping @Sendable (_ head: String, _ connection: Connection) -> Void) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        var address = Self.loopback(port: 0)
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else { throw POSIXError(.EADDRINUSE) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(fd, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        // The accepting thread owns the socket: `deinit` only shuts it down, which ends the blocked
        // `accept`, and the thread closes it. Closed anywhere else, its number could be reused by
        // another test's socket while this thread still accepts on it, taking that one's clients.
        Thread { [weak self, fd] in
            defer { close(fd) }
            while true {
                let client = accept(fd, nil, nil)
                if client < 0 {
                    if errno == EINTR || errno == ECONNABORTED { continue }
                    return
                }
                guard let self else { close(client); return }
                Thread { [self] in
                    defer { close(client) }
                    // Several requests may come on one connection (keep-alive).
                    var pending = [UInt8]()
                    var buffer = [UInt8](repeating: 0, count: 65536)
                    while true {
                        while Self.headEnd(pending) == nil {
                            let n = buffer.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
                            if n == 0 {
                                // The client closed the connection before (another) request: it
                                // went away too, as when a send fails. (A request given up before
                                // it was sent leaves its connection in the client's pool, closed
                                // when the pool lets it go.)
                                self.closedByClient.withLock { $0 += 1 }
                                self.announceChange()
                            }
                            if n <= 0 { return }
                            pending += buffer[0..<n]
                        }
                        let end = Self.headEnd(pending)!
                        let head = String(decoding: pending[0..<end], as: UTF8.self)
                        pending.removeSubrange(0..<(end + 4))
                        self.heads.withLock { $0.append(head) }
                        self.announceChange()
                        respond(head, Connection(fd: client, server: self))
                    }
                }.start()
            }
        }.start()
    }

    deinit {
        shutdown(fd, Int32(SHUT_RDWR))
    }

    /// `http://127.0.0.1:port`.
    var url: String { "http://127.0.0.1:\(port)" }

    /// The heads of the requests read so far.
    var requests: [String] { heads.withLock { $0 } }

    /// How many times a client went away: closed its connection while this server was sending, or
    /// before it sent a request.
    var clientsGone: Int { closedByClient.withLock { $0 } }

    /// Waits until `condition` holds of this server, checked each time it reads a request or finds
    /// a client gone (on a thread of its own); bounded by `limit` only so that a hang fails with
    /// what it waited for.
    /// - Throws: `WaitTimedOut` naming `what`.
    func wait(until what: String, within limit: Duration, _ condition: @escaping @Sendable (CannedHTTPServer) -> Bool) async throws {
        let met = await withCheckedContinuation { continuation in
            Thread { [self] in
                let deadline = Date(timeIntervalSinceNow: Double(limit.components.seconds))
                changed.lock()
                defer { changed.unlock() }
                while !condition(self) {
                    if !changed.wait(until: deadline) {
                        continuation.resume(returning: condition(self))
                        return
                    }
                }
                continuation.resume(returning: true)
            }.start()
        }
        if !met { throw WaitTimedOut(description: "waited \(limit) in vain until \(what)") }
    }

    private func announceChange() {
        changed.lock()
        changed.broadcast()
        changed.unlock()
    }

    /// Whether a request head holds an `Authorization` header.
    static func hasAuthorization(_ head: String) -> Bool {
        head.split(separator: "\r\n").contains { $0.lowercased().hasPrefix("authorization:") }
    }

    /// A complete answer with `body`.
    static func answer(_ body: String, status: String = "200 OK", headers: [String] = []) -> String {
        (["HTTP/1.1 \(status)", "Content-Type: application/json", "Content-Length: \(body.utf8.count)"] + headers)
            .joined(separator: "\r\n") + "\r\n\r\n" + body
    }

    /// A store identity document (`GET /v1/store`).
    static let identity = #"{"epoch":1,"schemaVersion":1,"uuid":"3F2504E0-4F89-11D3-9A0C-0305E82C3301"}"#

    private static func headEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for i in 0...(bytes.count - 4) where bytes[i] == 13 && bytes[i + 1] == 10 && bytes[i + 2] == 13 && bytes[i + 3] == 10 {
            return i
        }
        return nil
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}
