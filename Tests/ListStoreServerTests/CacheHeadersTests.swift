import Foundation
import ListDiffTestSupport
import ListStore
@testable import ListStoreServer
import ListStoreTestSupport
import Testing

/// What a shared cache in front of the server relies on: journal answers that hold commits carry
/// an `ETag` (304 for a matching `If-None-Match`) and `X-Accel-Expires: 60` (`Cache-Control:
/// no-cache` to everyone else), empty ones `no-store` and `X-Accel-Expires: 0` (a long poll's asked
/// with a cursor for its `wait`, with the next cursor);
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
            // At the head: nothing to keep.
            let empty = try await RawAnswer.exchange(port: server.port, "GET \(Self.list)/journal?since=3 HTTP/1.1\r\n\(host)\(auth)")
            #expect(
                empty.status == 200 && empty.headers["cache-control"] == "no-store" && empty.headers["x-accel-expires"] == "0"
                    && empty.headers["etag"] == nil && empty.headers["x-liststore-cursor"] == nil)
        }
    }

    /// The empty answer of a long poll asked with a cursor may be kept by the cache for the
    /// followers waiting behind it (for its `wait`), with a cursor past the one it was asked with:
    /// their next long poll is a URL the cache does not answer.
    @Test func anEmptyLongPollCarriesACursorAndMayBeKeptForItsWait() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(3), to: "users/ana/inbox")
        try await ServerHarness.with(store, try await AccessServerTests.configuration()) { server in
            let head = "Host: 127.0.0.1:\(server.port)\r\nAuthorization: Bearer service\r\n"
            func poll(_ query: String) async throws -> RawAnswer {
                try await RawAnswer.exchange(port: server.port, "GET \(Self.list)/journal?\(query) HTTP/1.1\r\n\(head)")
            }
            let before = Int(Date().timeIntervalSince1970)
            let first = try await poll("since=1&wait=1&cursor=0")
            let cursor = try #require(first.headers["x-liststore-cursor"].flatMap { Int($0) })
            #expect(first.status == 200 && first.headers["cache-control"] == "no-store" && first.headers["x-accel-expires"] == "1")
            #expect(first.headers["etag"] == nil && cursor >= before, "\(cursor) before \(before)")
            // Asked again with it: a cursor past it, whatever the clock says.
            let far = LongPollCursor.max - 1
            let next = try await poll("since=1&wait=1&cursor=\(far)")
            #expect(next.status == 200 && next.headers["x-liststore-cursor"] == String(far + 1))
            let last = try await poll("since=1&wait=1&cursor=\(LongPollCursor.max)")
            #expect(last.status == 200 && last.headers["x-liststore-cursor"].flatMap { Int($0) }.map { $0 < LongPollCursor.max } == true)
            // Asked without a cursor, by a client that would ask the same URL again: not kept.
            let plain = try await poll("since=1&wait=1")
            #expect(plain.status == 200 && plain.headers["x-accel-expires"] == "0" && plain.headers["x-liststore-cursor"] != nil)
            // Past the largest, or not a number: refused.
            for bad in [String(LongPollCursor.max + 1), "-1", "x", ""] {
                let refused = try await poll("since=1&wait=1&cursor=\(bad)")
                #expect(refused.status == 400 && refused.errorCode == "invalidArgument", "cursor=\(bad): \(refused.status)")
            }
            // An answer that holds entries has no cursor, cursor or not.
            let page = try await poll("since=0&wait=1&cursor=\(cursor)")
            #expect(page.status == 200 && page.headers["x-accel-expires"] == "60" && page.headers["x-liststore-cursor"] == nil)
        }
    }

    /// The cursor is past the one asked with, and otherwise the number of `wait`-second stretches
    /// since 1970: answers in one stretch give followers one URL to meet on.
    @Test func theCursorIsPastTheOneAskedWithAndFollowsTheClock() {
        #expect(LongPollCursor.next(after: nil, wait: 30, now: 1_764_590_400) == 58_819_680)
        #expect(LongPollCursor.next(after: nil, wait: 30, now: 1_764_590_429.9) == 58_819_680)
        #expect(LongPollCursor.next(after: 58_819_680, wait: 30, now: 1_764_590_400) == 58_819_681)
        #expect(LongPollCursor.next(after: 7, wait: 30, now: 1_764_590_400) == 58_819_680)
        #expect(LongPollCursor.next(after: nil, wait: 0, now: 0) == 0)
        #expect(LongPollCursor.next(after: LongPollCursor.max, wait: 30, now: 1_764_590_400) == 58_819_680)
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<5_000 {
            let wait = Int.random(in: 1...60, using: &generator)
            let now = Double.random(in: 0...4_000_000_000, using: &generator)
            let cursor = Bool.random(using: &generator) ? nil : Int.random(in: 0..<LongPollCursor.max, using: &generator)
            let next = LongPollCursor.next(after: cursor, wait: wait, now: now)
            #expect(next > (cursor ?? -1) && next >= Int(now) / wait)
            #expect(next == (cursor ?? -1) + 1 || next == Int(now) / wait)
        }
    }

    @Test func theAccessEndpointAnswersAsTheRouteWould() async throws {
        try await Self.withAnasList { server in
            let host = "Host: 127.0.0.1:\(server.port)\r\n"
            func ask(_ uri: String, method: String = "GET", token: String?) async throws -> RawAnswer {
                try await Self.ask(server, uri, method: method, token: token)
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
            let nowhere = try await ask("/v1/nowhere", token: ana)
            let directly = try await server.request("/v1/nowhere", token: ana)
            #expect(nowhere.status == 403 && nowhere.headers["x-liststore-status"] == "404" && directly.status == 404)
            #expect(nowhere.headers["x-liststore-error"] == String(decoding: directly.body, as: UTF8.self))
            // The request asked about is named: a path, and a method of HTTP's own.
            let unnamed = try await RawAnswer.exchange(port: server.port, "GET /v1/access HTTP/1.1\r\n\(host)Authorization: Bearer service\r\n")
            #expect(unnamed.status == 400 && unnamed.errorCode == "invalidArgument")
            #expect(try await ask("v1/lists", token: "service").status == 400)
            #expect(try await ask("/v1/lists", method: "BREW", token: "service").status == 400)
        }
    }

    /// The router finds a route in a path with empty segments (a trailing slash, doubled slashes):
    /// the access endpoint finds the same route, so that it never allows what the route refuses.
    @Test func theAccessEndpointFindsTheRouteInPathsWithEmptySegments() async throws {
        try await Self.withAnasList { server in
            let ana = AccessServerTests.tokens.token(["sub": "ana"])
            let bob = AccessServerTests.tokens.token(["sub": "bob"])
            // A `?` that Swift sees as one character with the mark after it still ends the path.
            let marked = try await Self.ask(server, "\(Self.list)/journal?\u{301}since=0", token: bob)
            #expect(marked.status == 403 && marked.headers["x-liststore-status"] == "404", "\(marked.status)")
            for path in ["\(Self.list)/journal/", "/\(Self.list)/journal", "/v1//lists/users%2Fana%2Finbox//journal"] {
                let uri = "\(path)?since=0"
                for (token, status) in [(ana, 200), (bob, 404)] {
                    let direct = try await server.request(uri, token: token)
                    #expect(direct.status == status, "\(uri): \(direct.status)")
                    let asked = try await Self.ask(server, uri, token: token)
                    let expected = status == 200 ? 204 : 403
                    #expect(asked.status == expected, "\(uri) asked about: \(asked.status)")
                    if status != 200 { #expect(asked.headers["x-liststore-status"] == String(status)) }
                }
            }
        }
    }

    /// Request targets made at random around Ana's list (empty segments, marks and joiners after a
    /// `?` or a segment, fragments, `.` and `..`, an encoded `?`, other and extra segments): for Ana
    /// and for Bob, who may not read her list, the access endpoint decides as the route does. An
    /// answer of 200 is allowed (204), and a refusal (401, 403, 404) is refused with its status.
    @Test func theAccessEndpointDecidesAsTheRouteOnRandomTargets() async throws {
        try await Self.withAnasList { server in
            let host = "Host: 127.0.0.1:\(server.port)\r\n"
            let tokens = [("ana", AccessServerTests.tokens.token(["sub": "ana"])), ("bob", AccessServerTests.tokens.token(["sub": "bob"]))]
            let pieces = ["", ".", "..", "%3F", "x", "users", "ana", "inbox", "Journal", "journal", "snapshot", "\u{301}", "lists", "v1"]
            let marks = ["\u{301}", "\u{200D}", "\u{20DD}"]
            let tails = ["", "?since=0", "?", "#top", "?since=0#top", "?since=0&x=1"]
            var generator = SplitMix64(seed: 0x0ACC_E55)
            for _ in 0..<1_000 {
                var segments = ["v1", "lists", "users%2Fana%2Finbox", Bool.random(using: &generator) ? "journal" : "snapshot"]
                for _ in 0..<Int.random(in: 0...2, using: &generator) {
                    switch Int.random(in: 0..<5, using: &generator) {
                    case 0: segments.insert("", at: Int.random(in: 0...segments.count, using: &generator))
                    case 1: segments[Int.random(in: 0..<segments.count, using: &generator)] = pieces.randomElement(using: &generator)!
                    case 2: segments.append(pieces.randomElement(using: &generator)!)
                    case 3: segments[Int.random(in: 0..<segments.count, using: &generator)] += marks.randomElement(using: &generator)!
                    default: break
                    }
                }
                var tail = tails.randomElement(using: &generator)!
                if tail.hasPrefix("?"), Bool.random(using: &generator) { tail.insert(contentsOf: marks.randomElement(using: &generator)!, at: tail.index(after: tail.startIndex)) }
                let target = "/" + segments.joined(separator: "/") + tail
                for (who, token) in tokens {
                    let direct = try await RawAnswer.exchange(port: server.port, "GET \(target) HTTP/1.1\r\n\(host)Authorization: Bearer \(token)\r\n")
                    let asked = try await Self.ask(server, target, token: token)
                    let what = "\(who) \(target.unicodeScalars.map { $0.isASCII ? String($0) : "\\u{\(String($0.value, radix: 16))}" }.joined()):"
                    + " the route \(direct.status), asked \(asked.status) \(asked.headers["x-liststore-status"] ?? "")"
                    switch direct.status {
                    case 200: #expect(asked.status == 204, "\(what)")
                    case 401: #expect(asked.status == 401, "\(what)")
                    case 403, 404: #expect(asked.status == 403 && asked.headers["x-liststore-status"] == String(direct.status), "\(what)")
                    default: break
                    }
                }
            }
        }
    }

    /// Runs `body` with a server of users (`AccessServerTests.configuration()`) whose store holds
    /// Ana's list, `users/ana/inbox`.
    static func withAnasList(_ body: (ServerHarness) async throws -> Void) async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(3), to: "users/ana/inbox")
        try await ServerHarness.with(store, try await AccessServerTests.configuration(), body)
    }

    /// What `GET /v1/access` answers about a request of `method` for `uri` with `token` (none:
    /// without `Authorization`).
    static func ask(_ server: ServerHarness, _ uri: String, method: String = "GET", token: String?) async throws -> RawAnswer {
        let auth = token.map { "Authorization: Bearer \($0)\r\n" } ?? ""
        return try await RawAnswer.exchange(
            port: server.port,
            "GET /v1/access HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n\(auth)X-Original-URI: \(uri)\r\nX-Original-Method: \(method)\r\n")
    }
}
