import Foundation
import ListDiff
import ListDiffTestSupport
import ListJSON
import ListStore
@testable import ListStoreServer
import ListStorePostgresTestSupport
import ListStoreTestSupport
import ListStoreWire
import Testing

/// A journal server with users: every route enforces what a token's rules grant, an unreadable
/// list answers as a missing one, writes record the token's subject, and no request ever reads or
/// changes what its token may not.
@Suite struct AccessServerTests {
    static let tokens = TestTokens()
    static let rules: JSONValue = [
        ["lists": "users/{sub}/**", "grant": "write"], ["lists": "teams/{teams}/**", "grant": "read"],
        ["lists": "teams/{admin_of}/**", "grant": "admin"], ["lists": "public/*", "grant": "read"],
    ]

    static func configuration() async throws -> JournalServer.Configuration {
        let access = try await AccessConfiguration(json: tokens.accessFile(rules: rules))
        return JournalServer.Configuration(port: 0, token: "service", keepAliveInterval: .seconds(1), access: access)
    }

    /// A commit's body: the snapshot document of `linearList(count)` and the members given.
    static func commitBody(_ version: Int?, author: String = "someone else", count: Int = 4) -> String {
        let snapshot = ListSnapshot(list: "x", version: 0, digest: ListDigest.of(linearList(count)), sections: linearList(count))
        let document = String(decoding: snapshot.documentJSON, as: UTF8.self)
        return document.dropLast() + #","author":"\#(author)""# + (version.map { #","expectedVersion":\#($0)"# } ?? "") + "}"
    }

