import HTTPTypes
import Hummingbird

/// Lets web pages of the `--allow-origin` origins use the server from browsers (CORS): answers
/// their preflights and gives their answers `Access-Control-Allow-Origin` (RunningAServer.md,
/// “Browsers”). Added before the JSON error middleware, so that refusals reach the page too.
struct CORSMiddleware<Context: RequestContext>: RouterMiddleware {
    let allowedOrigins: Set<String>

    init(configuration: JournalServer.Configuration) {
        allowedOrigins = Set(configuration.allowedOrigins.map { OriginPolicyMiddleware<Context>.normalizedOrigin($0) })
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let origin = request.headers[.origin], allowedOrigins.contains(OriginPolicyMiddleware<Context>.normalizedOrigin(origin)) else {
            var response = try await next(request, context)
            if !allowedOrigins.isEmpty { response.headers[.vary] = "Origin" }
            return response
        }
        if request.method == .options, request.headers[.accessControlRequestMethod] != nil {
            var headers = HTTPFields()
            headers[.accessControlAllowOrigin] = origin
            headers[.accessControlAllowMethods] = "GET, POST, PUT, DELETE"
            headers[.accessControlAllowHeaders] = "Authorization, Content-Type, Last-Event-ID, Range, Content-Range, If-None-Match"
            headers[.accessControlMaxAge] = "600"
            headers[.vary] = "Origin"
            return Response(status: .noContent, headers: headers)
        }
        var response = try await next(request, context)
        response.headers[.accessControlAllowOrigin] = origin
        response.headers[.accessControlExposeHeaders] = "Retry-After, WWW-Authenticate, ETag, Content-Range, X-ListStore-Cursor"
        response.headers[.vary] = "Origin"
        return response
    }
}
