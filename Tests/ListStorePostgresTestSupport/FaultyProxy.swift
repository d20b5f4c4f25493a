import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A TCP proxy on a loopback port in front of the test's PostgreSQL server, whose faults a test
/// sets: what a database that restarts, fails over or drops off the network looks like to its
/// clients, without stopping the server other tests share. Blocking sockets on threads of its own.
///
/// ```swift
/// let proxy = try FaultyProxy(to: 5432)
/// proxy.mode = .silent        // the network drops everything: no answer, no error
/// proxy.mode = .refusing      // every connection broken, new ones closed at once
/// proxy.mode = .forwarding
/// ```
public final class FaultyProxy: @unchecked Sendable {
    /// What the proxy does with the bytes and the connections.
    public enum Mode: Sendable {
        /// Forwards both ways.
        case forwarding
        /// Holds every byte (both ways) and accepts new connections without forwarding anything:
        /// a network that drops packets, or a server that hangs.
        case silent
        /// Breaks every open connection, and closes each new one once accepted: a server that
        /// restarts.
        case refusing
    }

    /// The port clients connect to.
    public let port: Int
    private let targetPort: Int
    private let listener: Int32
    private let condition = NSCondition()
    private var currentMode = Mode.forwarding
    private var open: [Int32] = []
    private var closed = false
    /// How many connections the proxy has accepted.
    public private(set) var accepted = 0
    /// How many reads it has held back while silent (each a request or an answer not passed on).
    public var held: Int { condition.withLock { heldReads } }
    private var heldReads = 0

    /// Waits until the proxy holds more reads than `count` (a request has reached the silent
    /// database); `false` when `timeout` passes first.
    public func waitUntilHeld(moreThan count: Int, timeout: Duration) -> Bool {
        let until = Date(timeIntervalSinceNow: Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18)
        return condition.withLock {
            while heldReads <= count { guard condition.wait(until: until) else { return heldReads > count } }
            return true
        }
    }

    /// A proxy to `127.0.0.1:port`, forwarding.
    public init(to port: Int) throws {
        targetPort = port
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = Self.loopback(port: 0)
        var one: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(listener, 64) == 0 else {
            close(listener)
            throw POSIXError(.EADDRINUSE)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(listener, $0, &length) }
        }
        self.listener = listener
        self.port = Int(UInt16(bigEndian: address.sin_port))
        Thread { [self] in acceptLoop() }.start()
    }

    /// The proxy's URL for a PostgreSQL URL of the server it fronts: the same with its port.
    public func url(for url: String) -> String {
        var components = URLComponents(string: url)!
        components.port = port
        return components.string!
    }

    /// What the proxy does now; setting `.refusing` breaks every open connection at once, and
    /// leaving `.silent` lets the held bytes through.
    public var mode: Mode {
        get { condition.withLock { currentMode } }
        set {
            condition.withLock {
                currentMode = newValue
                if newValue == .refusing {
                    for fd in open { shutdown(fd, Int32(SHUT_RDWR)) }
                }
                condition.broadcast()
            }
        }
    }

    /// Stops the proxy: its port and every connection through it close.
    public func stop() {
        condition.withLock {
            closed = true
            shutdown(listener, Int32(SHUT_RDWR))
            for fd in open { shutdown(fd, Int32(SHUT_RDWR)) }
            condition.broadcast()
        }
    }

    deinit { stop() }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if condition.withLock({ closed }) { break }
                continue
            }
            let refusing = condition.withLock { () -> Bool in
                accepted += 1
                return currentMode == .refusing || closed
            }
            if refusing {
                close(client)
                continue
            }
            let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = Self.loopback(port: targetPort)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard connected == 0 else {
                close(server)
                close(client)
                continue
            }
            condition.withLock { open += [client, server] }
            // Each pair is closed once, by the last of its two pumps to end.
            let pumps = Pumps()
            for (from, to) in [(client, server), (server, client)] {
                Thread { [self] in
                    pump(from, to)
                    if pumps.end() {
                        condition.withLock { open.removeAll { $0 == client || $0 == server } }
                        close(client)
                        close(server)
                    }
                }.start()
            }
        }
        close(listener)
    }

    /// Copies `from` to `to` until either ends, holding the bytes while the proxy is silent.
    private func pump(_ from: Int32, _ to: Int32) {
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(from, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            let go = condition.withLock { () -> Bool in
                if currentMode == .silent {
                    heldReads += 1
                    condition.broadcast()
                }
                while currentMode == .silent, !closed { condition.wait() }
                return currentMode == .forwarding && !closed
            }
            guard go else { break }
            var sent = 0
            while sent < count {
                let written = buffer.withUnsafeBytes { send(to, $0.baseAddress! + sent, count - sent, Int32(MSG_NOSIGNAL)) }
                guard written > 0 else { break }
                sent += written
            }
            guard sent == count else { break }
        }
        shutdown(from, Int32(SHUT_RDWR))
        shutdown(to, Int32(SHUT_RDWR))
    }

    private final class Pumps: @unchecked Sendable {
        private let lock = NSLock()
        private var running = 2
        /// Whether the pump that ends is the last.
        func end() -> Bool { lock.withLock { running -= 1; return running == 0 } }
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}
