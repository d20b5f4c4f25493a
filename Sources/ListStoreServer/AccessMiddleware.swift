import Crypto
import Hummingbird
import HummingbirdCore
import ListStoreCore
import ListStoreWire
import HTTPTypes
import Logging

/// Checks every request against the route table (`RouteTable`) once the router has matched its
/// route, before anything of the route runs: the one place access is decided. A route without an
/// entry is refused to everyone (403), so a route added without a rule is closed. The answers:
/// RunningAServer.md, “Security” and “What users see”. A request without a token is refused before
/// its body is looked at; the service token is compared through SHA-256 digests, in constant time.
struct AccessMiddleware: RouterMiddleware {
    typealias Context = ServerRequestContext
    private let service: SHA256.Digest?
    let state: ServerState
    let table: RouteTable
    /// The store's location, which errors never show (see `APIError.redacted`).
    let storeLocation: String

    init(token: String?, state: ServerState, table: RouteTable = .server, storeLocation: String = "") {
        service = token.map { SHA256.hash(data: Array($0.utf8)) }
        self.state = state
        self.table = table
        self.storeLocation = storeLocation
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let need = table.need(request.method, context.endpointPath) else {
            throw APIError(.forbidden, "forbidden", "this route is not open to any request")
        }
        if need == .nothing { return try await next(request, context) }
        var context = context
        let identity = try await authenticate(request)
        context.identity = identity
        try authorize(need, identity) { try JournalRoutes.list(context) }
        return try await next(request, context)
    }

    /// The answer of `GET /v1/access`, a caching proxy's access check: whether the request that
    /// `X-Original-URI` and `X-Original-Method` describe may reach its route, decided as `handle`
    /// decides. Other refusals than 401 are 403 with `X-ListStore-Status` and `X-ListStore-Error`,
    /// since a proxy takes only 2xx, 401 and 403 (DeployingBehindACache.md, “Access stays per user”).
    /// - Complexity: that of `handle`, and O(routes) to find the route.
    func access(_ request: Request, logger: Logger) async throws -> Response {
        guard let uri = request.headers[.originalURI], uri.hasPrefix("/"), uri.utf8.count <= 8192 else {
            throw APIError.invalidArgument("'X-Original-URI' is required: the path (and query) of the request asked about, at most 8,192 bytes")
        }
        // Absent: GET.
        var method = try request.headers[.originalMethod].map { name in
            guard Self.askableMethods.contains(name), let method = HTTPRequest.Method(name) else {
                throw APIError.invalidArgument("'X-Original-Method' must be one of \(Self.askableMethods.joined(separator: ", "))")
            }
            return method
        } ?? .get
        // HEAD is answered as GET (`HeadResponder`); a CORS preflight needs no token (the server
        // answers it itself, `CORSMiddleware`).
        if method == .head { method = .get }
        if method == .options { return Response(status: .noContent, headers: [.cacheControl: "max-age=\(Self.accessAnswerAge.components.seconds)"]) }
        // The path as Hummingbird's router reads it (cut at the first `?` byte), and as the
        // shipped nginx configuration keys these answers.
        let path = URI(uri).path
        let matched = table.route(method, path[...])
        var headers = HTTPFields()
        do {
            // A path no route matches needs a token, as `handle` decides, and is answered 404 as
            // the router answers it: what the route table cannot name, this endpoint never allows.
            let need = matched.map { needs in table.needs[needs.route] ?? .anyToken } ?? .anyToken
            var lifetime = Self.accessAnswerAge
            if need != .nothing {
                let identity = try await authenticate(request)
                if matched == nil { throw APIError.noSuchEndpoint(method, path) }
                if case .user(let token) = identity { lifetime = min(lifetime, token.lifetime()) }
                try authorize(need, identity) {
                    guard let raw = matched?.captures["list"], let list = PercentEncoding.decode(String(raw)) else {
                        throw APIError.invalidArgument("the path's list is not valid percent-encoded UTF-8")
                    }
                    try _Names.checkList(list)
                    return list
                }
            }
            headers[.cacheControl] = "max-age=\(lifetime.components.seconds)"
            return Response(status: .noContent, headers: headers)
        } catch var error as APIError where error.status == .unauthorized {
            // Not kept; the proxy answers it as the route would (it has only the headers).
            error.headers[.listStoreStatus] = String(error.status.code)
            error.headers[.listStoreError] = String(decoding: WireDocument.error(code: error.code, message: error.message), as: UTF8.self)
            throw error
        } catch {
            let refusal = APIError.from(error, logger: logger, storeLocation: storeLocation)
            headers[.cacheControl] = "max-age=\(Self.accessAnswerAge.components.seconds)"
            headers[.listStoreStatus] = String(refusal.status.code)
            headers[.listStoreError] = String(decoding: WireDocument.error(code: refusal.code, message: refusal.message), as: UTF8.self)
            return Response(status: .forbidden, headers: headers)
        }
    }

