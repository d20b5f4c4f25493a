import Crypto
import Hummingbird
import ListStoreCore

/// Checks every request against the route table (`RouteTable`): the one place access is decided.
/// It runs once the router has matched the request's route, before anything of the route. A route
/// that needs nothing goes on; for the others it tells who made the request — the service token, or
/// a user whose JWT the server's access configuration verifies — and whether that identity may use
/// the route. A route without an entry in the table is refused to everyone (403 `forbidden`).
///
/// A request without a token is answered 401 with `WWW-Authenticate: Bearer`, before its body or
/// content type is looked at; a token that is neither is answered 401 with
/// `WWW-Authenticate: Bearer error="invalid_token"` and why. For a user's token, a list it may not
/// read answers exactly as a list that does not exist (404 `listNotFound`), one it may read but not
/// write or administer 403 `forbidden`, and a route of the service token's 403 `forbidden`. On a
/// server with neither a service token nor an access configuration, everyone is `.service`.
///
/// The service token is compared through SHA-256 digests, whose comparison takes the same time
/// wherever they differ; a user's token is verified once per request.
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
        try authorize(need, identity, context)
        return try await next(request, context)
    }

    /// Who made `request`.
    /// - Throws: 401 (see the type's overview).
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

    /// Throws unless `identity` may use a route that needs `need` (see the type's overview).
    private func authorize(_ need: RouteTable.Need, _ identity: AccessIdentity, _ context: Context) throws {
        guard case .user = identity else { return }
        switch need {
        case .nothing, .anyToken:
            return
        case .service:
            throw APIError(.forbidden, "forbidden", "only the service token may read this")
        case .list(let needed):
            let list = try JournalRoutes.list(context)
            guard let grant = JournalRoutes.grant(on: list, to: identity, access: state.access) else {
                throw StoreError.listNotFound(list, in: storeLocation)
            }
            guard grant >= needed else {
                throw APIError(.forbidden, "forbidden", "this token may \(grant) list '\(list)' but not \(needed) it")
            }
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

    /// Identifies the bearer of `header` as far as it can without waiting: the service token, any
    /// request on a server without tokens, and a user's token already verified (and not expired)
    /// are `known`; a missing or wrong token is `refused`; another user's token is `toVerify`.
    /// The one place the rules of tokens are read.
    /// - Complexity: O(size of the header).
    func identify(_ header: String?) -> Identification {
        let access = state.access
        // The route needs a token: a request without one is refused here, before anything looks at
        // its body.
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
