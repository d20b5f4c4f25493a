import Foundation
import Hummingbird

/// Refuses (415) a POST or PUT whose body is not declared `Content-Type: application/json`: a
/// browser sends `text/plain` and form bodies cross-site without asking first, but must ask (a
/// CORS preflight, which this server does not grant) before it sends JSON. A blob's bytes
/// (`PUT /v1/lists/{list}/blobs/{blob}`) may be of any type: a browser asks first before any `PUT`
/// across origins.
struct JSONContentTypeMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let isBlob = request.method == .put && context.endpointPath == JournalRoutes.blobRoute.path
        if request.method == .post || (request.method == .put && !isBlob) {
            let mediaType = request.headers[.contentType]?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
            guard mediaType == "application/json" else {
                throw APIError(.unsupportedMediaType, "unsupportedMediaType", "the body must be sent with 'Content-Type: application/json'")
            }
        }
        return try await next(request, context)
    }
}
