import Foundation
import Logging
import ListJSON
import ListStore
@testable import ListStoreServer
import ListStoreTestSupport
import ListStoreWire
import Testing

/// What the server accepts from whom: hosts, origins, content types, bodies; and what it tells.
@Suite struct RequestPolicyTests {
    @Test func writesNeedJSONAndRequestsNeedTheServersHostAndAnAllowedOrigin() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(3), to: "l")
        try await ServerHarness.with(
            store, .init(port: 0, allowedHosts: ["proxy.example"], allowedOrigins: ["https://app.example"])) { server in
            let port = server.port
            let document = String(decoding: try await store.snapshot(of: "l").documentJSON, as: UTF8.self)

            // A browser's cross-site text/plain or form POST needs no preflight: refused, nothing committed.
            for contentType in ["text/plain", "application/x-www-form-urlencoded", nil] {
                let header = contentType.map { "Content-Type: \($0)\r\n" } ?? ""
                let answer = try await RawAnswer.exchange(
                    port: port, "POST /v1/lists/l/commits HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\(header)Content-Length: \(document.utf8.count)\r\n",
                    body: document)
                #expect(answer.status == 415 && answer.errorCode == "unsupportedMediaType", "\(contentType ?? "none")")
            }
            let put = try await RawAnswer.exchange(
                port: port, "PUT /v1/lists/l/consumers/c HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Type: text/plain\r\nContent-Length: 13\r\n",
                body: "{\"version\":1}")
            #expect(put.status == 415)
            #expect(try await store.summary(of: "l").version == 1)
            let json = try await RawAnswer.exchange(
                port: port,
                "POST /v1/lists/l/commits HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Type: Application/JSON; charset=utf-8\r\nContent-Length: \(document.utf8.count)\r\n",
                body: document)
            #expect(json.status == 200)

            // Hosts: the loopback names on the server's port and the allowed names.
            let hosts: [(String, Int)] = [
                ("127.0.0.1:\(port)", 200), ("127.0.0.1", 200), ("localhost:\(port)", 200), ("LOCALHOST:\(port)", 200), ("127.1.2.3:\(port)", 200),
                ("[::1]:\(port)", 200), ("proxy.example", 200), ("proxy.example:443", 200),
                ("evil.example:\(port)", 403), ("evil.example", 403), ("127.0.0.1:\(port + 1)", 403), ("10.0.0.1:\(port)", 403),
                ("localhost.evil.example:\(port)", 403), ("", 403),
            ]
            for (host, status) in hosts {
                let answer = try await RawAnswer.exchange(port: port, "GET /v1/lists HTTP/1.1\r\nHost: \(host)\r\n")
                #expect(answer.status == status, "Host: \(host)")
                if status == 403 { #expect(answer.errorCode == "hostNotAllowed", "Host: \(host)") }
            }

            // Origins: the allowed ones and the server's own; any other is refused.
            let origins: [(String, Int)] = [
                ("https://app.example", 200), ("http://127.0.0.1:\(port)", 200),
                ("http://evil.example", 403), ("null", 403), ("https://app.example.evil", 403),
            ]
            for (origin, status) in origins {
                let answer = try await RawAnswer.exchange(port: port, "GET /v1/lists HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nOrigin: \(origin)\r\n")
                #expect(answer.status == status, "Origin: \(origin)")
                if status == 403 { #expect(answer.errorCode == "originNotAllowed", "Origin: \(origin)") }
            }
        }
    }

    /// A request that names two hosts in `Host` fields is refused (400 `invalidArgument`, one JSON
    /// error) before anything reads it, long polls as every other route. An absolute-form target
    /// (`GET http://other/…`) is answered as its `Host` field says: Hummingbird (NIO's conversion of
    /// the head) keeps the target's path and the `Host` field, and the target's authority is not
    /// looked at (browsers, whose requests the host check is for, never send one to a server).
    @Test func requestsThatNameTwoHostsAreRefused() async throws {
        try await LongPollTests.primed { server, store in
            let port = server.port
            let host = "Host: 127.0.0.1:\(port)\r\n"
            let refused = [
                "GET /v1/lists HTTP/1.1\r\n\(host)\(host)",
                "GET /v1/lists HTTP/1.1\r\n\(host)Host: evil.example\r\n",
                "GET /v1/lists/l/journal?since=1&wait=30 HTTP/1.1\r\n\(host)Host: evil.example\r\n",
                "POST /v1/lists/l/commits HTTP/1.1\r\n\(host)\(host)Content-Type: application/json\r\nContent-Length: 2\r\n",
            ]
            for head in refused {
                let answer = try await RawAnswer.exchange(port: port, head, body: head.hasPrefix("POST") ? "{}" : "")
                #expect(answer.status == 400 && answer.errorCode == "invalidArgument", "\(head): \(answer.status) \(answer.body)")
                #expect((try? JSONSerialization.jsonObject(with: Data(answer.body.utf8))) != nil, "one JSON document: \(answer.body)")
            }
            for target in ["http://127.0.0.1:\(port)/v1/lists/l", "http://evil.example/v1/lists/l"] {
                let answer = try await RawAnswer.exchange(port: port, "GET \(target) HTTP/1.1\r\n\(host)")
                #expect(answer.status == 200, "\(target): \(answer.body)")
            }
            #expect(try await store.summary(of: "l").version == 1)
        }
    }

    @Test func aWildcardServerAnswersAddressesAndAllowedNamesOnly() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(2), to: "l")
        try await ServerHarness.with(store, .init(host: "0.0.0.0", port: 0, token: "t", allowedHosts: ["lists.example"])) { server in
            let port = server.port
            for (host, status) in [("192.0.2.7:\(port)", 200), ("localhost:\(port)", 200), ("lists.example", 200), ("rebound.example:\(port)", 403)] {
                let answer = try await RawAnswer.exchange(port: port, "GET /v1/lists HTTP/1.1\r\nHost: \(host)\r\nAuthorization: Bearer t\r\n")
                #expect(answer.status == status, "Host: \(host)")
            }
        }
    }

    @Test func bodiesCutShortAreIncompleteAndOnlyLargeOnesTooLarge() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await ServerHarness.with(store, maxBodyBytes: 4096) { server in
            let port = server.port
            let cut = try await RawConnection.run {
                let connection = try RawConnection(port: port)
                connection.send(
                    "POST /v1/lists/l/commits HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"sections\":[")
                connection.shutdownWrite()
                return connection.receive(timeout: .seconds(20)).text
            }
            let answer = try #require(RawAnswer(cut), "\(cut)")
            #expect(answer.status == 400 && answer.errorCode == "bodyIncomplete")
            let large = try await server.request("/v1/lists/l/commits", method: "POST", body: "{\"sections\":[" + String(repeating: " ", count: 8000) + "]}")
            #expect(large.status == 413)
            let committed = store.exists ? try await store.lists().count : 0
            #expect(committed == 0)
        }
    }

    @Test func wrongTypedAuthorOrMessageIsRefused() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(3), to: "l")
        try await ServerHarness.with(store) { server in
            let document = String(decoding: try await store.snapshot(of: "l").documentJSON, as: UTF8.self).dropLast()
            for extra in [",\"author\":7", ",\"message\":{\"a\":1}", ",\"author\":[\"x\"]", ",\"message\":true"] {
                let answer = try await server.request("/v1/lists/l/commits", method: "POST", body: document + extra + "}")
                #expect(answer.status == 400, "\(extra)")
                #expect((try? WireDocument.decodeError(answer.body).code) == "invalidArgument", "\(extra)")
            }
            #expect(try await store.summary(of: "l").version == 1)
            let fine = try await server.request("/v1/lists/l/commits", method: "POST", body: document + ",\"author\":null,\"message\":\"m\"}")
            #expect(fine.status == 200)
        }
    }

    @Test func headAnswersAsGetWithoutBody() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(3), to: "l")
        try await ServerHarness.with(store) { server in
            let port = server.port
            let host = "Host: 127.0.0.1:\(port)\r\n"
            let get = try await RawAnswer.exchange(port: port, "GET /v1/lists/l/snapshot HTTP/1.1\r\n" + host)
            // HEAD, then GET on the same connection: the HEAD answer has no body, so the GET answer follows it at once.
            let text = try await RawConnection.run {
                let connection = try RawConnection(port: port)
                connection.send("HEAD /v1/lists/l/snapshot HTTP/1.1\r\n\(host)\r\nHEAD /v1/lists/nope HTTP/1.1\r\n\(host)\r\nGET /v1/store HTTP/1.1\r\n\(host)Connection: close\r\n\r\n")
                return connection.receive(timeout: .seconds(20)).text
            }
            let answers = text.components(separatedBy: "HTTP/1.1 ")
            #expect(answers.count == 4, "\(text)")
            guard answers.count == 4 else { return }
            let head = try #require(RawAnswer("HTTP/1.1 " + answers[1]))
            #expect(head.status == 200 && head.body.isEmpty)
            #expect(head.headers["content-length"] == get.headers["content-length"] && head.headers["content-type"] == "application/json")
            let missing = try #require(RawAnswer("HTTP/1.1 " + answers[2]))
            #expect(missing.status == 404 && missing.body.isEmpty)
            #expect(answers[3].hasPrefix("200") && answers[3].contains("\"uuid\""))
        }
    }

    /// A damaged store, I/O, anything unexpected: 500 `internal`, the details only in the log.
    @Test func failuresOfTheServerAnswer500WithoutDetails() throws {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let failures: [any Error] = [
            StoreError(.damaged, "journal entry 7 of list 'secret' does not replay: at /srv/x.liststore"),
            StoreError(.io, "disk I/O error at /srv/x.liststore"),
            CocoaError(.fileReadCorruptFile, userInfo: ["path": "/srv/x.liststore"]),
        ]
        for failure in failures {
            let error = APIError.from(failure, logger: logger, storeLocation: "/srv/data/s.liststore")
            #expect(error.status == .internalServerError)
            #expect(error.code == "internal" && error.message == "the server failed to answer this request", "\(failure)")
            #expect(error.response.status == .internalServerError)
        }
        // Errors of the request keep their code and message.
        let conflict = APIError.from(StoreError(.versionConflict, "expected 3, at 4", expectedVersion: 3, currentVersion: 4), logger: logger, storeLocation: "/srv/data/s.liststore")
        #expect(conflict.status == .conflict && conflict.message == "expected 3, at 4" && conflict.currentVersion == 4)
    }
}

