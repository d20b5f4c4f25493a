import Crypto
import Foundation
import ListStore
import ListStoreServer
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// auth-overhead (Docs/Benchmarks.md): the same request, `GET /v1/lists/{list}` of a user's list,
/// made with a user's ES256 token on a server with an access file of 20 rules (the one that grants
/// it last), against the service token, on one server in this process, in one run.
///
/// One client on one keep-alive connection makes `requests` requests a round, rounds of the two
/// tokens alternating; ours and the baseline are the medians of the rounds. Each request's token is
/// verified anew (signature, claims, rules): the ratio is what a user's token costs a request.
struct AuthOverheadScenario {
    static let name = "auth-overhead"
    static let baselineName = "the same requests with the service token"
    static let target = Target(minRatio: 0.8)
    static let requests = 2_000
    static let rounds = 7

    static var scenario: Scenario {
        Scenario(
            name: name, summary: "GET of a user's list with an ES256 user token and 20 rules vs \(baselineName)", target: target
        ) { () throws(ScenarioFailure) in try AuthOverheadScenario().run() }
    }

    let log = ScenarioLog(scenario: name)

    func run() throws(ScenarioFailure) -> ScenarioResult {
        do {
            return try measure()
        } catch let failure as ScenarioFailure {
            throw failure
        } catch {
            throw log.failure("\(error)")
        }
    }

