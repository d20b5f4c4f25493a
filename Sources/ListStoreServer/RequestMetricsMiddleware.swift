import Hummingbird

/// Counts every request by method, route and status in `ServerMetrics`, with how long it took; a
/// body of unknown length (an event stream) is timed to its end, one of known length as it is
/// handed over (wrapping it would cost a long poll more writes). It sits outside the error
/// middleware, so an error that escapes counts as what it would be answered with.
struct RequestMetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: ServerMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        let method = Self.methodLabel(request.method)
        do {
            var response = try await next(request, context)
            let (status, route, body) = (response.status.code, Self.route(context), response.body)
            guard body.contentLength == nil else {
                metrics.recordRequest(method: method, route: route, status: status, duration: ContinuousClock.now - start)
                return response
            }
            response.body = ResponseBody(contentLength: body.contentLength) { writer in
                defer {
                    metrics.recordRequest(method: method, route: route, status: status, duration: ContinuousClock.now - start)
                }
                try await body.write(writer)
            }
            return response
        } catch {
            // Stopped because its client hung up: nginx's 499, no failure of the server's.
            let status = error is CancellationError ? 499 : (error as? any HTTPResponseError)?.status.code ?? 500
            metrics.recordRequest(method: method, route: Self.route(context), status: status, duration: ContinuousClock.now - start)
            throw error
        }
    }

    /// The method as a label: one of the methods of HTTP's specification, or `other` (HTTP/2 takes
    /// any token as a method, and a client must not be able to grow the labels).
    static func methodLabel(_ method: HTTPRequest.Method) -> String {
        switch method {
        case .get, .head, .post, .put, .delete, .patch, .options, .connect, .trace: method.rawValue
        default: "other"
        }
    }

    /// The pattern of the route that answered (`/v1/lists/{list}/journal`), never a request's own
    /// path: list names are not labels of this metric. A request no route matched is `unmatched`
    /// (Hummingbird's router calls it `NotFound`).
    static func route(_ context: Context) -> String {
        guard let path = context.endpointPath, path != "NotFound" else { return "unmatched" }
        return path
    }
}
