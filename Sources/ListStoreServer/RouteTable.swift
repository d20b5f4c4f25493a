import HTTPTypes
import Hummingbird

/// What every route of `JournalServer` needs of a request's identity: the one table `AccessMiddleware`
/// checks each request against. A route the router has and the table has not is refused to
/// everyone (403 `forbidden`): access fails closed, and `RouteTableTests` holds the router's routes
/// against the table.
///
/// ```swift
/// RouteTable.server.need(.get, "/v1/lists/{list}/journal")   // .list(.read)
/// ```
struct RouteTable: Sendable {
    /// What a route needs of the request's identity.
    enum Need: Sendable, Equatable {
        /// Nothing: no token (the API's description, the health check).
        case nothing
        /// Any valid token (the service token or a user's).
        case anyToken
        /// The service token.
        case service
        /// A grant on the path's list: at least this one.
        case list(AccessGrant)
    }

    /// A route as Hummingbird names it: its method, and its path with `{parameter}` captures (what
    /// `RequestContext.endpointPath` holds once the router matched it).
    struct Route: Hashable, Sendable, CustomStringConvertible {
        var method: HTTPRequest.Method
        var path: String

        /// The route of `method` and `path` written as the router is given it (`v1/lists/:list`).
        init(_ method: HTTPRequest.Method, _ path: String) {
            self.method = method
            self.path = RouterPath(path).description
        }

        var description: String { "\(method) \(path)" }
    }

    /// Each route's need.
    let needs: [Route: Need]

    /// The server's routes (those `JournalRoutes` adds) and what each needs.
    static let server = RouteTable(needs: [
        Route(.get, "v1/openapi.json"): .nothing,
        Route(.get, "health"): .nothing,
        // It answers for the request it is asked about (see `AccessMiddleware.access(_:)`).
        Route(.get, "v1/access"): .nothing,
        Route(.get, "metrics"): .service,
        Route(.get, "v1/store"): .anyToken,
        Route(.get, "v1/changes"): .anyToken,
        Route(.get, "v1/events"): .anyToken,
        Route(.get, "v1/lists"): .anyToken,
        Route(.get, "v1/lists/:list"): .list(.read),
        Route(.delete, "v1/lists/:list"): .list(.admin),
        Route(.get, "v1/lists/:list/snapshot"): .list(.read),
        Route(.get, "v1/lists/:list/journal"): .list(.read),
        Route(.get, "v1/lists/:list/pages"): .list(.read),
        Route(.get, "v1/lists/:list/diff"): .list(.read),
        Route(.get, "v1/lists/:list/events"): .list(.read),
        Route(.get, "v1/lists/:list/pushes/:client"): .list(.read),
        Route(.post, "v1/lists/:list/commits"): .list(.write),
        Route(.post, "v1/lists/:list/pushes"): .list(.write),
        Route(.put, "v1/lists/:list/consumers/:name"): .list(.admin),
        Route(.put, "v1/lists/:list/blobs/:blob"): .list(.write),
        Route(.get, "v1/lists/:list/blobs/:blob"): .list(.read),
        // Where a blob stands (its size, and an upload's progress) tells no more than the blob.
        Route(.get, "v1/lists/:list/blobs/:blob/upload"): .list(.read),
    ])

    /// The route of the table that a request of `method` for `path` reaches, and what its
    /// `{parameter}` captures hold (as written, percent-encoded); `nil` when none does. Empty
    /// segments are skipped, as Hummingbird's router skips them (`/v1/lists/a//journal/` reaches
    /// the journal of `a`).
    /// - Complexity: O(routes × segments of `path`).
    func route(_ method: HTTPRequest.Method, _ path: Substring) -> (route: Route, captures: [String: Substring])? {
        let segments = path.split(separator: "/")
        for route in needs.keys where route.method == method {
            let pattern = route.path.split(separator: "/")
            guard pattern.count == segments.count else { continue }
            var captures = [String: Substring]()
            let matches = zip(pattern, segments).allSatisfy { part, segment in
                guard part.hasPrefix("{"), part.hasSuffix("}") else { return part == segment }
                captures[String(part.dropFirst().dropLast())] = segment
                return true
            }
            if matches { return (route, captures) }
        }
        return nil
    }

    /// What a request of `method` that the router matched to `endpointPath` needs: `nil` for a
    /// route without an entry (refused); a request no route matched (`endpointPath` `nil`, answered
    /// 404) needs a token, so that what paths exist is told to those who have one only.
    /// - Complexity: O(length of the path).
    func need(_ method: HTTPRequest.Method, _ endpointPath: String?) -> Need? {
        guard let endpointPath else { return .anyToken }
        var route = Route(method, "")
        route.path = endpointPath
        return needs[route]
    }
}
