import HTTPTypes
import ListStoreCore
import Hummingbird

/// Refuses (403) requests that a web page could have sent or read in the server's name: a `Host`
/// that is not the server's own (DNS rebinding) and an `Origin` that is not allowed (a cross-site
/// request). A request with two `Host` fields is refused first (400, RFC 9112 §3.2). Which hosts
/// and origins are the server's: RunningAServer.md, “Browsers”. On a non-loopback bind any IP
/// address literal is allowed, since an address cannot be rebound; names can.
struct OriginPolicyMiddleware<Context: RequestContext>: RouterMiddleware {
    let bindsToLoopback: Bool
    let allowedHosts: Set<String>
    let allowedOrigins: Set<String>
    /// The scheme of the server's own origin: `https://` over TLS, `http://` otherwise.
    let ownScheme: String
    /// The port the server is bound to, once it is known.
    let port: @Sendable () -> Int?
    /// `Host` values found allowed (at most `rememberedHostLimit`): parsing each request's is a
    /// measurable part of a long poll's cost.
    private let allowedSeen = _Locked(Set<String>())
    private static var rememberedHostLimit: Int { 64 }

    init(configuration: JournalServer.Configuration, port: @escaping @Sendable () -> Int?) {
        bindsToLoopback = configuration.bindsToLoopback
        allowedHosts = Set(configuration.allowedHosts.map { $0.lowercased() })
        allowedOrigins = Set(configuration.allowedOrigins.map { Self.normalizedOrigin($0) })
        ownScheme = configuration.tls == nil ? "http://" : "https://"
        self.port = port
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        // The first `Host` is the request's authority; another is left among its fields.
        if request.headers[.host] != nil {
            throw APIError.invalidArgument("the request names more than one host (two Host fields)")
        }
        guard let authority = request.head.authority, isAllowedRemembering(host: authority) else {
            throw APIError(.forbidden, "hostNotAllowed", "the Host of this request is not this server's (see --allow-host)")
        }
        if let origin = request.headers[.origin] {
            let normalized = Self.normalizedOrigin(origin)
            guard allowedOrigins.contains(normalized) || normalized == ownScheme + authority.lowercased() else {
                throw APIError(.forbidden, "originNotAllowed", "requests from the origin '\(origin)' are not allowed (see --allow-origin)")
            }
        }
        return try await next(request, context)
    }

    /// `isAllowed(host:)`, answered from the hosts found allowed before when it is one of them.
    /// Only allowed hosts are remembered, and only the first few: a client cannot grow the set.
    func isAllowedRemembering(host authority: String) -> Bool {
        if allowedSeen.withLock({ $0.contains(authority) }) { return true }
        guard isAllowed(host: authority) else { return false }
        allowedSeen.withLock { if $0.count < Self.rememberedHostLimit { $0.insert(authority) } }
        return true
    }

    /// Whether `authority` (a `Host` header: `name[:port]`, `[v6][:port]`) names this server.
    /// - Complexity: O(length of `authority`).
    func isAllowed(host authority: String) -> Bool {
        let authority = authority.lowercased()
        guard let (host, givenPort) = Self.split(authority) else { return false }
        if allowedHosts.contains(authority) || allowedHosts.contains(host) { return true }
        // Without a port, a Host names the server on any of its ports (no browser leaves it out).
        guard let port = port(), givenPort == nil || givenPort == port else { return false }
        if host == "localhost" { return true }
        if bindsToLoopback { return Self.isLoopbackAddress(host) }
        return Self.isIPv4(host) != nil || host.contains(":")
    }

    /// The host and port of an authority; `nil` when it is malformed.
    static func split(_ authority: String) -> (host: String, port: Int?)? {
        var host = Substring(authority)
        var port: Substring?
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return nil }
            let rest = host[host.index(after: close)...]
            host = host[host.index(after: host.startIndex)..<close]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { return nil }
                port = rest.dropFirst()
            }
        } else if let colon = host.firstIndex(of: ":") {
            port = host[host.index(after: colon)...]
            host = host[..<colon]
        }
        guard !host.isEmpty else { return nil }
        guard let port else { return (String(host), nil) }
        guard let number = Int(port), (0...65535).contains(number) else { return nil }
        return (String(host), number)
    }

    /// Whether `host` (without brackets) is `localhost` or a loopback address: `127.0.0.0/8`, `::1`.
    static func isLoopbackAddress(_ host: String) -> Bool {
        let host = host.lowercased()
        if host == "localhost" || host == "::1" || host == "0:0:0:0:0:0:0:1" { return true }
        return isIPv4(host)?.first == 127
    }

    /// The four parts of a dotted IPv4 address, `nil` when `host` is not one.
    static func isIPv4(_ host: String) -> [Int]? {
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        let numbers = parts.compactMap { part in part.count <= 3 && part.allSatisfy(\.isASCII) ? Int(part) : nil }
        guard parts.count == 4, numbers.count == 4, numbers.allSatisfy({ (0...255).contains($0) }) else { return nil }
        return numbers
    }

    /// An origin as compared: lowercase, without a trailing slash.
    static func normalizedOrigin(_ origin: String) -> String {
        var origin = origin.lowercased()
        while origin.hasSuffix("/") { origin.removeLast() }
        return origin
    }
}

extension HTTPField.Name {
    static let origin = HTTPField.Name("Origin")!
    /// `Host`, which a request's fields hold only when it came more than once (the first is the
    /// request's authority).
    static let host = HTTPField.Name("Host")!
}
