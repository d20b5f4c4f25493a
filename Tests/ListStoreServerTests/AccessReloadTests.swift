import Foundation
import ListDiffTestSupport
import ListJSON
import ListStore
@testable import ListStoreServer
import ListStoreTestSupport
import ListStoreWire
import Testing

/// An access file read again (what SIGHUP does, `JournalServer.replaceAccess(_:)`) that takes a
/// grant or a key away ends the event streams and long polls that rested on it: none of them
/// carries a commit made after the reload.
@Suite(.timeLimit(.minutes(3))) struct AccessReloadTests {
    static let tokens = AccessServerTests.tokens
    static let list = "/v1/lists/users%2Fana%2Finbox"

    /// What a reload takes away from Ana.
    enum Loss: String, CaseIterable, CustomTestStringConvertible, Sendable {
        /// The rule that granted her lists.
        case grant
        /// The key that signed her token.
        case key

        var testDescription: String { rawValue }

        /// The access file after the reload.
        var accessFile: [UInt8] {
            switch self {
            case .grant:
                return AccessReloadTests.tokens.accessFile(rules: [["lists": "public/*", "grant": "read"]])
            case .key:
                let keys = (AccessReloadTests.tokens.jwks["keys"]?.arrayValue ?? []).filter { $0["kid"]?.stringValue != "k-hmac" }
                let document: JSONValue = ["keys": ["keys": .array(keys)], "rules": AccessServerTests.rules]
                return document.serializedBytes()
            }
        }

        /// The status and error code of a request Ana makes for her list after the reload.
        var refusal: (status: Int, code: String) {
            switch self {
            case .grant: (404, "listNotFound")
            case .key: (401, "unauthorized")
            }
        }
    }

    /// Ana's event stream of her list, two long polls of hers, and her store feed's event stream,
    /// all waiting at the head; the access
    /// file is read again without what they rest on, then her list gets a commit: the streams end
    /// without it, and the polls are answered as a new request would be (404 `listNotFound` for a
    /// grant taken away, 401 for a key), without it.
    @Test(arguments: Loss.allCases) func aReloadEndsTheStreamsAndPollsThatRestedOnWhatItTookAway(_ loss: Loss) async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(3), to: "users/ana/inbox")
        try await store.commit(linearList(3), to: "public/news")
        let ana = Self.tokens.token(["sub": "ana"])
        let auth = "Authorization: Bearer \(ana)\r\n"
        try await ServerHarness.with(store, try await AccessServerTests.configuration()) { server in
            let host = "Host: 127.0.0.1:\(server.port)\r\n"
            #expect(try await server.request(Self.list, token: ana).status == 200)
            let (watcher, streams) = (try #require(server.server.watcher), server.server.state.streams)
            // The list's event stream, at the head once it waits there.
            let events = try RawConnection(port: server.port)
            #expect(events.send("GET \(Self.list)/events?since=0 HTTP/1.1\r\n\(host)\(auth)\r\n"))
            _ = try await RawConnection.run { events.receive(timeout: .seconds(60)) { $0.contains("id: 1\n") } }
            try await LimitTests.waitUntil { watcher.waitingCount == 1 }
            // The store feed's event stream.
            let feed = try RawConnection(port: server.port)
            #expect(feed.send("GET /v1/events?lists=** HTTP/1.1\r\n\(host)\(auth)\r\n"))
            _ = try await RawConnection.run { feed.receive(timeout: .seconds(60)) { $0.contains("public/news") } }
            try await LimitTests.waitUntil { watcher.waitingCount == 2 }
            // Two long polls (one of a percent-encoded value).
            let routed = try RawConnection(port: server.port)
            #expect(routed.send("GET \(Self.list)/journal?since=%31&wait=60 HTTP/1.1\r\n\(host)\(auth)\r\n"))
            try await LimitTests.waitUntil { streams.current == 3 && watcher.waitingCount == 3 }
            let beneath = try RawConnection(port: server.port)
            #expect(beneath.send("GET \(Self.list)/journal?since=1&wait=60 HTTP/1.1\r\n\(host)\(auth)\r\n"))
            try await LimitTests.waitUntil { streams.current == 4 && watcher.waitingCount == 4 }

            server.server.replaceAccess(try await AccessConfiguration(json: loss.accessFile))
            try await store.commit(linearList(4), to: "users/ana/inbox")
            try await store.commit(linearList(4), to: "public/news")

            // The stream's end: its last chunk (what this read brings: the chunks before came with
            // the reads before).
            let stream = try await RawConnection.run { events.receive(timeout: .seconds(60)) { $0.hasSuffix("0\r\n\r\n") || $0.contains("id: 2\n") } }
            #expect(stream.text.hasSuffix("0\r\n\r\n") && !stream.text.contains("id: 2\n"), "\(loss): \(stream.text)")
            for (name, connection) in [("routed", routed), ("beneath", beneath)] {
                let answer = try await LongPollTests.read(1, from: connection)[0]
                #expect((answer.status, answer.errorCode) == (loss.refusal.status, loss.refusal.code), "\(loss) \(name): \(answer.status) \(answer.body)")
                #expect(!answer.body.contains("\"version\":2"), "\(loss) \(name): \(answer.body)")
            }
            // The feed's stream: no event of Ana's list; ended when her token is no longer
            // accepted, and otherwise going on with the lists she may still read.
            let feedText = try await RawConnection.run {
                feed.receive(timeout: .seconds(60)) { $0.hasSuffix("0\r\n\r\n") || $0.contains("users/ana/inbox") || $0.contains("public/news") }
            }
            #expect(!feedText.text.contains("users/ana/inbox"), "\(loss): \(feedText.text)")
            switch loss {
            case .grant: #expect(feedText.text.contains("public/news"), "\(feedText.text)")
            case .key: #expect(feedText.text.hasSuffix("0\r\n\r\n"), "\(feedText.text)")
            }
            let again = try await server.request(Self.list, token: ana)
            #expect(again.status == loss.refusal.status)
            // The service token's requests are not touched.
            #expect(try await server.request(Self.list, token: "service").status == 200)
        }
    }

    /// A reload that takes nothing away from Ana leaves her stream and her polls waiting: the
    /// commit after it reaches them.
    @Test func aReloadThatTakesNothingAwayLeavesThemWaiting() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(3), to: "users/ana/inbox")
        let ana = Self.tokens.token(["sub": "ana"])
        let auth = "Authorization: Bearer \(ana)\r\n"
        try await ServerHarness.with(store, try await AccessServerTests.configuration()) { server in
            let host = "Host: 127.0.0.1:\(server.port)\r\n"
            #expect(try await server.request(Self.list, token: ana).status == 200)
            let (watcher, streams) = (try #require(server.server.watcher), server.server.state.streams)
            let events = try RawConnection(port: server.port)
            #expect(events.send("GET \(Self.list)/events?since=0 HTTP/1.1\r\n\(host)\(auth)\r\n"))
            _ = try await RawConnection.run { events.receive(timeout: .seconds(60)) { $0.contains("id: 1\n") } }
            try await LimitTests.waitUntil { watcher.waitingCount == 1 }
            let routed = try RawConnection(port: server.port)
            #expect(routed.send("GET \(Self.list)/journal?since=%31&wait=60 HTTP/1.1\r\n\(host)\(auth)\r\n"))
            try await LimitTests.waitUntil { streams.current == 2 && watcher.waitingCount == 2 }
            let beneath = try RawConnection(port: server.port)
            #expect(beneath.send("GET \(Self.list)/journal?since=1&wait=60 HTTP/1.1\r\n\(host)\(auth)\r\n"))
            try await LimitTests.waitUntil { streams.current == 3 && watcher.waitingCount == 3 }

            server.server.replaceAccess(try await AccessServerTests.configuration().access!)
            try await store.commit(linearList(4), to: "users/ana/inbox")

            let stream = try await RawConnection.run { events.receive(timeout: .seconds(60)) { $0.hasSuffix("0\r\n\r\n") || $0.contains("id: 2\n") } }
            #expect(stream.text.contains("id: 2\n"), "\(stream.text)")
            for (name, connection) in [("routed", routed), ("beneath", beneath)] {
                let answer = try await LongPollTests.read(1, from: connection)[0]
                #expect(answer.status == 200 && answer.body.contains("\"version\":2"), "\(name): \(answer.status) \(answer.body)")
            }
        }
    }
}