    /// The methods `access(_:logger:)` is asked about.
    static let askableMethods = ["GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS"]

    /// How long a caching proxy may keep an answer of `access(_:)` for one token (at most the
    /// token's life): a grant taken away reaches the proxy within it.
    static let accessAnswerAge = Duration.seconds(60)

    /// Who made `request`.
    /// - Throws: 401 `unauthorized`, with `WWW-Authenticate`.
    func authenticate(_ request: Request) async throws -> AccessIdentity {
        switch identify(request.headers[.authorization]) {
        case .known(let identity):
            return identity
        case .refused(let error):
            throw error
        case .toVerify(let bearer, let access):
            do {
                return .user(try await access.verify(bearer))
            } catch let refusal as AccessRefusal {
                throw Self.unauthorized(refusal.description, invalidToken: true)
            }
        }
    }

    /// Throws unless `identity` may use a route that needs `need` on the path's list (see the
    /// type's overview).
    private func authorize(_ need: RouteTable.Need, _ identity: AccessIdentity, list pathList: () throws -> String) throws {
        guard case .user = identity else { return }
        switch need {
        case .nothing, .anyToken:
            return
        case .service:
            throw APIError(.forbidden, "forbidden", "only the service token may read this")
        case .list(let needed):
            let list = try pathList()
            try JournalRoutes.check(
                JournalRoutes.grant(on: list, to: identity, access: state.access), on: list, needing: needed, storeLocation: storeLocation)
        }
    }

    /// What the `Authorization` header says of a request, before a user's token is verified.
    enum Identification {
        /// The identity, known at once.
        case known(AccessIdentity)
        /// The request is refused (401).
        case refused(APIError)
        /// A user's token, to verify with the server's access configuration.
        case toVerify(String, AccessConfiguration)
    }

    /// Identifies the bearer of `header` as far as it can without waiting; a user's token not yet
    /// verified is `toVerify`. The one place the rules of tokens are read.
    /// - Complexity: O(size of the header).
    func identify(_ header: String?) -> Identification {
        let access = state.access
        // Refused here, before anything looks at the body.
        guard let bearer = Self.bearerToken(header) else {
            if service == nil && access == nil { return .known(.service) }
            return .refused(Self.unauthorized("this server needs 'Authorization: Bearer <token>'", invalidToken: false))
        }
        if let service, SHA256.hash(data: Array(bearer.utf8)) == service { return .known(.service) }
        guard let access else {
            if service == nil { return .known(.service) }
            return .refused(Self.unauthorized("this server needs 'Authorization: Bearer <token>' with its token", invalidToken: true))
        }
        if let token = access.knownToken(bearer) { return .known(.user(token)) }
        return .toVerify(bearer, access)
    }

    /// 401 `unauthorized` with `WWW-Authenticate`: `Bearer`, with `error="invalid_token"` for a
    /// token that was given and refused.
    static func unauthorized(_ message: String, invalidToken: Bool) -> APIError {
        var error = APIError(.unauthorized, "unauthorized", message)
        error.headers[.wwwAuthenticate] = invalidToken ? #"Bearer error="invalid_token""# : "Bearer"
        return error
    }

    /// The token of an `Authorization: Bearer …` header (the scheme in any case).
    static func bearerToken(_ header: String?) -> String? {
        guard let header, header.count > 7, header.prefix(7).lowercased() == "bearer " else { return nil }
        return String(header.dropFirst(7))
    }
}

extension HTTPField.Name {
    /// The path and query of the request a proxy asks `GET /v1/access` about.
    static let originalURI = HTTPField.Name("X-Original-URI")!
    /// The method of that request.
    static let originalMethod = HTTPField.Name("X-Original-Method")!
    /// The status the route would answer a request `GET /v1/access` refuses.
    static let listStoreStatus = HTTPField.Name("X-ListStore-Status")!
    /// The error document the route would answer it.
    static let listStoreError = HTTPField.Name("X-ListStore-Error")!
}
