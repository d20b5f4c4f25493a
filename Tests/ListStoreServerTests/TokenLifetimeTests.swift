import Foundation
import ListDiffTestSupport
import ListJSON
import ListStore
@testable import ListStoreServer
import ListStoreTestSupport
import ListStoreWire
import Testing

/// Tokens whose expiry is as far as JSON can write it: every wait bounded by a token's lifetime
/// takes it saturating, and the server stays up and answers.
@Suite(.timeLimit(.minutes(3))) struct TokenLifetimeTests {
    /// `exp` values beyond any clock: 1e21 seconds, the largest double, and one that parses as infinity.
    static let farExpiries = ["1e21", "1.7976931348623157e308", "1e400"]

    @Test func tokensThatExpireBeyondAnyClockWaitAsOthersDo() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(3), to: "users/ana/inbox")
        try await ServerHarness.with(store, try await AccessServerTests.configuration()) { server in
            let list = "/v1/lists/users%2Fana%2Finbox"
            let host = "Host: 127.0.0.1:\(server.port)\r\n"
            // An event stream of the service token stays open, waiting at the head all along.
            let watching = try RawConnection(port: server.port)
            #expect(watching.send("GET \(list)/events?since=0 HTTP/1.1\r\n\(host)Authorization: Bearer service\r\n\r\n"))
            defer { withExtendedLifetime(watching) {} }
            var version = 1
            for exp in Self.farExpiries {
                let token = AccessServerTests.tokens.token(["sub": "ana", "exp": .number(try #require(JSONNumber(literal: exp)))])
                let auth = "Authorization: Bearer \(token)\r\n"
                #expect(try await server.request(list, token: token).status == 200, "exp \(exp)")
                // The route's long poll (a percent-encoded value: the route answers it).
                let routed = try await server.request("\(list)/journal?since=%3\(version)&wait=1", token: token)
                #expect(routed.status == 200, "exp \(exp)")
                // The list's event stream: its backlog, then it follows.
                let last = "id: \(version)\n"
                let events = try await RawSocket.exchange(
                    port: server.port, "GET \(list)/events?since=0 HTTP/1.1\r\n\(host)\(auth)\r\n", timeout: .seconds(60)
                ) { $0.contains(last) }
                #expect(events.hasPrefix("HTTP/1.1 200") && events.contains(last), "exp \(exp): \(events)")
                // The store feed, as a long poll at its head and as an event stream.
                let head = try StoreFeedRouteTests.page(try await server.request("/v1/changes?lists=**", token: token)).cursor
                let waited = try await server.request("/v1/changes?lists=**&since=\(head)&wait=1", token: token)
                #expect(waited.status == 200, "exp \(exp)")
                let feed = try await RawSocket.exchange(
                    port: server.port, "GET /v1/events?lists=users/ana/**&since=\(head) HTTP/1.1\r\n\(host)\(auth)\r\n", timeout: .seconds(60)
                ) { $0.contains(": keep-alive") }
                #expect(feed.hasPrefix("HTTP/1.1 200") && feed.contains(": keep-alive"), "exp \(exp): \(feed)")
                // A poll at the head is answered by the next commit.
                let (watcher, streams) = (try #require(server.server.watcher), server.server.state.streams)
                try await LimitTests.waitUntil { streams.current == 1 && watcher.waitingCount == 1 }
                let connection = try RawConnection(port: server.port)
                #expect(connection.send("GET \(list)/journal?since=\(version)&wait=30 HTTP/1.1\r\n\(host)\(auth)\r\n"))
                try await LimitTests.waitUntil { watcher.waitingCount == 2 }
                version += 1
                try await store.commit(linearList(3 + version), to: "users/ana/inbox")
                let woken = try await LongPollTests.read(1, from: connection)[0]
                #expect(woken.status == 200 && woken.body.contains("\"version\":\(version)"), "exp \(exp): \(woken.body)")
                try await server.waitUntilHealthy()
            }
        }
    }
}
