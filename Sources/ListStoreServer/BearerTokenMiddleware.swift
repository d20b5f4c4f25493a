import Crypto
import Hummingbird

/// Refuses every request that does not carry `Authorization: Bearer <token>` with 401. The tokens
/// are compared through their SHA-256 digests, whose comparison takes the same time wherever they
/// differ, so the answer's timing tells nothing about the token.
struct BearerTokenMiddleware<Context: RequestContext>: RouterMiddleware {
    private let expected: SHA256.Digest

    init(token: String) {
        expected = SHA256.hash(data: Array(token.utf8))
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let given = Self.bearerToken(request.headers[.authorization]),
            SHA256.hash(data: Array(given.utf8)) == expected
        else {
            var error = APIError(.unauthorized, "unauthorized", "this server needs 'Authorization: Bearer <token>' with its token")
            error.headers[.wwwAuthenticate] = "Bearer"
            throw error
        }
        return try await next(request, context)
    }

    /// The token of an `Authorization: Bearer …` header.
    static func bearerToken(_ header: String?) -> String? {
        guard let header, header.count > 7, header.prefix(7).lowercased() == "bearer " else { return nil }
        return String(header.dropFirst(7))
    }
}
