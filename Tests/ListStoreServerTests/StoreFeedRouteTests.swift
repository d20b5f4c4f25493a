import Foundation
import ListDiffTestSupport
import ListJSON
import ListStore
@testable import ListStoreServer
import ListStoreTestSupport
import ListStoreWire
import Testing

/// `GET /v1/changes`: the store feed of a pattern's lists over HTTP, with only what the token may
/// read, one cursor for the set, lists that appear, and clear answers to bad cursors.
@Suite struct StoreFeedRouteTests {
    /// A page of the feed, as the route answers it.
    struct Page {
        var events: [(list: String, version: Int)]
        var cursor: String
        var hasMore: Bool
    }

    static func page(_ answer: (status: Int, body: [UInt8], headers: [AnyHashable: Any])) throws -> Page {
        try #require(answer.status == 200, "\(answer.status): \(String(decoding: answer.body, as: UTF8.self))")
        let value = try JSONValue(parsing: answer.body)
        let events = try #require(value["events"]?.arrayValue).map { event in
            (event["list"]?.stringValue ?? "?", event["entry"]?["version"]?.intValue ?? -1)
        }
        return Page(events: events, cursor: try #require(value["cursor"]?.stringValue), hasMore: value["hasMore"]?.boolValue ?? true)
    }

    static func code(_ answer: (status: Int, body: [UInt8], headers: [AnyHashable: Any])) -> String? {
        try? WireDocument.decodeError(answer.body).code
    }

