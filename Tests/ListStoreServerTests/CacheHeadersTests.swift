import Foundation
import ListStore
@testable import ListStoreServer
import ListStoreTestSupport
import Testing

/// What a shared cache in front of the server relies on: journal answers that hold commits carry
/// an `ETag` (304 for a matching `If-None-Match`) and `X-Accel-Expires: 60` (`Cache-Control:
/// no-cache` to everyone else), empty ones `no-store` and `X-Accel-Expires: 0`;
/// `GET /v1/access` answers for the request a proxy asks about as its route would decide.
@Suite struct CacheHeadersTests {
    static let list = "/v1/lists/users%2Fana%2Finbox"

    @Test func journalAnswersWithCommitsAreCacheableAndEmptyOnesAreNot() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(3), to: "users/ana/inbox")
        try await store.commit(linearList(4), to: "users/ana/inbox")
        try await ServerHarness.with(store, try await AccessServerTests.configuration()) { server in
            let host = "Host: 127.0.0.1:\(server.port)\r\n"
            let auth = "Authorization: Bearer service\r\n"
            let page = try await RawAnswer.exchange(port: server.port, "GET \(Self.list)/journal?since=0 HTTP/1.1\r\n\(host)\(auth)")
            let etag = try #require(page.headers["etag"])
            #expect(page.status == 200 && page.headers["cache-control"] == "no-cache" && page.headers["x-accel-expires"] == "60")
            let again = try await RawAnswer.exchange(
                port: server.port, "GET \(Self.list)/journal?since=0 HTTP/1.1\r\n\(host)\(auth)If-None-Match: \(etag)\r\n")
            #expect(again.status == 304 && again.headers["etag"] == etag && again.body.isEmpty)
            // Another page (a commit more) has another tag.
            try await store.commit(linearList(5), to: "users/ana/inbox")
            let grown = try await RawAnswer.exchange(port: server.port, "GET \(Self.list)/journal?since=0 HTTP/1.1\r\n\(host)\(auth)If-None-Match: \(etag)\r\n")
            #expect(grown.status == 200 && grown.headers["etag"] != etag && grown.body.contains("\"version\":3"))
            // At the head, and at the end of a long poll's wait: nothing to keep.
            for query in ["since=3", "since=3&wait=1"] {
                let empty = try await RawAnswer.exchange(port: server.port, "GET \(Self.list)/journal?\(query) HTTP/1.1\r\n\(host)\(auth)")
                #expect(
                    empty.status == 200 && empty.headers["cache-control"] == "no-store" && empty.headers["x-accel-expires"] == "0"
                        && empty.headers["etag"] == nil, "\(query)")
            }
        }
    }

    @Test func theAccessEndpointAnswersAsTheRouteWould() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(3), to: "users/ana/inbox")
        try await ServerHarness.with(store, try await AccessServerTests.configuration()) { server in
            let host = "Host: 127.0.0.1:\(server.port)\r\n"
            func ask(_ uri: String, method: String = "GET", token: String?) async throws -> RawAnswer {
                let auth = token.map { "Authorization: Bearer \($0)\r\n" } ?? ""
                return try await RawAnswer.exchange(
                    port: server.port, "GET /v1/access HTTP/1.1\r\n\(host)\(auth)X-Original-URI: \(uri)\r\nX-Original-Method: \(method)\r\n")
            }
            let ana = AccessServerTests.tokens.token(["sub": "ana"])
            let bob = AccessServerTests.tokens.token(["sub": "bob"])
            for token in ["service", ana] {
                let allowed = try await ask("\(Self.list)/journal?since=0&wait=30", token: token)
                #expect(allowed.status == 204 && allowed.headers["cache-control"]?.hasPrefix("max-age=") == true, "\(allowed.status)")
            }
            // Bob may not read Ana's list: the route would answer 404, as for a list that does not exist.
            let refused = try await ask("\(Self.list)/journal?since=0", token: bob)
            #expect(refused.status == 403 && refused.headers["x-liststore-status"] == "404")
            #expect(refused.headers["x-liststore-error"]?.contains("listNotFound") == true)
            let direct = try await server.request("\(Self.list)/journal?since=0", token: bob)
            #expect(direct.status == 404)
            #expect(String(decoding: direct.body, as: UTF8.self) == refused.headers["x-liststore-error"])
            // HEAD is asked about as GET; a CORS preflight needs no token.
            let head = try await ask("\(Self.list)/journal?since=0", method: "HEAD", token: bob)
            #expect(head.status == 403 && head.headers["x-liststore-status"] == "404")
            #expect(try await ask("\(Self.list)/journal", method: "OPTIONS", token: nil).status == 204)
            // Ana may read but not administer: what the route would answer to a DELETE.
            let delete = try await ask(Self.list, method: "DELETE", token: ana)
            #expect(delete.status == 403 && delete.headers["x-liststore-status"] == "403")
            // No token, or one not accepted: 401, not kept.
            for token in [nil, "nonsense"] {
                let unauthorized = try await ask("\(Self.list)/journal", token: token)
                #expect(unauthorized.status == 401 && unauthorized.headers["x-liststore-status"] == "401")
                #expect(unauthorized.headers["www-authenticate"] != nil && unauthorized.headers["cache-control"] == nil)
            }
            // Routes that need nothing, and paths no route has (which need a token).
            #expect(try await ask("/health", token: nil).status == 204)
            #expect(try await ask("/v1/nowhere", token: nil).status == 401)
            #expect(try await ask("/v1/nowhere", token: ana).status == 204)
            // The request asked about is named: a path, and a method of HTTP's own.
            let unnamed = try await RawAnswer.exchange(port: server.port, "GET /v1/access HTTP/1.1\r\n\(host)Authorization: Bearer service\r\n")
            #expect(unnamed.status == 400 && unnamed.errorCode == "invalidArgument")
            #expect(try await ask("v1/lists", token: "service").status == 400)
            #expect(try await ask("/v1/lists", method: "BREW", token: "service").status == 400)
        }
    }
}
