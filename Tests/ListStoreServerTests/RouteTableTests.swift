import Foundation
import HTTPTypes
import Hummingbird
import ListStore
import ListStoreCore
import Logging
import NIOCore
import NIOEmbedded
@testable import ListStoreServer
import ListStoreTestSupport
import Testing

/// Access fails closed: every route of the server's router has an entry in the route table, every
/// entry is a route, and a route added without an entry is refused to everyone, the service token
/// included.
@Suite struct RouteTableTests {
    @Test func theRoutersRoutesAreTheTablesRoutes() throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        let server = JournalServer(store: store, configuration: .init(port: 0, token: "t"))
        let router = server.router(watcher: HeadWatcher(store: store, pollInterval: .seconds(1)))
        let routed = Set(router.routes.map { route in
            var key = RouteTable.Route(route.method, "")
            key.path = route.path.description
            return key
        })
        let table = Set(RouteTable.server.needs.keys)
        #expect(routed.subtracting(table).isEmpty, "routes without an entry: \(routed.subtracting(table))")
        #expect(table.subtracting(routed).isEmpty, "entries without a route: \(table.subtracting(routed))")
        #expect(routed.count == RouteTable.server.needs.count)
    }

    /// A route the table does not name is refused (403), with or without a token, before its
    /// handler runs; a path no route matches needs a token before it is answered 404.
    @Test func aRouteWithoutAnEntryIsRefusedToEveryone() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        let state = ServerState(.init(port: 0, token: "t"))
        let router = Router(context: ServerRequestContext.self)
        router.add(middleware: JSONErrorMiddleware(storeLocation: store.location))
        router.add(middleware: AccessMiddleware(token: "t", state: state, storeLocation: store.location))
        let ran = _Locked(false)
        router.get("v1/secret") { _, _ in
            ran.withLock { $0 = true }
            return "secret"
        }
        let responder = router.buildResponder()
        for authorization in [nil, "Bearer t"] {
            let answer = try await Self.respond(responder, "/v1/secret", authorization: authorization)
            #expect(answer.status == .forbidden, "\(authorization ?? "no token")")
        }
        #expect(!ran.withLock { $0 })
        #expect(try await Self.respond(responder, "/v1/nowhere", authorization: nil).status == .unauthorized)
        #expect(try await Self.respond(responder, "/v1/nowhere", authorization: "Bearer t").status == .notFound)
    }

    /// What `responder` answers a GET of `path`.
    static func respond(_ responder: some HTTPResponder<ServerRequestContext>, _ path: String, authorization: String?) async throws -> Response {
        var head = HTTPRequest(method: .get, scheme: "http", authority: "127.0.0.1", path: path)
        head.headerFields[.authorization] = authorization
        let request = Request(head: head, body: .init(buffer: ByteBuffer()))
        let context = ServerRequestContext(source: .init(channel: EmbeddedChannel(), logger: Logger(label: "test")))
        do {
            return try await responder.respond(to: request, context: context)
        } catch let error as any HTTPResponseError {
            return try error.response(from: request, context: context)
        }
    }
}