    private func measure() throws -> ScenarioResult {
        let directory = try TemporaryDirectory(label: Self.name)
        let store = try Store(path: directory.file("s.liststore"))
        let list = "users/ana/inbox"
        try store.commit([ListSection(model: ListItem(id: "s", json: ["title": "Inbox"]), elements: [])], to: list)
        let key = P256.Signing.PrivateKey()
        let access = try runBlocking { try await AccessConfiguration(json: Self.accessFile(key)) }
        let token = try Self.token(key, sub: "ana")
        var logger = Logger(label: "liststore-bench.server")
        logger.logLevel = .error
        let server = JournalServer(store: store, configuration: .init(port: 0, token: "service", access: access), logger: logger)
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let serving = Task { try await server.run(handlingSignals: false) { continuation.yield($0) } }
        defer {
            serving.cancel()
            _ = try? runBlocking { try await serving.value }
        }
        let port = try runBlocking { () async throws -> Int in
            for await port in ports { return port }
            throw ScenarioFailure(scenario: Self.name, message: "the server did not start")
        }
        log.progress("server on port \(port); \(Self.rounds) rounds of \(Self.requests) requests per token")
        let client = try KeepAliveClient(port: port)
        let path = "/v1/lists/" + list.replacingOccurrences(of: "/", with: "%2F")
        // Both tokens answer 200 (a warm-up of each).
        for bearer in ["service", token] where try client.get(path, bearer: bearer) != 200 {
            throw log.failure("GET \(path) with \(bearer == "service" ? "the service token" : "the user's token") did not answer 200")
        }
        var ours: [Double] = []
        var baseline: [Double] = []
        for round in 0..<Self.rounds {
            for (bearer, isUser) in round % 2 == 0 ? [(token, true), ("service", false)] : [("service", false), (token, true)] {
                let start = ContinuousClock.now
                for _ in 0..<Self.requests where try client.get(path, bearer: bearer) != 200 {
                    throw log.failure("a request of round \(round) did not answer 200")
                }
                let ms = Measurement.milliseconds(ContinuousClock.now - start)
                if isUser { ours.append(ms) } else { baseline.append(ms) }
            }
        }
        let oursTiming = Measurement.Timing(samples: ours, warmedUp: true)
        let baselineTiming = Measurement.Timing(samples: baseline, warmedUp: true)
        let details: [String: JSONValue] = [
            "requests": .number(Double(Self.requests), decimals: 0), "rules": .number(20, decimals: 0),
            "userRequestMicroseconds": .number(oursTiming.medianMs * 1000 / Double(Self.requests), decimals: 1),
            "serviceRequestMicroseconds": .number(baselineTiming.medianMs * 1000 / Double(Self.requests), decimals: 1),
        ]
        return ScenarioResult(
            scenario: Self.name, oursMs: oursTiming.medianMs, baseline: Self.baselineName, baselineMs: baselineTiming.medianMs,
            target: Self.target, details: details, oursRuns: oursTiming.runsText, baselineRuns: baselineTiming.runsText)
    }

    /// An access file with the public half of `key` and 20 rules, the one that grants Ana's list last.
    static func accessFile(_ key: P256.Signing.PrivateKey) -> [UInt8] {
        let point = Array(key.publicKey.rawRepresentation)
        let jwk = #"{"kty": "EC", "kid": "k1", "alg": "ES256", "crv": "P-256", "x": "\#(base64URL(point.prefix(32)))", "y": "\#(base64URL(point.suffix(32)))"}"#
        let decoys = (0..<19).map { #"{"lists": "org\#($0)/{sub}/**", "grant": "read"}"# }
        let rules = (decoys + [#"{"lists": "users/{sub}/**", "grant": "write"}"#]).joined(separator: ", ")
        return Array(#"{"keys": {"keys": [\#(jwk)]}, "issuer": "https://auth.example", "audience": "liststore", "rules": [\#(rules)]}"#.utf8)
    }

    /// An ES256 token for `sub`, valid for an hour.
    static func token(_ key: P256.Signing.PrivateKey, sub: String) throws -> String {
        let header = base64URL(Array(#"{"alg":"ES256","kid":"k1","typ":"JWT"}"#.utf8))
        let claims = #"{"aud":"liststore","exp":\#(Int(Date().timeIntervalSince1970) + 3600),"iss":"https://auth.example","sub":"\#(sub)","teams":["red","blue"]}"#
        let input = header + "." + base64URL(Array(claims.utf8))
        return input + "." + base64URL(Array(try key.signature(for: Array(input.utf8)).rawRepresentation))
    }

    static func base64URL(_ bytes: some Sequence<UInt8>) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

/// One HTTP/1.1 connection kept alive, for requests one after another (blocking: the scenario's
/// thread is not one of the concurrency runtime's).
final class KeepAliveClient {
    private let fd: Int32
    private let port: Int
    private var buffer = [UInt8]()

    init(port: Int) throws {
        self.port = port
        guard let fd = Self.connectLoopback(port: port) else {
            throw ScenarioFailure(scenario: "http", message: "cannot connect to port \(port)")
        }
        self.fd = fd
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit { close(fd) }

    /// A TCP connection to 127.0.0.1:`port`: its descriptor, or `nil`.
    static func connectLoopback(port: Int) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            return nil
        }
        return fd
    }

    /// Sends `GET path` with the bearer token and reads the whole answer; its status.
    func get(_ path: String, bearer: String) throws -> Int {
        let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAuthorization: Bearer \(bearer)\r\n\r\n".utf8)
        guard request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, 0) }) == request.count else {
            throw ScenarioFailure(scenario: "http", message: "the server closed the connection")
        }
        // The head, then Content-Length bytes of body.
        var headEnd: Int?
        while headEnd == nil {
            headEnd = buffer.indices.dropLast(3).first { buffer[$0] == 13 && buffer[$0 + 1] == 10 && buffer[$0 + 2] == 13 && buffer[$0 + 3] == 10 }
            if headEnd == nil { try receive() }
        }
        let head = String(decoding: buffer[..<headEnd!], as: UTF8.self)
        let status = Int(head.split(separator: " ")[1]) ?? 0
        let length = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
            .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
        while buffer.count < headEnd! + 4 + length { try receive() }
        buffer.removeFirst(headEnd! + 4 + length)
        return status
    }

    private func receive() throws {
        var chunk = [UInt8](repeating: 0, count: 16384)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { throw ScenarioFailure(scenario: "http", message: "the server closed the connection") }
        buffer += chunk[0..<count]
    }
}
