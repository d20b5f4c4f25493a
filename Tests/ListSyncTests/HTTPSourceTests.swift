import Foundation
import ListJSON
import ListStore
import ListStoreTestSupport
import ListStoreWire
import ListSync
import Testing

/// `HTTPSource` against servers that misbehave (`CannedHTTPServer`): redirects, endless or trickling
/// answers, stalls; and the URLs it accepts.
@Suite struct HTTPSourceTests {
    /// The `SyncError` `body` throws (recording an issue when it throws something else or nothing).
    private func syncError(_ body: () async throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) async -> SyncError? {
        do {
            try await body()
            Issue.record("no error", sourceLocation: sourceLocation)
        } catch let error as SyncError {
            return error
        } catch {
            Issue.record("not a SyncError: \(error)", sourceLocation: sourceLocation)
        }
        return nil
    }

    @Test(.timeLimit(.minutes(1))) func aRedirectToAnotherOriginIsNotFollowedAndGetsNoToken() async throws {
        let elsewhere = try CannedHTTPServer { _, connection in
            connection.send(CannedHTTPServer.answer(CannedHTTPServer.identity))
        }
        for location in [elsewhere.url + "/v1/store", "http://localhost:\(elsewhere.port)/v1/store"] {
            let origin = try CannedHTTPServer { _, connection in
                connection.send(CannedHTTPServer.answer("", status: "302 Found", headers: ["Location: \(location)"]))
            }
            let source = try HTTPSource(origin.url, token: "s3cret")
            let error = await syncError { _ = try await source.identity() }
            #expect(error.map { if case .transport = $0 { true } else { false } } == true, "\(String(describing: error))")
            let message = error?.description ?? ""
            #expect(message.contains("redirected to another origin"), "\(message)")
            #expect(!message.contains("s3cret") && !message.contains("\n"), "\(message)")
            #expect(error?.isTransient == false)
            #expect(origin.requests.count == 1 && CannedHTTPServer.hasAuthorization(origin.requests[0]))
            #expect(elsewhere.requests.isEmpty, "the redirect was followed: \(elsewhere.requests)")
        }
    }

    @Test(.timeLimit(.minutes(1))) func aRedirectWithinTheOriginIsFollowedWithTheToken() async throws {
        let server = try CannedHTTPServer { head, connection in
            if head.hasPrefix("GET /v1/store ") {
                connection.send(CannedHTTPServer.answer("", status: "307 Temporary Redirect", headers: ["Location: /moved/v1/store"]))
            } else {
                connection.send(CannedHTTPServer.answer(CannedHTTPServer.identity))
            }
        }
        let source = try HTTPSource(server.url, token: "s3cret")
        let identity = try await source.identity()
        #expect(identity.uuid == "3F2504E0-4F89-11D3-9A0C-0305E82C3301")
        let requests = server.requests
        #expect(requests.count == 2 && requests.last?.hasPrefix("GET /moved/v1/store ") == true, "\(requests)")
        #expect(requests.allSatisfy(CannedHTTPServer.hasAuthorization))
    }

    @Test(.timeLimit(.minutes(1))) func anEndlessAnswerFailsAtTheCapAndIsNotReadFurther() async throws {
        let chunk = [UInt8](repeating: UInt8(ascii: " "), count: 64 << 10)
        let server = try CannedHTTPServer { _, connection in
            // No length: the body ends when the connection does, which is never.
            guard connection.send("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n[") else { return }
            while connection.send(chunk) {}
        }
        var source = try HTTPSource(server.url)
        source.maxAnswerBytes = 1 << 20
        let error = await syncError { _ = try await source.identity() }
        let message = error?.description ?? ""
        #expect(message.contains("larger than the 1 MiB this client accepts"), "\(message)")
        #expect(error?.isTransient == false)
        // The client hung up instead of reading on.
        // Bounded generously: with every suite running at once, the connection's end can take a while
        // to reach the server.
        try await server.wait(until: "the client hangs up", within: .seconds(120)) { $0.clientsGone > 0 }

        // An answer that announces more than the cap is refused from its head.
        let announced = try CannedHTTPServer { _, connection in
            connection.send("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(8 << 20)\r\n\r\n")
            while connection.send(chunk) {}
        }
        source = try HTTPSource(announced.url)
        source.maxAnswerBytes = 1 << 20
        let refused = await syncError { _ = try await source.identity() }
        #expect(refused?.description.contains("larger than the 1 MiB") == true, "\(String(describing: refused))")
    }

