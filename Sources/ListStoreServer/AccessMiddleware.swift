import Crypto
import Hummingbird
import HummingbirdAuth

/// Tells who made a request (Hummingbird's `AuthenticatorMiddleware`): the service token, or a
/// user whose JWT the server's access configuration verifies. A request without a token is
/// answered 401 with `WWW-Authenticate: Bearer` (the routes that need none come before this
/// middleware), before its body or content type is looked at; a token that is neither is answered
/// 401 with `WWW-Authenticate: Bearer error="invalid_token"` and why. On a server
/// with neither a service token nor an access configuration, everyone is `.service`.
///
/// The service token is compared through SHA-256 digests, whose comparison takes the same time
/// wherever they differ; a user's token is verified once per request.
struct AccessMiddleware: AuthenticatorMiddleware {
    typealias Context = ServerRequestContext
    private let service: SHA256.Digest?
    let state: ServerState

    init(token: String?, state: ServerState) {
        service = token.map { SHA256.hash(data: Array($0.utf8)) }
        self.state = state
    }

    func authenticate(request: Request, context: ServerRequestContext) async throws -> AccessIdentity? {
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
        // Every route after this middleware needs a token (those that need none come before it):
        // a request without one is refused here, before anything looks at its body.
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
