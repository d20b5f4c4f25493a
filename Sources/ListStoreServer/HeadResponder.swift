import Hummingbird

/// Answers HEAD requests as the GET route of their path does (its `Content-Length` too), without
/// the body.
struct HeadResponder<Responder: HTTPResponder>: HTTPResponder {
    let responder: Responder

    func respond(to request: Request, context: Responder.Context) async throws -> Response {
        guard request.method == .head else { return try await responder.respond(to: request, context: context) }
        var head = request.head
        head.method = .get
        let get = Request(head: head, body: request.body)
        return try await responder.respond(to: get, context: context).createHeadResponse()
    }
}
