import Foundation
import ListStore
import ListSync
@testable import ListStoreServer
import Logging
import ListStoreTestSupport

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `JournalServer` running in this process on a free loopback port, for one test.
struct ServerHarness {
    let url: String
    let task: Task<Void, any Error>
    let server: JournalServer
    /// The token `request` sends when it is given none, and `source()` and `authorization` carry:
    /// the access mode's (see `ServerAccess`).
    var token: String? = nil

    /// The `Authorization` header line of `token` for a raw request (CR LF included), or nothing.
    var authorization: String { token.map { "Authorization: Bearer \($0)\r\n" } ?? "" }

    /// A client of the server with `token`.
    func source() throws -> HTTPSource { try HTTPSource(url, token: token) }

    /// The bound port.
    var port: Int { Int(url.split(separator: ":").last!)! }

    /// Starts a server of `store` and waits until it accepts connections.
    static func start(_ store: any ListStoreEngine, token: String? = nil, maxBodyBytes: Int = 1 << 20) async throws -> ServerHarness {
        try await start(store, .init(port: 0, token: token, maxBodyBytes: maxBodyBytes, keepAliveInterval: .seconds(1)))
    }

    /// Starts a server of `store` with `configuration` (its port should be 0), logging to `logger`
    /// (default: critical messages only).
    static func start(_ store: any ListStoreEngine, _ configuration: JournalServer.Configuration, logger: Logger? = nil) async throws -> ServerHarness {
        var quiet = Logger(label: "test.server")
        quiet.logLevel = .critical
        let logger = logger ?? quiet
        let server = JournalServer(store: store, configuration: configuration, logger: logger)
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let task = Task {
            defer { continuation.finish() }
            try await server.run(handlingSignals: false) { port in continuation.yield(port) }
        }
        for await port in ports { return ServerHarness(url: "http://127.0.0.1:\(port)", task: task, server: server) }
        _ = try await task.value
        throw CancellationError()
    }

    /// Runs `body` with a server of `store` reached as `access` says (see `ServerAccess`): access
    /// on for `user`, and the harness's `token` the mode's.
    static func with<T>(
        _ store: any ListStoreEngine, _ access: ServerAccess, _ configuration: JournalServer.Configuration? = nil,
        maxBodyBytes: Int = 1 << 20, _ body: (ServerHarness) async throws -> T
    ) async throws -> T {
        let base = configuration ?? .init(port: 0, maxBodyBytes: maxBodyBytes, keepAliveInterval: .seconds(1))
        return try await with(store, try await access.configure(base)) { server in
            var server = server
            server.token = access.token
            return try await body(server)
        }
    }

    /// Runs `body` with a server of `store` (see `start(_:token:maxBodyBytes:)`), and stops the
    /// server when `body` returns or throws, before returning: no server outlives its test.
    static func with<T>(
        _ store: any ListStoreEngine, token: String? = nil, maxBodyBytes: Int = 1 << 20, _ body: (ServerHarness) async throws -> T
    ) async throws -> T {
        try await with(store, .init(port: 0, token: token, maxBodyBytes: maxBodyBytes, keepAliveInterval: .seconds(1)), body)
    }

    /// Runs `body` with a server of `store` with `configuration` (see `start(_:_:logger:)`), and
    /// stops the server when `body` returns or throws, before returning.
    static func with<T>(
        _ store: any ListStoreEngine, _ configuration: JournalServer.Configuration, logger: Logger? = nil,
        _ body: (ServerHarness) async throws -> T
    ) async throws -> T {
        let server = try await start(store, configuration, logger: logger)
        do {
            let result = try await body(server)
            await server.stop()
            return result
        } catch {
            await server.stop()
            throw error
        }
    }

    /// Returns once `GET /health` answers 200 (it answers 503 while the store is slower than a
    /// second, as it may be on a loaded machine).
    func waitUntilHealthy() async throws {
        let harness = self
        try await waitUntil("the health check answers 200") { (try? await harness.request("/health").status) == 200 }
    }

    /// Stops the server.
    func stop() async {
        task.cancel()
        _ = try? await task.value
    }

    /// One request: the status and the body. A body is sent as `application/json`, `bytes` as
    /// `application/octet-stream` (unless `headers` give another type); `token` (default: the
    /// harness's) as a bearer token, and none at all when `anonymous`.
    func request(
        _ path: String, method: String = "GET", body: String? = nil, bytes: [UInt8]? = nil, headers: [String: String] = [:], token: String? = nil,
        anonymous: Bool = false
    ) async throws -> (status: Int, body: [UInt8], headers: [AnyHashable: Any]) {
        var request = URLRequest(url: URL(string: url + path)!)
        request.httpMethod = method
        if let body {
            request.httpBody = Data(body.utf8)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        if let bytes {
            request.httpBody = Data(bytes)
            request.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
        }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        if !anonymous, let token = token ?? self.token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        // Started on a thread of its own: swift-corelibs-foundation makes a task with a synchronous
        // wait for the session's queue, which on Linux runs on the threads that run tasks.
        let (data, response): (Data, URLResponse) = try await withCheckedThrowingContinuation { continuation in
            let request = request
            Thread {
                URLSession.shared.dataTask(with: request) { data, response, error in
                    if let data, let response {
                        continuation.resume(returning: (data, response))
                    } else {
                        continuation.resume(throwing: error ?? URLError(.badServerResponse))
                    }
                }.resume()
            }.start()
        }
        let http = response as! HTTPURLResponse
        return (http.statusCode, [UInt8](data), http.allHeaderFields)
    }
}