    /// A journal page is read entry by entry as it arrives, so an answer that never ends holds a
    /// pull to what it asked for: the entries asked for (`limit`), within `maxAnswerBytes` in all,
    /// and never the whole answer's text besides (before, an endless answer grew a client by 200 MB
    /// in 0.6 s, text and parsed document, up to the 512 MiB cap).
    @Test(.timeLimit(.minutes(2))) func anEndlessJournalPageStopsAtWhatThePullAskedFor() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit([ListSection(model: ListItem(id: "s", json: .null), elements: [ListItem(id: "e", json: .string(String(repeating: "x", count: 50_000)))])], to: "l")
        let entry = try #require(try await store.journal(of: "l", after: 0, limit: 1).entries.first)
        let element = WireDocument.commitObject(entry)
        let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{\"commits\":["
        func endless(_ body: @escaping @Sendable (CannedHTTPServer.Connection) -> Void) throws -> CannedHTTPServer {
            try CannedHTTPServer { _, connection in
                guard connection.send(head) else { return }
                body(connection)
            }
        }
        // Entries without end: refused past the entries asked for.
        let entries = try endless { connection in
            while connection.send(element + Array(",".utf8)) {}
        }
        var source = try HTTPSource(entries.url)
        source.maxPageBytes = 100 << 20
        var error = await syncError { _ = try await source.journal(of: "l", after: 0, limit: 10) }
        #expect(error?.description.contains("more than the 10 entries asked for") == true, "\(String(describing: error))")
        #expect(error?.isTransient == false)
        try await entries.wait(until: "the client hangs up", within: .seconds(60)) { $0.clientsGone > 0 }
        #expect(entries.requests.first?.contains("maxBytes=\(100 << 20)") == true, "\(entries.requests)")

        // Entries past the answer cap (each holds about 50 KB of stages), however many were asked for.
        let large = try endless { connection in
            while connection.send(element + Array(",".utf8)) {}
        }
        source = try HTTPSource(large.url)
        source.maxAnswerBytes = 1 << 20
        error = await syncError { _ = try await source.journal(of: "l", after: 0, limit: 1000) }
        #expect(error?.description.contains("the answer is larger than the 1 MiB this client accepts") == true, "\(String(describing: error))")
        try await large.wait(until: "the client hangs up", within: .seconds(60)) { $0.clientsGone > 0 }

        // A page of the store feed is read the same way.
        let feedEvent = Array(#"{"cursor":"#.utf8) + Array(JSONValue.string(FeedCursor(store: StoreIdentity(uuid: "9b2d4c1e-5f6a-4e3b-8c7d-2a1f0e9d8c7b", epoch: 1), position: 1).description).serialized().utf8)
            + Array(#","deleted":true,"list":"l"}"#.utf8)
        let feed = try CannedHTTPServer { _, connection in
            guard connection.send("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{\"events\":[") else { return }
            while connection.send(feedEvent + Array(",".utf8)) {}
        }
        source = try HTTPSource(feed.url)
        error = await syncError { _ = try await source.changes(of: try ListPattern("**"), after: nil, limit: 5, wait: .zero) }
        #expect(error?.description.contains("more than the 5 entries asked for") == true, "\(String(describing: error))")
        try await feed.wait(until: "the client hangs up", within: .seconds(60)) { $0.clientsGone > 0 }

        // One entry without end: refused at `maxAnswerBytes`.
        let one = try endless { connection in
            guard connection.send(#"{"stages":""#) else { return }
            let chunk = [UInt8](repeating: UInt8(ascii: "x"), count: 64 << 10)
            while connection.send(chunk) {}
        }
        source = try HTTPSource(one.url)
        source.maxAnswerBytes = 1 << 20
        error = await syncError { _ = try await source.journal(of: "l", after: 0, limit: 1000) }
        #expect(error?.description.contains("the answer is larger than the 1 MiB this client accepts") == true, "\(String(describing: error))")
        try await one.wait(until: "the client hangs up", within: .seconds(60)) { $0.clientsGone > 0 }
    }

    @Test(.timeLimit(.minutes(3))) func anAnswerThatTricklesInFailsAtTheDeadline() async throws {
        let server = try CannedHTTPServer { _, connection in
            guard connection.send("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n") else { return }
            // A byte every 100 ms: never idle for long, never done.
            while connection.send(" ") { usleep(100_000) }
        }
        // The idle timeout is far beyond the deadline: only the deadline may end it (bytes come
        // every 100 ms, but on a loaded machine a second may pass between two of them).
        var source = try HTTPSource(server.url, requestTimeout: .seconds(2))
        source.idleTimeout = .seconds(60)
        let error = await syncError { _ = try await source.identity() }
        let message = error?.description ?? ""
        #expect(message.contains("no complete answer within 2 s"), "\(message)")
        #expect(error?.isTransient == true)
        // Bounded generously: with every suite running at once, the connection's end can take a while
        // to reach the server.
        try await server.wait(until: "the client hangs up", within: .seconds(120)) { $0.clientsGone > 0 }
    }

    @Test(.timeLimit(.minutes(1))) func aServerThatStallsAfterItsHeadTimesOut() async throws {
        let server = try CannedHTTPServer { _, connection in
            connection.send("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
            sleep(60)
        }
        var source = try HTTPSource(server.url, requestTimeout: .seconds(60))
        source.idleTimeout = .seconds(1)
        let error = await syncError { _ = try await source.identity() }
        #expect(error?.description.contains("timed out") == true, "\(String(describing: error))")
        #expect(error?.isTransient == true)
    }

    @Test(.timeLimit(.minutes(1))) func cancellingTheCallingTaskEndsItsRequest() async throws {
        let server = try CannedHTTPServer { _, _ in sleep(60) }
        let source = try HTTPSource(server.url, requestTimeout: .seconds(60))
        let request = Task { try await source.identity() }
        try await server.wait(until: "the request comes", within: .seconds(30)) { !$0.requests.isEmpty }
        request.cancel()
        let result = await request.result
        #expect(throws: CancellationError.self) { try result.get() }
    }

    @Test(.timeLimit(.minutes(1))) func requestsGoUnderTheBaseURLsPath() async throws {
        let server = try CannedHTTPServer { _, connection in
            connection.send(CannedHTTPServer.answer(CannedHTTPServer.identity))
        }
        _ = try await HTTPSource(server.url + "/sync/").identity()
        _ = try await HTTPSource(server.url + "/sync").identity()
        _ = try await HTTPSource(server.url).identity()
        _ = try? await HTTPSource(server.url + "/a%20b").summary(of: "in/box ü")
        // Lists named `.` and `..` go with their dots encoded: as path segments, a URL's
        // normalization (a proxy's, URLSession's) would resolve them away.
        _ = try? await HTTPSource(server.url).summary(of: ".")
        _ = try? await HTTPSource(server.url).summary(of: "..")
        _ = try? await HTTPSource(server.url).summary(of: "...")
        #expect(server.requests.map { $0.split(separator: "\r\n").first.map(String.init) ?? "" } == [
            "GET /sync/v1/store HTTP/1.1", "GET /sync/v1/store HTTP/1.1", "GET /v1/store HTTP/1.1",
            "GET /a%20b/v1/lists/in%2Fbox%20%C3%BC HTTP/1.1", "GET /v1/lists/%2E HTTP/1.1", "GET /v1/lists/%2E%2E HTTP/1.1",
            "GET /v1/lists/... HTTP/1.1",
        ])
    }

    @Test func aBaseURLWithAQueryOrFragmentIsRefusedWithoutShowingThem() async throws {
        for url in ["http://127.0.0.1:1/sync?key=k3y", "http://127.0.0.1:1/?", "http://127.0.0.1:1/sync#k3y"] {
            let error = await syncError { _ = try HTTPSource(url) }
            let message = error?.description ?? ""
            #expect(message.contains("query or fragment") && message.contains("127.0.0.1:1/"), "\(url): \(message)")
            #expect(!message.contains("k3y"), "\(message)")
        }
    }

    @Test func credentialsInAURLAreRefusedAndNeverShown() async throws {
        for url in [
            "http://alice:pa55word@127.0.0.1:1", "https://alice@127.0.0.1/sync", "ftp://alice:pa55word@127.0.0.1/",
            "http://alice:pa55word@[::1", "http://:pa55word@127.0.0.1:1/",
        ] {
            let error = await syncError { _ = try HTTPSource(url, token: "s3cret") }
            let message = error?.description ?? ""
            #expect(!message.contains("pa55word") && !message.contains("alice") && !message.contains("s3cret"), "\(message)")
            #expect(message.contains("127.0.0.1") || message.contains("::1"), "\(message)")
        }
        let error = await syncError { _ = try HTTPSource(url: URL(string: "http://alice:pa55word@127.0.0.1:1")!) }
        #expect(error?.description.contains("user name or password") == true, "\(String(describing: error))")
    }

    @Test(.timeLimit(.minutes(1))) func failuresThatMayHealAreTransientAndOthersAreNot() async throws {
        // No server on the port any more.
        let port = try CannedHTTPServer { _, _ in }.port
        let refused = await syncError { _ = try await HTTPSource("http://127.0.0.1:\(port)").identity() }
        #expect(refused?.isTransient == true, "\(String(describing: refused))")

        let answers = try CannedHTTPServer { head, connection in
            if head.hasPrefix("GET /busy/") {
                connection.send(CannedHTTPServer.answer("restarting", status: "503 Service Unavailable"))
            } else if head.hasPrefix("GET /garbled/") {
                connection.send(CannedHTTPServer.answer("{\"uuid\":"))
            } else if head.hasPrefix("GET /givenup/") {
                connection.send(CannedHTTPServer.answer(
                    #"{"error":{"code":"uploadGivenUp","message":"the upload of blob b was given up"},"schemaVersion":1}"#,
                    status: "409 Conflict"))
            } else if head.hasPrefix("GET /token/") {
                connection.send(CannedHTTPServer.answer("", status: "401 Unauthorized"))
            } else {
                connection.send(CannedHTTPServer.answer(
                    #"{"error":{"code":"listNotFound","message":"no list 'x'"},"schemaVersion":1}"#, status: "404 Not Found"))
            }
        }
        let busy = await syncError { _ = try await HTTPSource(answers.url + "/busy").identity() }
        #expect(busy?.isTransient == true && busy?.description.contains("HTTP 503") == true, "\(String(describing: busy))")
        // Another upload of the blob failed and took the one the request went on with: sent again,
        // from where the upload stands, it lands.
        let givenUp = await syncError { _ = try await HTTPSource(answers.url + "/givenup").identity() }
        #expect(givenUp?.isTransient == true && givenUp?.description.contains("uploadGivenUp") == true, "\(String(describing: givenUp))")
        let garbled = await syncError { _ = try await HTTPSource(answers.url + "/garbled").identity() }
        #expect(garbled?.isTransient == false && garbled?.description.contains("cannot read") == true, "\(String(describing: garbled))")
        let token = await syncError { _ = try await HTTPSource(answers.url + "/token", token: "s3cret").identity() }
        #expect(token.map { if case .unauthorized = $0 { true } else { false } } == true && token?.isTransient == false)
        #expect(token?.description.contains("s3cret") == false)
        do {
            _ = try await HTTPSource(answers.url).summary(of: "x")
            Issue.record("no error")
        } catch {
            #expect((error as? StoreError)?.code == .listNotFound, "\(error)")
        }
    }
}