    @Test func usersReachTheirOwnListsAndNoOneElses() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        for list in ["users/ana/inbox", "users/bob/inbox", "teams/red/plan", "public/news"] {
            try await store.commit(linearList(3), to: list)
        }
        let ana = Self.tokens.token(["sub": "ana", "teams": ["red"]])
        let bob = Self.tokens.token(["sub": "bob"])
        try await ServerHarness.with(store, try await Self.configuration()) { server in
            // Reads: own and granted lists, never another's, which answers as a missing list.
            #expect(try await server.request("/v1/lists/users%2Fana%2Finbox/snapshot", token: ana).status == 200)
            #expect(try await server.request("/v1/lists/teams%2Fred%2Fplan", token: ana).status == 200)
            #expect(try await server.request("/v1/lists/public%2Fnews", token: bob).status == 200)
            let hidden = try await server.request("/v1/lists/users%2Fana%2Finbox", token: bob)
            let missing = try await server.request("/v1/lists/users%2Fbob%2Fnothing", token: bob)
            #expect(hidden.status == 404 && missing.status == 404)
            #expect(String(decoding: hidden.body, as: UTF8.self) == String(decoding: missing.body, as: UTF8.self).replacingOccurrences(of: "users/bob/nothing", with: "users/ana/inbox"))
            // The list of lists holds only what the token may read.
            let listed = try WireDocument.decodeLists(try await server.request("/v1/lists", token: bob).body).map(\.name)
            #expect(listed == ["public/news", "users/bob/inbox"])
            // Writes: 403 on a list it may read but not write; the author is the token's subject.
            let denied = try await server.request("/v1/lists/teams%2Fred%2Fplan/commits", method: "POST", body: Self.commitBody(nil), token: ana)
            #expect(denied.status == 403)
            #expect((try? WireDocument.decodeError(denied.body).code) == "forbidden")
            let committed = try await server.request("/v1/lists/users%2Fana%2Finbox/commits", method: "POST", body: Self.commitBody(1), token: ana)
            #expect(committed.status == 200, "\(String(decoding: committed.body, as: UTF8.self))")
            #expect(try await store.journal(of: "users/ana/inbox", after: 1).entries.map(\.author) == ["ana"])
            // The service token still reaches everything and writes as the body says.
            _ = try await server.request("/v1/lists/teams%2Fred%2Fplan/commits", method: "POST", body: Self.commitBody(1, author: "ops"), token: "service")
            #expect(try await store.journal(of: "teams/red/plan", after: 1).entries.map(\.author) == ["ops"])
            // Metrics for the service token only; the store's identity for any valid token.
            #expect(try await server.request("/metrics", token: ana).status == 403)
            #expect(try await server.request("/metrics", token: "service").status == 200)
            #expect(try await server.request("/v1/store", token: bob).status == 200)
            // No token, or a bad one: 401; the health check needs none.
            #expect(try await server.request("/v1/store").status == 401)
            // Without a token, a write is refused for that before its content type is looked at.
            let untyped = try await RawAnswer.exchange(
                port: server.port, "POST /v1/lists/users%2Fana%2Finbox/commits HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n", body: "{}")
            #expect(untyped.status == 401 && untyped.headers["www-authenticate"] == "Bearer", "\(untyped.status)")
            #expect(try await server.request("/v1/store", token: ana + "x").status == 401)
            try await server.waitUntilHealthy()
        }
    }

    /// Pages of an `--allow-origin` origin: their preflights are answered, their answers (refusals
    /// included) carry their origin, never `*`; other origins are refused.
    @Test func browsersOfAllowedOriginsGetCORSAnswers() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(3), to: "users/ana/inbox")
        var configuration = try await Self.configuration()
        configuration.allowedOrigins = ["https://app.example"]
        let ana = Self.tokens.token(["sub": "ana"])
        try await ServerHarness.with(store, configuration) { server in
            let head = "Host: 127.0.0.1:\(server.port)\r\nOrigin: https://app.example\r\n"
            let preflight = try await RawAnswer.exchange(
                port: server.port,
                "OPTIONS /v1/lists/users%2Fana%2Finbox/commits HTTP/1.1\r\n\(head)Access-Control-Request-Method: POST\r\nAccess-Control-Request-Headers: authorization, content-type\r\n")
            #expect(preflight.status == 204)
            #expect(preflight.headers["access-control-allow-origin"] == "https://app.example")
            #expect(preflight.headers["access-control-allow-methods"]?.contains("POST") == true)
            #expect(preflight.headers["access-control-allow-headers"] == "Authorization, Content-Type, Last-Event-ID, Range, Content-Range, If-None-Match")
            #expect(preflight.headers["vary"] == "Origin")
            let read = try await RawAnswer.exchange(
                port: server.port, "GET /v1/lists/users%2Fana%2Finbox/snapshot HTTP/1.1\r\n\(head)Authorization: Bearer \(ana)\r\n")
            #expect(read.status == 200 && read.headers["access-control-allow-origin"] == "https://app.example")
            #expect(read.headers["vary"] == "Origin" && read.headers["access-control-expose-headers"]?.contains("WWW-Authenticate") == true)
            let refused = try await RawAnswer.exchange(port: server.port, "GET /v1/lists HTTP/1.1\r\n\(head)")
            #expect(refused.status == 401 && refused.headers["access-control-allow-origin"] == "https://app.example")
            #expect(refused.errorCode == "unauthorized")
            let elsewhere = "Host: 127.0.0.1:\(server.port)\r\nOrigin: https://evil.example\r\n"
            let foreign = try await RawAnswer.exchange(
                port: server.port, "GET /v1/lists/users%2Fana%2Finbox/snapshot HTTP/1.1\r\n\(elsewhere)Authorization: Bearer \(ana)\r\n")
            #expect(foreign.status == 403 && foreign.errorCode == "originNotAllowed" && foreign.headers["access-control-allow-origin"] == nil)
        }
    }

    /// A long poll and an event stream end when their token expires (the server's `wait` and
    /// keep-alive are far longer than the test may take): the client comes back with a fresh token
    /// and resumes. A token that expired on its way (a loaded machine) is refused, and the test
    /// tries again with a new one.
    @Test(.timeLimit(.minutes(3))) func waitsEndWhenTheTokenExpires() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(3), to: "users/ana/inbox")
        let access = try await AccessConfiguration(json: Self.tokens.accessFile(rules: Self.rules, extra: [("leeway", 0)]))
        let configuration = JournalServer.Configuration(
            port: 0, token: "service", maxWait: .seconds(300), keepAliveInterval: .seconds(300), access: access)
        func soon() -> String { Self.tokens.token(["sub": "ana", "exp": .number(JSONNumber(Int(Date().timeIntervalSince1970) + 4))]) }
        try await ServerHarness.with(store, configuration) { server in
            // wait=300 outlasts the test's time limit: only the token's expiry can answer it in time.
            var poll = try await server.request("/v1/lists/users%2Fana%2Finbox/journal?since=1&wait=300", token: soon())
            while poll.status == 401 {
                poll = try await server.request("/v1/lists/users%2Fana%2Finbox/journal?since=1&wait=300", token: soon())
            }
            #expect(poll.status == 200)
            #expect(try WireDocument.decodeJournal(poll.body).entries.map(\.version) == [])
            var stream = ""
            repeat {
                stream = try await RawSocket.exchange(
                    port: server.port,
                    "GET /v1/lists/users%2Fana%2Finbox/events?since=0 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(soon())\r\nConnection: close\r\n\r\n",
                    timeout: .seconds(150)
                ) { $0.hasSuffix("\r\n0\r\n\r\n") || $0.hasPrefix("HTTP/1.1 401") && $0.contains("\r\n\r\n{") }
            } while stream.hasPrefix("HTTP/1.1 401")
            #expect(stream.hasSuffix("\r\n0\r\n\r\n"), "the stream ended by itself")
            #expect(ServerTests.eventIDs(stream) == ["id: 1"])
        }
    }

    /// A token whose `sub` is not a string (an array, a number) or that has none cannot write: its
    /// commits and pushes would be recorded without an author (403 `forbidden`, saying why). Its
    /// reads go on by the rules that do not name `{sub}`, and those that do grant it nothing.
    @Test func aTokenWhoseSubIsNotAStringCannotWrite() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        for list in ["users/ana/inbox", "teams/red/plan"] { try await store.commit(linearList(3), to: list) }
        try await ServerHarness.with(store, try await Self.configuration()) { server in
            let subs: [JSONValue?] = [["ana"], 42, ["ana", "bob"], nil]
            for sub in subs {
                var claims: [String: JSONValue] = ["admin_of": ["red"]]
                if let sub { claims["sub"] = sub }
                let token = Self.tokens.token(claims)
                let what = sub.map { String(decoding: $0.serializedBytes(), as: UTF8.self) } ?? "none"
                let commit = try await server.request("/v1/lists/teams%2Fred%2Fplan/commits", method: "POST", body: Self.commitBody(nil), token: token)
                let error = try? WireDocument.decodeError(commit.body)
                #expect(commit.status == 403 && error?.code == "forbidden" && error?.message.contains("sub") == true, "sub \(what): \(commit.status) \(error?.message ?? "")")
                let push = try await server.request(
                    "/v1/lists/teams%2Fred%2Fplan/pushes", method: "POST", body: #"{"client":"c1","seq":1,"intents":[]}"#, token: token)
                #expect(push.status == 403 && (try? WireDocument.decodeError(push.body).code) == "forbidden", "sub \(what): \(push.status)")
                #expect(try await server.request("/v1/lists/teams%2Fred%2Fplan/snapshot", token: token).status == 200, "sub \(what)")
                #expect(try await server.request("/v1/lists/users%2Fana%2Finbox", token: token).status == 404, "sub \(what)")
            }
            #expect(try await store.summary(of: "teams/red/plan").version == 1)
            #expect(try await store.summary(of: "users/ana/inbox").version == 1)
        }
    }

    /// A token whose rules grant nothing gets no list's content from any route of the API's
    /// document: a route added without a declared need shows here as an answer it should not get.
    @Test func aTokenWithoutGrantsGetsNothingFromAnyRoute() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(3), to: "users/ana/inbox")
        _ = try await store.registerConsumer("c", of: "users/ana/inbox")
        let nobody = Self.tokens.token(["sub": "nobody"])
        let document = try JSONValue(parsing: Array(JournalRoutes.openAPIDocument.readableBytesView))
        let paths = try #require(document["paths"]?.objectValue)
        var configuration = try await Self.configuration()
        // The feed's event stream shows its backlog before its first keep-alive.
        configuration.keepAliveInterval = .milliseconds(200)
        try await ServerHarness.with(store, configuration) { server in
            for (path, operations) in paths {
                for method in try #require(operations.objectValue).keys {
                    if path == "/v1/events" {
                        let stream = try await RawSocket.exchange(
                            port: server.port, "GET /v1/events?lists=** HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(nobody)\r\n\r\n",
                            timeout: .seconds(60)
                        ) { $0.contains(": keep-alive") }
                        #expect(stream.hasPrefix("HTTP/1.1 200") && stream.contains(": keep-alive") && !stream.contains("event:"), "\(stream)")
                        continue
                    }
                    let concrete = path.replacingOccurrences(of: "{list}", with: "users%2Fana%2Finbox")
                        .replacingOccurrences(of: "{client}", with: "c1").replacingOccurrences(of: "{name}", with: "c")
                        + (path == "/v1/changes" ? "?lists=**" : "")
                    let body = method == "get" ? nil : (path.hasSuffix("consumers/{name}") ? #"{"version": 1}"# : Self.commitBody(nil))
                    let answer = try await server.request(concrete, method: method.uppercased(), body: body, token: nobody)
                    switch path {
                    case "/health":
                        // Nothing about the lists, whoever asks (503 while the store is slower than a
                        // second, as on a loaded machine).
                        #expect(answer.status == 200 || (answer.status == 503 && !String(decoding: answer.body, as: UTF8.self).contains("users")), "\(method) \(path)")
                    case "/v1/openapi.json", "/v1/store":
                        #expect(answer.status == 200, "\(method) \(path)")
                    case "/v1/lists":
                        #expect(try WireDocument.decodeLists(answer.body).isEmpty)
                    case "/v1/changes":
                        let events = try JSONValue(parsing: answer.body)["events"]?.arrayValue
                        #expect(answer.status == 200 && events?.isEmpty == true, "\(method) \(path)")
                    case "/metrics":
                        #expect(answer.status == 403)
                    case "/v1/access":
                        // Asked about no request: nothing to tell (see CacheHeadersTests).
                        #expect(answer.status == 400, "\(method) \(path)")
                    default:
                        #expect(answer.status == 404, "\(method) \(path): \(answer.status)")
                        #expect((try? WireDocument.decodeError(answer.body).code) == "listNotFound", "\(method) \(path)")
                    }
                }
            }
            #expect(try await store.summary(of: "users/ana/inbox").version == 1)
            #expect(try await store.consumers(of: "users/ana/inbox").map(\.version) == [0])
        }
    }

    /// 50 users with 5 lists each, team lists with random members and admins, random requests on
    /// every list route: each answer is what the user's grants say (success, 404 as missing, or
    /// 403), and the store changes only by the writes that were allowed.
    @Test(.timeLimit(.minutes(5)), arguments: EngineKind.available)
    func randomTenantsNeverCrossTheirGrants(_ engine: EngineKind) async throws {
        try await engine.withStore { stores in try await Self.randomTenants(on: stores[0]) }
    }

    static func randomTenants(on store: any ReplicaStore) async throws {
        var random = SplitMix64(seed: 0x7E4A47)
        let users = (0..<50).map { "u\($0)" }
        let teams = (0..<6).map { "t\($0)" }
        var lists = users.flatMap { user in (0..<5).map { "users/\(user)/l\($0)" } } + teams.map { "teams/\($0)/plan" } + ["public/board"]
        lists.sort()
        for list in lists { try await store.commit(linearList(2), to: list, expectedVersion: nil, author: nil, message: nil) }
        var memberOf: [String: Set<String>] = [:]
        var adminOf: [String: Set<String>] = [:]
        for user in users {
            memberOf[user] = Set(teams.filter { _ in Int.random(in: 0..<3, using: &random) == 0 })
            adminOf[user] = Set(memberOf[user]!.filter { _ in Int.random(in: 0..<3, using: &random) == 0 })
        }
        func token(_ user: String) -> String {
            Self.tokens.token([
                "sub": .string(user), "teams": .array(memberOf[user]!.sorted().map(JSONValue.string)),
                "admin_of": .array(adminOf[user]!.sorted().map(JSONValue.string)),
            ])
        }
        // The model: what each user may do with each list.
        func grant(_ user: String, _ list: String) -> AccessGrant? {
            let parts = list.split(separator: "/").map(String.init)
            switch parts[0] {
            case "users": return parts[1] == user ? .write : nil
            case "teams": return adminOf[user]!.contains(parts[1]) ? .admin : memberOf[user]!.contains(parts[1]) ? .read : nil
            default: return .read
            }
        }
        let tokens = Dictionary(uniqueKeysWithValues: users.map { ($0, token($0)) })
        try await ServerHarness.with(store, try await Self.configuration()) { server in
            for _ in 0..<600 {
                let user = users.randomElement(using: &random)!
                let list = Int.random(in: 0..<4, using: &random) == 0
                    ? "users/\(user)/l\(Int.random(in: 0..<5, using: &random))" : lists.randomElement(using: &random)!
                let escaped = list.replacingOccurrences(of: "/", with: "%2F")
                let before = try await store.summary(of: list).version
                let (path, method, body, needs): (String, String, String?, AccessGrant) =
                    switch Int.random(in: 0..<8, using: &random) {
                    case 0: ("/v1/lists/\(escaped)", "GET", nil, .read)
                    case 6: ("/v1/lists/\(escaped)/pages?maxBytes=100", "GET", nil, .read)
                    case 1: ("/v1/lists/\(escaped)/snapshot", "GET", nil, .read)
                    case 2: ("/v1/lists/\(escaped)/journal?since=0", "GET", nil, .read)
                    case 3: ("/v1/lists/\(escaped)/diff?from=1", "GET", nil, .read)
                    case 4: ("/v1/lists/\(escaped)/pushes/c1", "GET", nil, .read)
                    case 5: ("/v1/lists/\(escaped)/consumers/c", "PUT", #"{"version": 1}"#, .admin)
                    default: ("/v1/lists/\(escaped)/commits", "POST", Self.commitBody(nil, count: 3 + before), .write)
                    }
                let answer = try await server.request(path, method: method, body: body, token: tokens[user]!)
                let allowed = grant(user, list)
                let what = "\(user) \(method) \(path)"
                if allowed == nil {
                    #expect(answer.status == 404 && (try? WireDocument.decodeError(answer.body).code) == "listNotFound", "\(what)")
                } else if allowed! < needs {
                    #expect(answer.status == 403, "\(what)")
                } else {
                    #expect(answer.status == 200, "\(what): \(answer.status) \(String(decoding: answer.body, as: UTF8.self))")
                }
                let after = try await store.summary(of: list).version
                #expect(after == before || (needs == .write && allowed.map { $0 >= .write } == true), "\(what) changed the list")
                if after != before {
                    #expect(try await store.journal(of: list, after: before, limit: 10, maxBytes: .max).entries.map(\.author) == [user])
                }
            }
        }
    }
}
