import Foundation
import ListStore
import ListStoreServer
import Logging

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `JournalServer` running in this process on a free loopback port, for one test.
struct ServerHarness {
    let url: String
    let task: Task<Void, any Error>

    /// Starts a server of `store` and waits until it accepts connections.
    static func start(_ store: Store, token: String? = nil, maxBodyBytes: Int = 1 << 20) async throws -> ServerHarness {
        var logger = Logger(label: "test.server")
        logger.logLevel = .critical
        let server = JournalServer(
            store: store, configuration: .init(port: 0, token: token, maxBodyBytes: maxBodyBytes, keepAliveInterval: .seconds(1)),
            logger: logger)
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let task = Task {
            defer { continuation.finish() }
            try await server.run(handlingSignals: false) { port in continuation.yield(port) }
        }
        for await port in ports { return ServerHarness(url: "http://127.0.0.1:\(port)", task: task) }
        _ = try await task.value
        throw CancellationError()
    }

    /// Stops the server.
    func stop() async {
        task.cancel()
        _ = try? await task.value
    }

    /// One request: the status and the body.
    func request(_ path: String, method: String = "GET", body: String? = nil, token: String? = nil) async throws
        -> (status: Int, body: [UInt8], headers: [AnyHashable: Any])
    {
        var request = URLRequest(url: URL(string: url + path)!)
        request.httpMethod = method
        if let body { request.httpBody = Data(body.utf8) }
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = response as! HTTPURLResponse
        return (http.statusCode, [UInt8](data), http.allHeaderFields)
    }
}
