import Foundation
import Hummingbird

/// Refuses (415) a POST or PUT whose body is not declared `Content-Type: application/json`: a
/// browser sends other bodies cross-site without a preflight, but not JSON. A blob's bytes may be
/// of any type: a browser asks first before any cross-origin `PUT`.
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