    @Test func eachTokenFollowsTheListsItMayReadOverOneCursor() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        for list in ["users/ana/inbox", "users/bob/inbox", "teams/red/plan", "public/news"] {
            try await store.commit(linearList(3), to: list)
        }
        let tokens = AccessServerTests.tokens
        let ana = tokens.token(["sub": "ana", "teams": ["red"]])
        let bob = tokens.token(["sub": "bob"])
        try await ServerHarness.with(store, try await AccessServerTests.configuration()) { server in
            var server = server
            server.token = "service"
            // The service token reads every list; a user only those the rules grant.
            let all = try Self.page(try await server.request("/v1/changes?lists=**"))
            #expect(all.events.map(\.list) == ["users/ana/inbox", "users/bob/inbox", "teams/red/plan", "public/news"])
            #expect(!all.hasMore)
            let anas = try Self.page(try await server.request("/v1/changes?lists=**", token: ana))
            #expect(anas.events.map(\.list) == ["users/ana/inbox", "teams/red/plan", "public/news"])
            let bobs = try Self.page(try await server.request("/v1/changes?lists=users/**", token: bob))
            #expect(bobs.events.map(\.list) == ["users/bob/inbox"])

            // Pages of one event: every event once, then nothing more.
            var cursor: String?
            var paged: [String] = []
            repeat {
                let page = try Self.page(try await server.request("/v1/changes?lists=**&limit=1" + (cursor.map { "&since=\($0)" } ?? ""), token: ana))
                paged += page.events.map(\.list)
                cursor = page.cursor
                if !page.hasMore { break }
            } while true
            #expect(paged == anas.events.map(\.list))

            // A list made after the cursor, and new commits: there from their first commit on, once.
            try await store.commit(linearList(2), to: "users/ana/projects/new")
            try await store.commit(linearList(4), to: "users/bob/inbox")
            try await store.commit(linearList(5), to: "users/ana/inbox")
            let next = try Self.page(try await server.request("/v1/changes?lists=**&since=\(anas.cursor)", token: ana))
            #expect(next.events.map(\.list) == ["users/ana/projects/new", "users/ana/inbox"])
            #expect(next.events.map(\.version) == [1, 2])
            let none = try Self.page(try await server.request("/v1/changes?lists=**&since=\(next.cursor)", token: ana))
            // (A user's cursor is sealed anew with every answer: see FeedCursorTests.)
            #expect(none.events.isEmpty && none.cursor != next.cursor && !none.hasMore)

            // A long poll ends with the commit of a list it follows.
            let waiting = Task { try Self.page(try await server.request("/v1/changes?lists=users/ana/**&wait=30&since=\(next.cursor)", token: ana)) }
            try await store.commit(linearList(6), to: "users/ana/inbox")
            let woken = try await waiting.value
            #expect(woken.events.map(\.list) == ["users/ana/inbox"] && woken.events.map(\.version) == [3])
        }
    }

    /// `DELETE /v1/lists/L` needs the admin grant (or the service token); the feed then carries
    /// the deletion to the followers who may read the list.
    @Test func adminsDeleteListsAndFollowersLearnOfIt() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        for list in ["users/ana/inbox", "teams/red/plan", "teams/blue/plan"] { try await store.commit(linearList(3), to: list) }
        let tokens = AccessServerTests.tokens
        let ana = tokens.token(["sub": "ana", "teams": ["red"]])
        let lead = tokens.token(["sub": "lead", "teams": ["red"], "admin_of": ["red"]])
        try await ServerHarness.with(store, try await AccessServerTests.configuration()) { server in
            var server = server
            server.token = "service"
            let start = try Self.page(try await server.request("/v1/changes?lists=**", token: ana))
            // Write is not enough, read even less; another's list answers as a missing one.
            #expect(try await server.request("/v1/lists/users%2Fana%2Finbox", method: "DELETE", token: ana).status == 403)
            #expect(try await server.request("/v1/lists/teams%2Fred%2Fplan", method: "DELETE", token: ana).status == 403)
            #expect(try await server.request("/v1/lists/teams%2Fblue%2Fplan", method: "DELETE", token: lead).status == 404)
            let deleted = try await server.request("/v1/lists/teams%2Fred%2Fplan", method: "DELETE", token: lead)
            #expect(deleted.status == 200, "\(String(decoding: deleted.body, as: UTF8.self))")
            let answer = try JSONValue(parsing: deleted.body)
            #expect(answer["deleted"]?.boolValue == true && answer["version"]?.intValue == 1 && answer["list"]?.stringValue == "teams/red/plan")
            #expect(try await server.request("/v1/lists/teams%2Fred%2Fplan").status == 404)
            #expect(try await server.request("/v1/lists/users%2Fana%2Finbox", method: "DELETE").status == 200)
            let next = try await server.request("/v1/changes?lists=**&since=\(start.cursor)", token: ana)
            let events = try #require(try JSONValue(parsing: next.body)["events"]?.arrayValue)
            #expect(events.map { $0["list"]?.stringValue ?? "" } == ["teams/red/plan", "users/ana/inbox"])
            #expect(events.allSatisfy { $0["deleted"]?.boolValue == true && $0["entry"] == nil })
            #expect(try await store.lists().map(\.name) == ["teams/blue/plan"])
        }
    }

    /// Patterns beyond their bounds (segments, `**`s, bytes) are answered 400 with one error by
    /// the feed's long poll and its event stream, before anything is read; a new list's name beyond
    /// its segments is refused (400 `invalidListName`); what is within the bounds is served.
    @Test func patternsAndNamesBeyondTheirBoundsAnswer400() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(2), to: "l")
        try await ServerHarness.with(store, token: "service") { server in
            var server = server
            server.token = "service"
            let segments = { (count: Int, last: String) in Array(repeating: "a", count: count - 1).joined(separator: "/") + "/" + last }
            let tooLong: [(pattern: String, problem: String)] = [
                (segments(32 + 1, "a"), "segments"),
                (Array(repeating: "**", count: 4 + 1).joined(separator: "/x/"), "'**'"),
                (String(repeating: "b", count: 1024 + 1), "bytes"),
                // The pattern of the report: 2,000 '**' before a segment that matches nothing.
                (String(repeating: "**/", count: 2000) + "nomatch", "bytes"),
            ]
            for (pattern, problem) in tooLong {
                let encoded = PercentEncoding.encode(pattern)
                let answer = try await server.request("/v1/changes?lists=\(encoded)")
                let error = try? WireDocument.decodeError(answer.body)
                #expect(answer.status == 400 && error?.code == "invalidArgument", "\(pattern.prefix(40)): \(answer.status)")
                #expect(error?.message.contains(problem) == true, "\(error?.message ?? "")")
                let stream = try await RawAnswer.exchange(
                    port: server.port, "GET /v1/events?lists=\(encoded) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer service\r\n")
                #expect(stream.status == 400 && stream.errorCode == "invalidArgument", "\(pattern.prefix(40)): \(stream.status)")
            }
            let within = [
                segments(32, "**"),
                Array(repeating: "**", count: 4).joined(separator: "/x/"),
                String(repeating: "b", count: 1024),
            ]
            for pattern in within {
                let answer = try await server.request("/v1/changes?lists=\(PercentEncoding.encode(pattern))")
                #expect(answer.status == 200, "\(pattern.prefix(40)): \(String(decoding: answer.body, as: UTF8.self))")
            }
            // A new list's name: at most 64 segments.
            let commit = String(decoding: ListSnapshot(list: "x", version: 0, digest: ListDigest.of(linearList(2)), sections: linearList(2)).documentJSON, as: UTF8.self)
            let deep = segments(64 + 1, "a")
            let refused = try await server.request("/v1/lists/\(PercentEncoding.encode(deep))/commits", method: "POST", body: commit)
            let error = try? WireDocument.decodeError(refused.body)
            #expect(refused.status == 400 && error?.code == "invalidListName" && error?.message.contains("segments") == true, "\(refused.status) \(error?.message ?? "")")
            let deepest = segments(64, "a")
            #expect(try await server.request("/v1/lists/\(PercentEncoding.encode(deepest))/commits", method: "POST", body: commit).status == 200)
            #expect(try await store.lists().map(\.name).sorted() == [deepest, "l"].sorted())
        }
    }

    @Test func badPatternsAndCursorsAnswerClearly() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        for version in 1...3 { try await store.commit(linearList(version), to: "l") }
        try await store.commit(linearList(2), to: "m")
        let other = try Store(path: directory.file("other.liststore"))
        try await other.commit(linearList(1), to: "l")
        try await ServerHarness.with(store, token: "service") { server in
            var server = server
            server.token = "service"
            let start = try Self.page(try await server.request("/v1/changes?lists=**&limit=1"))
            for (query, status, code) in [
                ("", 400, "invalidArgument"), ("lists=", 400, "invalidArgument"), ("lists=users/%7Bsub%7D/**", 400, "invalidArgument"),
                ("lists=**&since=nonsense", 400, "invalidArgument"), ("lists=**&since=a.b.c", 400, "invalidArgument"),
                ("lists=**&limit=0", 400, "invalidArgument"), ("lists=**&wait=-1", 400, "invalidArgument"),
            ] {
                let answer = try await server.request("/v1/changes?" + query)
                #expect(answer.status == status && Self.code(answer) == code, "\(query): \(answer.status) \(String(decoding: answer.body, as: UTF8.self))")
            }
            // A cursor of another store, or of this one before a restore: 409, follow anew.
            let identity = try await other.identity()
            let foreign = try await server.request("/v1/changes?lists=**&since=\(FeedCursor(store: identity, position: 1))")
            #expect(foreign.status == 409 && Self.code(foreign) == "cursorMismatch")
            _ = try await store.advanceEpoch()
            let restored = try await server.request("/v1/changes?lists=**&since=\(start.cursor)")
            #expect(restored.status == 409 && Self.code(restored) == "cursorMismatch")
            // A cursor behind a pruned journal: 410, read the lists anew.
            let current = try Self.page(try await server.request("/v1/changes?lists=**&limit=1"))
            _ = try await store.prune("l", .keepLast(1), force: true)
            let expired = try await server.request("/v1/changes?lists=**&since=\(current.cursor)")
            #expect(expired.status == 410 && Self.code(expired) == "cursorExpired", "\(String(decoding: expired.body, as: UTF8.self))")
            let retained = try Self.page(try await server.request("/v1/changes?lists=**"))
            #expect(retained.events.map(\.list) == ["l", "m"] && retained.events.map(\.version) == [3, 1])
        }
    }

    /// A user's long poll whose read after the wait finds its cursor expired gets the message of a
    /// user's refusal, which names no feed position, as its first read would.
    @Test func aUsersLongPollRefusedAfterItsWaitNamesNoPosition() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(2), to: "users/ana/inbox")
        let engine = CountingEngine(store, signalsOwnCommits: true)
        let ana = AccessServerTests.tokens.token(["sub": "ana"])
        try await ServerHarness.with(engine, try await AccessServerTests.configuration()) { server in
            let first = try Self.page(try await server.request("/v1/changes?lists=users/ana/**", token: ana))
            let poll = Task {
                let answer = try await server.request("/v1/changes?lists=users/ana/**&wait=30&since=\(first.cursor)", token: ana)
                return (answer.status, answer.body)
            }
            let feedServer = server.server
            try await LimitTests.waitUntil { feedServer.waitingCount == 1 }
            engine.feedError.withLock { $0 = StoreError(.cursorExpired, "feed position 17 is older than the oldest retained, 23") }
            _ = try await engine.commit(linearList(3), to: "users/ana/inbox", expectedVersion: nil, author: nil, message: nil)
            let (status, body) = try await poll.value
            let error = try? WireDocument.decodeError(body)
            let message = error?.message ?? ""
            #expect(status == 410 && error?.code == "cursorExpired", "\(status) \(message)")
            #expect(!message.contains("17") && !message.contains("23"), "\(message)")
        }
    }
}
