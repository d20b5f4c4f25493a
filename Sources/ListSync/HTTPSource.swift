import Foundation
import ListDiff
import ListStore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A list source on another machine: the journal served by `liststore serve` (`JournalServer`), read
/// over HTTP. A replica pulls from it as from a local store, resync by diff included; waiting for a
/// commit is a long poll.
///
/// ```swift
/// let source = try HTTPSource("http://10.0.0.2:8080", token: "s3cret")
/// let replica = Replica(store: try Store(path: "copy.liststore"), list: "inbox")
/// try await replica.follow(from: source) { print("at source version", $0.version) }
/// ```
///
/// Errors: the server's store errors come back as `StoreError` with their code (an unknown list is
/// `.listNotFound`, a pruned version `.versionNotFound`); a refused token is `SyncError.unauthorized`;
/// anything else that goes wrong on the way (no connection, a timeout, a server that goes away
/// mid-answer, an answer that is not the expected document) is `SyncError.transport` naming the
/// request. Nothing is applied from an incomplete answer.
public struct HTTPSource: ListSource {
    /// The server's base URL (`http://host:port`, perhaps with a path prefix).
    public let url: URL
    /// The bearer token sent with every request.
    public let token: String?
    /// How long a request may take before it fails (a long poll gets its wait on top).
    public var requestTimeout: Duration

    /// A source at `url`.
    public init(url: URL, token: String? = nil, requestTimeout: Duration = .seconds(30)) {
        self.url = url
        self.token = token
        self.requestTimeout = requestTimeout
    }

    /// A source at the URL `string`.
    /// - Throws: `SyncError.transport` unless it is an absolute `http` or `https` URL.
    public init(_ string: String, token: String? = nil, requestTimeout: Duration = .seconds(30)) throws {
        guard let url = URL(string: string), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            url.host != nil
        else {
            throw SyncError.transport("'\(string)' is not an http:// or https:// URL")
        }
        self.init(url: url, token: token, requestTimeout: requestTimeout)
    }

    public func identity() async throws -> StoreIdentity {
        try decode(try await get("v1/store"), SyncDocument.decodeIdentity)
    }

    public func summary(of list: String) async throws -> ListSummary {
        try decode(try await get(path(list)), SyncDocument.decodeSummary)
    }

    public func journal(of list: String, after version: Int, limit: Int) async throws -> JournalPage {
        try decode(try await get(path(list, "journal"), ["since": version, "limit": max(0, limit)]), SyncDocument.decodeJournal)
    }

    public func snapshot(of list: String, at version: Int?) async throws -> ListSnapshot {
        try decode(try await get(path(list, "snapshot"), version.map { ["at": $0] } ?? [:]), SyncDocument.decodeSnapshot)
    }

    public func catchUp(of list: String, from version: Int, applyingTo state: [ListSection]) async throws
        -> (changeset: ListChangeset, head: ListSnapshot)
    {
        let bytes = try await get(path(list, "diff"), ["from": version])
        let (changeset, head) = try decode(bytes) { try SyncDocument.decodeDiff($0, applyingTo: state) }
        return (changeset, head)
    }

    public func waitForCommit(to list: String, after version: Int, timeout: Duration) async throws -> Bool {
        let seconds = max(0, Int((timeout + .milliseconds(999)).components.seconds))
        let page = try decode(
            try await get(path(list, "journal"), ["since": version, "limit": 0, "wait": seconds], extraTime: .seconds(seconds)),
            SyncDocument.decodeJournal)
        return page.hasMore
    }

    public func acknowledge(consumer name: String, of list: String, version: Int) async throws {
        _ = try await send("PUT", path(list, "consumers", name), body: Array("{\"version\":\(version)}".utf8))
    }

    // MARK: - Requests

    /// `v1/lists/<list>[/<more>…]`, each segment percent-encoded.
    private func path(_ list: String, _ more: String...) -> String {
        (["v1", "lists", PercentEncoding.encode(list)] + more.map(PercentEncoding.encode)).joined(separator: "/")
    }

    private func get(_ path: String, _ query: KeyValuePairs<String, Int> = [:], extraTime: Duration = .zero) async throws -> [UInt8] {
        let text = query.map { "\($0.key)=\($0.value)" }.joined(separator: "&")
        return try await send("GET", text.isEmpty ? path : path + "?" + text, extraTime: extraTime)
    }

    /// Sends one request; returns the body of a 2xx answer, throws the error an other answer names.
    private func send(_ method: String, _ path: String, body: [UInt8]? = nil, extraTime: Duration = .zero) async throws -> [UInt8] {
        var base = url.absoluteString
        if !base.hasSuffix("/") { base += "/" }
        guard let target = URL(string: base + path) else { throw SyncError.transport("cannot make a URL of \(base + path)") }
        var request = URLRequest(url: target)
        request.httpMethod = method
        request.timeoutInterval = Double((requestTimeout + extraTime).components.seconds) + 1
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let body {
            request.httpBody = Data(body)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let what = "\(method) \(target.absoluteString)"
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await HTTPSource.session.data(for: request)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            if Task.isCancelled { throw CancellationError() }
            throw SyncError.transport("\(what): \(Self.describe(error))")
        }
        guard let http = response as? HTTPURLResponse else { throw SyncError.transport("\(what): not an HTTP answer") }
        let bytes = [UInt8](data)
        if (200..<300).contains(http.statusCode) {
            if let length = http.value(forHTTPHeaderField: "Content-Length").flatMap(Int.init), length != bytes.count {
                throw SyncError.transport("\(what): the answer ended after \(bytes.count) of \(length) bytes")
            }
            return bytes
        }
        let reported = try? SyncDocument.decodeError(bytes)
        let message = reported?.message ?? "HTTP \(http.statusCode)"
        if http.statusCode == 401 {
            throw SyncError.unauthorized("\(what): the server refused the token (401): \(message)")
        }
        if let reported, let code = StoreError.Code(named: reported.code) {
            throw StoreError(code, message, expectedVersion: reported.expectedVersion, currentVersion: reported.currentVersion)
        }
        throw SyncError.transport("\(what): HTTP \(http.statusCode): \(message)")
    }

    private func decode<T>(_ bytes: [UInt8], _ decode: ([UInt8]) throws -> T) throws -> T {
        do {
            return try decode(bytes)
        } catch {
            throw SyncError.transport("\(url.absoluteString) answered a document this client cannot read: \(error)")
        }
    }

    private static func describe(_ error: any Error) -> String {
        guard let error = error as? URLError else { return "\(error)" }
        switch error.code {
        case .timedOut: return "timed out"
        case .cannotConnectToHost, .cannotFindHost: return "cannot connect to the server"
        case .networkConnectionLost: return "the connection was lost before the answer was complete"
        default: return error.localizedDescription
        }
    }

    /// One session for every source: connections to a server are reused.
    private static let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = 16
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        return URLSession(configuration: configuration)
    }()
}
