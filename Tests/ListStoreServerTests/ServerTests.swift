import Foundation
import ListDiff
import ListDiffTestSupport
import ListJSON
import ListStore
@testable import ListStoreServer
import ListStorePostgresTestSupport
import ListStoreTestSupport
import ListStoreWire
import ListSync
import Testing

/// The journal over HTTP: a real server on a loopback port, driven by the real client (`HTTPSource`)
/// and by plain requests.
@Suite struct ServerTests {
    @Test(arguments: ServerAccess.withoutToken)
    func endpointsAnswerTheDocumentsAndClearErrors(_ access: ServerAccess) async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        for k in 1...3 { try await store.commit(linearList(4 + k, content: k), to: "in box/ü", author: "ana") }
        try await ServerHarness.with(store, access, maxBodyBytes: 4096) { server in
            let list = "/v1/lists/" + PercentEncoding.encode("in box/ü")

            var answer = try await server.request("/v1/lists")
            #expect(answer.status == 200)
            #expect(try await WireDocument.decodeLists(answer.body) == store.lists())
            answer = try await server.request(list + "/snapshot?at=2")
            #expect(try await WireDocument.decodeSnapshot(answer.body) == store.snapshot(of: "in box/ü", at: 2))
            answer = try await server.request(list + "/journal?since=0&limit=2")
            let page = try WireDocument.decodeJournal(answer.body)
            #expect(page.hasMore && page.entries.map(\.version) == [1, 2])
            #expect(page.entries == (try await store.journal(of: "in box/ü", after: 0, limit: 2).entries))
            answer = try await server.request(list + "/diff?from=1&to=3")
            let diff = try JSONValue(parsing: answer.body)
            #expect(diff["to"]?.intValue == 3 && diff["from"]?.intValue == 1)

            // A commit, then the same expected version again: 409 with both versions.
            let document = String(decoding: try await store.snapshot(of: "in box/ü", at: 1).documentJSON, as: UTF8.self)
            let withExpectation = document.dropLast() + ",\"expectedVersion\":3,\"author\":\"bo\"}"
            answer = try await server.request(list + "/commits", method: "POST", body: String(withExpectation))
            #expect(answer.status == 200)
            #expect(try JSONValue(parsing: answer.body)["version"]?.intValue == 4)
            #expect(try await store.journal(of: "in box/ü", after: 3).entries.first?.author == access.author(claimed: "bo"))
            answer = try await server.request(list + "/commits", method: "POST", body: String(withExpectation))
            #expect(answer.status == 409)
            let conflict = try WireDocument.decodeError(answer.body)
            #expect(conflict.code == "versionConflict" && conflict.expectedVersion == 3 && conflict.currentVersion == 4)

            // Bad requests change nothing and say what is wrong.
            let cases: [(method: String, path: String, body: String?, status: Int, code: String)] = [
                ("POST", list + "/commits", "{\"sections\":[{\"id\":1}]}", 400, "invalidSnapshot"),
                ("POST", list + "/commits", "not json", 400, "invalidSnapshot"),
                ("POST", list + "/commits", "{\"sections\":[" + String(repeating: " ", count: 8000) + "]}", 413, "bodyTooLarge"),
                ("GET", "/v1/lists/nope/journal", nil, 404, "listNotFound"),
                ("GET", list + "/snapshot?at=99", nil, 404, "versionNotFound"),
                ("GET", list + "/journal?since=-1", nil, 400, "invalidArgument"),
                ("GET", list + "/journal?limit=100000", nil, 400, "invalidArgument"),
                ("GET", list + "/journal?wait=3600", nil, 400, "invalidArgument"),
                ("GET", list + "/diff", nil, 400, "invalidArgument"),
                ("GET", "/v1/lists/%FF", nil, 400, "invalidArgument"),
                ("GET", "/v2/nothing", nil, 404, "notFound"),
            ]
            for bad in cases {
                let answer = try await server.request(bad.path, method: bad.method, body: bad.body)
                #expect(answer.status == bad.status, "\(bad.method) \(bad.path)")
                #expect((try? WireDocument.decodeError(answer.body).code) == bad.code, "\(bad.method) \(bad.path)")
            }
            #expect(try await store.summary(of: "in box/ü").version == 4)
        }
    }

    @Test func tokensAreRequiredWhenSet() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(3), to: "l")
        try await ServerHarness.with(store, token: "s3cret") { server in
            for token in [nil, "wrong", "s3cre", "s3cret2", ""] {
                let answer = try await server.request("/v1/lists", token: token)
                #expect(answer.status == 401)
                #expect((try? WireDocument.decodeError(answer.body).code) == "unauthorized")
                let challenge = answer.headers.first { ($0.key as? String)?.lowercased() == "www-authenticate" }?.value as? String
                // RFC 6750: a request without a token is told the scheme, a wrong token that it is invalid.
                #expect(challenge == ((token ?? "").isEmpty ? "Bearer" : #"Bearer error="invalid_token""#))
            }
            #expect(try await server.request("/v1/lists", token: "s3cret").status == 200)

            let replica = Replica(store: try Store(path: directory.file("r.liststore")), list: "l")
            await #expect {
                try await replica.pull(from: try HTTPSource(server.url, token: "wrong"))
            } throws: { error in
                if case .unauthorized = error as? SyncError { return true }
                return false
            }
            #expect(!replica.store.exists)
            let result = try await replica.pull(from: try HTTPSource(server.url, token: "s3cret"))
            #expect(result.version == 1)
        }
    }

    /// Histories are committed while replicas pull over HTTP at random moments (commit by commit, or
    /// catching up in one step) and the source prunes: every replica equals the source at the version
    /// it reports, with the same digest, and pruning forces resyncs that recover by diff.
    @Test(arguments: ServerAccess.withoutToken)
    func replicasOverHTTPFollowRandomHistoriesThroughPruning(_ access: ServerAccess) async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("source.liststore"))
        try await ServerHarness.with(store, access) { server in
            let source = try server.source()
            var random = RandomSnapshots(seed: 0x4477_5, duplicates: true)
            var rng = SplitMix64(seed: 0xB0B)
            let replicas = try (0..<3).map { Replica(store: try Store(path: directory.file("r\($0).liststore")), list: "l") }
            var current = random.snapshot(maxSections: 5, maxElements: 8)
            var resyncs = 0
            var pulls = 0
            for step in 0..<150 {
                try await store.commit(listSections(current), to: "l")
                current = random.edit(current, intensity: Double(step % 10) / 10)
                if rng.next() % 9 == 0 { _ = try? await store.prune("l", .keepLast(Int(rng.next() % 5))) }
                for (r, replica) in replicas.enumerated() where rng.next() % UInt64(3 + 2 * r) == 0 {
                    let result = try await replica.pull(from: source, options: .init(catchUp: r == 2 && rng.next() % 2 == 0))
                    pulls += 1
                    if result.resynced { resyncs += 1 }
                    let mine = try await replica.store.snapshot(of: "l")
                    let expected = try await store.snapshot(of: "l", at: result.version)
                    #expect(mine.sections == expected.sections)
                    #expect(mine.digest == expected.digest && mine.digest.hex == result.digest)
                }
            }
            #expect(pulls > 50)
            #expect(resyncs > 0)
            for replica in replicas {
                try await replica.pull(from: source)
                #expect(try await replica.store.snapshot(of: "l").sections == store.snapshot(of: "l").sections)
                #expect(try await replica.store.verify().isValid)
            }
        }
    }

    /// A replica following a server gets each commit from the event stream and applies it without
    /// asking again: the store's identity is read once for the whole follow, not once per commit (a
    /// pull reads it), and the replica equals the source at every version it reports.
    @Test(.timeLimit(.minutes(2)), arguments: ServerAccess.withoutToken)
    func aReplicaFollowsThroughTheEventStream(_ access: ServerAccess) async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(3), to: "l")
        let engine = CountingEngine(store)
        try await ServerHarness.with(engine, access) { server in
            let replica = Replica(store: try Store(path: directory.file("r.liststore")), list: "l")
            let source = try server.source()
            let follow = Task { try await replica.follow(from: source) { _ in } }
            defer { follow.cancel() }
            /// Waits until the replica is at `version`.
            func replicaReaches(_ version: Int) async throws {
                try await waitUntil("the replica reaches version \(version)") { try await replica.position()?.version == version }
            }
            try await replicaReaches(1)
            // The follow's feed has started once its event stream waits at the head.
            try await waitUntil("the follow's event stream waits at the head") { server.server.waitingCount == 1 }
            // The server reads the identity too, once a second while streams are open: not counted.
            let state = server.server.state
            let before = engine.identityReads - state.watcherIdentityReads
            for k in 2...31 {
                try await store.commit(linearList(3 + k), to: "l")
                try await replicaReaches(k)
                #expect(try await replica.store.snapshot(of: "l").sections == store.snapshot(of: "l", at: k).sections)
            }
            let reads = engine.identityReads - state.watcherIdentityReads - before
            #expect(reads <= 2, "\(reads) identity reads for 30 commits")
            #expect(try await replica.store.verify().isValid)
        }
    }

    @Test(arguments: ServerAccess.withoutToken)
    func longPollsAndEventStreamsDeliverCommitsAsTheyLand(_ access: ServerAccess) async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(3), to: "l")
        try await ServerHarness.with(store, access) { server in
            let auth = server.authorization
            let source = try server.source()

            // A follower of the changes over HTTP gets the backlog, then each commit once, in order.
            let follower = Task {
                var versions: [Int] = []
                for try await change in source.changes(after: Cursor(store: try await store.identity(), list: "l", version: 0), wait: .seconds(5)) {
                    versions.append(change.entry.version)
                    if versions.count == 4 { break }
                }
                return versions
            }
            // A long poll held until the commit lands (at its timeout the server would answer that
            // nothing came: `true` means the commit woke it).
            let waiting = Task { try await source.waitForCommit(to: "l", after: 1, timeout: .seconds(60)) }
            // Both wait at the server: the follower's event stream and the long poll.
            try await waitUntil("the follower and the long poll wait") { server.server.state.streams.current == 2 }
            for k in 2...4 { try await store.commit(linearList(3 + k), to: "l") }
            #expect(try await waiting.value)
            #expect(try await follower.value == [1, 2, 3, 4])
            // Nothing new: the long poll times out with false.
            #expect(try await source.waitForCommit(to: "l", after: 4, timeout: .seconds(1)) == false)

            // Server-Sent Events from version 2: events 3 and 4 at once, then 5, committed once the
            // client has 4.
            let port = Int(server.url.split(separator: ":").last!)!
            let connection = try RawConnection(port: port)
            connection.send("GET /v1/lists/l/events?since=2 HTTP/1.1\r\nHost: 127.0.0.1\r\n\(auth)\r\n")
            let backlog = try await RawConnection.run { connection.receive(timeout: .seconds(60)) { $0.contains("id: 4\n") } }
            try await store.commit(linearList(9), to: "l")
            let live = try await RawConnection.run { connection.receive(timeout: .seconds(60)) { $0.contains("id: 5\n") } }
            let stream = backlog.text + live.text
            #expect(stream.contains("text/event-stream"))
            let ids = Self.eventIDs(stream)
            #expect(ids == ["id: 3", "id: 4", "id: 5"], "\(stream)")
            #expect(stream.components(separatedBy: "event: commit\ndata: ").count == 4)
            // A reconnecting client resumes after its Last-Event-ID.
            let resumed = try await RawSocket.exchange(
                port: port, "GET /v1/lists/l/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\(auth)Last-Event-ID: 4\r\n\r\n", timeout: .seconds(60)
            ) { $0.contains("id: 5\n") }
            #expect(Self.eventIDs(resumed) == ["id: 5"])
        }
    }

    /// Event streams at the same version share the reads of the journal: 40 streams that follow 5
    /// commits make far fewer reads than the 200 that one read per stream per commit would be, and
    /// every stream gets every commit.
    @Test(arguments: ServerAccess.withoutToken)
    func eventStreamsShareTheirJournalReads(_ access: ServerAccess) async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(3), to: "l")
        let engine = CountingEngine(store)
        // No keep-alive during the test: each would end a wait with a read of its own.
        try await ServerHarness.with(engine, access, .init(port: 0, keepAliveInterval: .seconds(120))) { server in
            let auth = server.authorization
            let (port, streams, commits) = (server.port, 40, 5)
            let followers = (0..<streams).map { _ in
                Task {
                    try await RawSocket.exchange(
                        port: port, "GET /v1/lists/l/events?since=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\(auth)\r\n", timeout: .seconds(60)
                    ) { $0.contains("id: \(1 + commits)\n") }
                }
            }
            // Every stream has started (their first pages, empty, are read together) and waits at the
            // head, handed to the fan-out.
            let watching = server.server
            try await LimitTests.waitUntil { watching.waitingCount >= streams }
            #expect(watching.waitingCount == streams, "the streams did not all start within 30 s")
            let before = engine.journalReads
            let state = server.server.state
            for k in 1...commits {
                // Each commit once the last one is written to every stream and they all wait again
                // (after the last, the clients have what they wanted and hang up).
                let written = state.eventBytesWritten
                try await store.commit(linearList(3 + k), to: "l")
                try await waitUntil("commit \(k) is written to the streams and they wait again") {
                    state.eventBytesWritten > written && (k == commits || watching.waitingCount == streams)
                }
            }
            for follower in followers {
                let text = try await follower.value
                #expect(Self.eventIDs(text) == (2...(1 + commits)).map { "id: \($0)" })
            }
            // About one read per commit for all the streams: those that resume after the read
            // share its page while the store's commit generation stays (the file watcher's repeated
            // signals of a commit, over 31 ms, move it, and a stream that resumes after one reads
            // again). Fewer reads than streams, where one per stream per commit would be 200.
            let reads = engine.journalReads - before
            #expect(reads < streams, "\(reads) journal reads for \(streams) streams and \(commits) commits")
        }
    }

    /// `GET /health` answers without the token a server asks of every other request: 200 while the
    /// store answers within a second, 503 `storeUnavailable` when it does not.
    @Test func healthAnswersLoadBalancersWithoutTheToken() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(3), to: "l")
        let engine = CountingEngine(store)
        try await ServerHarness.with(engine, .init(port: 0, token: "s3cret")) { server in
            let host = "Host: 127.0.0.1:\(server.port)\r\n"
            // (A store slower than a second, as on a machine this loaded, is not healthy: asked again.)
            var healthy = try await RawAnswer.exchange(port: server.port, "GET /health HTTP/1.1\r\n" + host)
            try await waitUntil("the health check answers 200") {
                healthy = try await RawAnswer.exchange(port: server.port, "GET /health HTTP/1.1\r\n" + host)
                return healthy.status == 200
            }
            #expect(healthy.body == #"{"schemaVersion":1,"status":"ok"}"#)
            #expect(healthy.headers["content-type"] == "application/json")
            #expect(try await RawAnswer.exchange(port: server.port, "GET /v1/lists HTTP/1.1\r\n" + host).status == 401)
            engine.identityFails.withLock { $0 = true }
            let failing = try await RawAnswer.exchange(port: server.port, "GET /health HTTP/1.1\r\n" + host)
            #expect(failing.status == 503)
            #expect(failing.errorCode == "storeUnavailable")
            #expect(!failing.body.contains("database"))
        }
    }

    /// A store error that reaches a client (an unknown list, on every route that names one, and in an
    /// event stream) says "the store", never where the store's file is.
    /// An event stream's `since` is checked even when a reconnecting client's `Last-Event-ID`, which
    /// wins, is sent.
    @Test(arguments: ServerAccess.withoutToken)
    func eventStreamsCheckSinceAlongsideLastEventID(_ access: ServerAccess) async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(3), to: "l")
        try await ServerHarness.with(store, access) { server in
            let auth = server.authorization
            for since in ["abc", "-1", "9223372036854775808"] {
                let answer = try await RawAnswer.exchange(
                    port: server.port, "GET /v1/lists/l/events?since=\(since) HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n\(auth)Last-Event-ID: 0\r\n")
                #expect(answer.status == 400 && answer.errorCode == "invalidArgument", "since=\(since): \(answer.status)")
            }
        }
    }

    @Test(arguments: ServerAccess.withoutToken)
    func errorsDoNotRevealTheStoresPath(_ access: ServerAccess) async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("s.liststore")
        let store = try Store(path: path)
        try await store.commit(linearList(3), to: "l")
        try await ServerHarness.with(store, access) { server in
            let auth = server.authorization
            for route in ["/v1/lists/nope", "/v1/lists/nope/snapshot", "/v1/lists/nope/journal", "/v1/lists/nope/events"] {
                let answer = try await RawAnswer.exchange(port: server.port, "GET \(route) HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n\(auth)")
                #expect(answer.status == 404, "\(route)")
                #expect(answer.errorCode == "listNotFound", "\(route)")
                #expect(!answer.body.contains(path) && !answer.body.contains(directory.path), "\(route): \(answer.body)")
                #expect(answer.body.contains("the store"), "\(route): \(answer.body)")
            }
        }
    }

    /// Lists named `.` and `..` (dot segments, which URLs resolve away) and names made of dots and
    /// slashes are reached like any other: the client encodes their dots.
    @Test func listsNamedWithDotsAreReachedOverHTTP() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        let names = [".", "..", "...", "a/..", "../b", "./.", "a/./b"]
        for (k, name) in names.enumerated() { try await store.commit(linearList(2 + k), to: name) }
        try await ServerHarness.with(store) { server in
            let source = try server.source()
            for (k, name) in names.enumerated() {
                #expect(try await source.summary(of: name).name == name, "\(name)")
                let replica = Replica(store: try Store(path: directory.file("r\(k).liststore")), list: name)
                #expect(try await replica.pull(from: source).version == 1, "\(name)")
                #expect(try await replica.store.snapshot(of: name).sections == linearList(2 + k), "\(name)")
            }
        }
    }

    /// A name no list can have (a control character, U+0000 among them) answers 400
    /// `invalidListName` on every route that names a list, on every engine, as the OpenAPI document
    /// says: not 404, and not PostgreSQL's refusal of U+0000 as a 500.
    @Test(arguments: EngineKind.available)
    func namesNoListCanHaveAre400OnEveryRoute(_ engine: EngineKind) async throws {
        try await engine.withStore { stores in
            try await stores[0].commit(linearList(3), to: "l", expectedVersion: nil, author: nil, message: nil)
            try await ServerHarness.with(stores[0]) { server in
                let auth = server.authorization
                let commit = String(decoding: ListSnapshot(list: "x", version: 0, digest: ListDigest.of(linearList(2)), sections: linearList(2)).documentJSON, as: UTF8.self)
                let push = #"{"client":"c1","seq":1,"intents":[]}"#
                for name in ["a%00b", "%00", "a%01b", "%7F", "%1B%5B31m"] {
                    let routes: [(method: String, path: String, body: String?)] = [
                        ("GET", "/v1/lists/\(name)", nil), ("GET", "/v1/lists/\(name)/snapshot", nil),
                        ("GET", "/v1/lists/\(name)/journal", nil), ("GET", "/v1/lists/\(name)/diff?from=0", nil),
                        ("GET", "/v1/lists/\(name)/events", nil), ("GET", "/v1/lists/\(name)/pushes/c1", nil),
                        ("POST", "/v1/lists/\(name)/commits", commit), ("POST", "/v1/lists/\(name)/pushes", push),
                        ("PUT", "/v1/lists/\(name)/consumers/c", #"{"version":0}"#),
                    ]
                    for route in routes {
                        let contentType = route.body == nil ? "" : "Content-Type: application/json\r\nContent-Length: \(route.body!.utf8.count)\r\n"
                        let answer = try await RawAnswer.exchange(
                            port: server.port, "\(route.method) \(route.path) HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n\(auth)\(contentType)",
                            body: route.body ?? "")
                        #expect(answer.status == 400 && answer.errorCode == "invalidListName", "\(engine) \(route.method) \(route.path): \(answer.status) \(answer.body)")
                    }
                }
                #expect(try await stores[0].lists().map(\.name) == ["l"])
            }
        }
    }

    /// A commit that refers to a blob (an attachment) its list does not have is answered 409
    /// `missingBlob`, as the OpenAPI document says, and changes nothing; once the list has the blob,
    /// the same commit lands.
    @Test(arguments: EngineKind.available)
    func aCommitReferringToABlobTheListLacksIs409(_ engine: EngineKind) async throws {
        try await engine.withStore { stores in
            try await stores[0].commit(linearList(1), to: "l", expectedVersion: nil, author: nil, message: nil)
            try await ServerHarness.with(stores[0]) { server in
                let bytes = Array("a photo".utf8)
                let photo = BlobReference(of: bytes)
                let sections = [ListSection(model: ListItem("s"), elements: [ListItem(id: "p", json: ["photo": photo.json])])]
                let body = String(decoding: ListSnapshot(list: "l", version: 0, digest: ListDigest.of(sections), sections: sections).documentJSON, as: UTF8.self)
                let head = "POST /v1/lists/l/commits HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n\(server.authorization)"
                    + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n"
                let refused = try await RawAnswer.exchange(port: server.port, head, body: body)
                #expect(refused.status == 409 && refused.errorCode == "missingBlob" && refused.body.contains(photo.id), "\(refused.status) \(refused.body)")
                #expect(try await stores[0].summary(of: "l").version == 1)
                try await stores[0].storeBlob(photo, to: "l", bytes: bytes)
                let landed = try await RawAnswer.exchange(port: server.port, head, body: body)
                #expect(landed.status == 200 || landed.status == 201, "\(landed.status) \(landed.body)")
                #expect(try await stores[0].summary(of: "l").version == 2)
            }
        }
    }

    /// Commits that land while the fan-out writes an earlier one to the streams reach them at once,
    /// not at the next poll of the heads (made an hour here, and the server hears of each commit once,
    /// as from PostgreSQL, so that only the commits' signals count).
    @Test(.timeLimit(.minutes(3))) func commitsDuringADeliveryAreNotLeftForThePoll() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(3), to: "l")
        let engine = CountingEngine(store, signalsOwnCommits: true)
        let server = try await ServerHarness.start(
            engine, .init(port: 0, pollInterval: .seconds(3600), keepAliveInterval: .seconds(3600)))
        let (port, streams, commits) = (server.port, 100, 10)
        // No poll of the heads comes within the test's time: every event the streams get, a
        // commit's signal brought.
        let followers = (0..<streams).map { _ in
            Task {
                try await RawSocket.exchange(
                    port: port, "GET /v1/lists/l/events?since=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", timeout: .seconds(150)
                ) { $0.contains("id: \(1 + commits)\n") }
            }
        }
        let watching = server.server
        try await LimitTests.waitUntil(within: .seconds(120)) { watching.waitingCount >= streams }
        #expect(watching.waitingCount == streams, "the streams did not all start within 120 s")
        // Back to back: most land while the streams are being written to.
        for k in 1...commits { _ = try await engine.commit(linearList(3 + k), to: "l", expectedVersion: nil, author: nil, message: nil) }
        for follower in followers {
            let text = try await follower.value
            #expect(Self.eventIDs(text) == (2...(1 + commits)).map { "id: \($0)" })
        }
        await server.stop()
    }

    /// The fan-out frames each page as an HTTP/1.1 chunk itself: the stream decodes, chunk by
    /// chunk, into the events of the commits, as one a client's HTTP library reads.
    @Test(arguments: ServerAccess.withoutToken)
    func eventStreamsAtTheHeadAreWellFramedChunks(_ access: ServerAccess) async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(3), to: "l")
        try await ServerHarness.with(store, access, .init(port: 0, keepAliveInterval: .seconds(120))) { server in
            let auth = server.authorization
            let port = server.port
            let stream = Task {
                try await RawSocket.exchange(
                    port: port, "GET /v1/lists/l/events?since=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\(auth)\r\n", timeout: .seconds(60)
                ) { $0.contains("id: 4\n") && $0.hasSuffix("\n\n\r\n") }
            }
            let watching = server.server
            try await LimitTests.waitUntil { watching.waitingCount >= 1 }
            #expect(watching.waitingCount == 1)
            let state = server.server.state
            for k in 1...3 {
                // Each commit once the last one is written and the stream waits again (after the
                // last, the client has what it wanted and hangs up).
                let written = state.eventBytesWritten
                try await store.commit(linearList(3 + k), to: "l")
                try await waitUntil("commit \(k) is written and the stream waits again") {
                    state.eventBytesWritten > written && (k == 3 || watching.waitingCount == 1)
                }
            }
            let text = try await stream.value
            let head = try #require(text.range(of: "\r\n\r\n"))
            #expect(text[..<head.lowerBound].lowercased().contains("transfer-encoding: chunked"))
            // Decode the chunks: a hexadecimal length, CRLF, that many bytes, CRLF.
            var body = Array(text[head.upperBound...].utf8)[...]
            var decoded = [UInt8]()
            var chunks = [String]()
            while !body.isEmpty {
                let line = try #require(body.firstIndex(of: UInt8(ascii: "\r")))
                let size = try #require(Int(String(decoding: body[..<line], as: UTF8.self), radix: 16))
                let start = line + 2
                try #require(body.endIndex >= start + size + 2)
                decoded += body[start..<(start + size)]
                chunks.append(String(decoding: body[start..<(start + size)], as: UTF8.self))
                #expect(Array(body[(start + size)..<(start + size + 2)]) == Array("\r\n".utf8))
                body = body[(start + size + 2)...]
            }
            // One chunk per page of events: one per commit, each committed once the last was written.
            #expect(chunks.count == 3)
            #expect(chunks.allSatisfy { $0.hasPrefix("id: ") && $0.hasSuffix("\n\n") })
            let events = String(decoding: decoded, as: UTF8.self)
            #expect(Self.eventIDs(events) == ["id: 2", "id: 3", "id: 4"])
            #expect(events.components(separatedBy: "\n\n").filter { !$0.isEmpty }.allSatisfy { $0.contains("event: commit\ndata: {") })
        }
    }

    @Test(.timeLimit(.minutes(2))) func longPollsEachEndAtTheirOwnWait() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(3), to: "l")
        let server = try await ServerHarness.start(store)
        // Polls of 60, 1 and 3 seconds at once (and 20 more of 1 second): each short one answers an
        // empty page when its own time is up, not before (timed from its request to its answer, on
        // its own thread), and not with the longest, which is still waiting when they have all
        // ended (it is closed then rather than waited out).
        let waits = [1, 3] + Array(repeating: 1, count: 20)
        let port = server.port
        let longest = try RawConnection(port: port)
        _ = longest.send("GET /v1/lists/l/journal?since=1&wait=60 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        try await LimitTests.waitUntil { server.server.state.streams.current == 1 }
        let ended = try await withThrowingTaskGroup(of: (Int, Duration, RawAnswer?).self) { group in
            for wait in waits {
                group.addTask {
                    try await RawConnection.run {
                        let connection = try RawConnection(port: port)
                        let clock = ContinuousClock()
                        let start = clock.now
                        _ = connection.send(
                            "GET /v1/lists/l/journal?since=1&wait=\(wait) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                        let text = connection.receive(timeout: .seconds(90)).text
                        return (wait, clock.now - start, RawAnswer(text))
                    }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(ended.count == waits.count)
        for (wait, elapsed, answer) in ended {
            #expect(answer?.status == 200 && answer?.body.contains(#""commits":[]"#) == true, "\(answer.map { "\($0.status) \($0.body)" } ?? "no answer")")
            #expect(elapsed >= .seconds(wait) - .milliseconds(50), "a \(wait) s poll ended after \(elapsed)")
        }
        #expect(server.server.state.streams.current == 1, "the 60 s poll ended with the short ones")
        #expect(longest.receive(timeout: .milliseconds(1)).text.isEmpty)

        // And a commit wakes a poll: it waits up to 60 s, and answers with the commit.
        let woken = Task { try await RawAnswer.exchange(port: port, "GET /v1/lists/l/journal?since=1&wait=60 HTTP/1.1\r\nHost: 127.0.0.1\r\n") }
        try await LimitTests.waitUntil { server.server.state.streams.current == 2 }
        try await store.commit(linearList(4), to: "l")
        let answer = try await woken.value
        #expect(answer.body.contains(#""version":2"#))
        withExtendedLifetime(longest) {}
        await server.stop()
    }

    /// The `id:` lines of an event stream as it came over the wire (chunked, CR LF between chunks).
    static func eventIDs(_ stream: String) -> [String] {
        stream.unicodeScalars.split(separator: "\n").map { String(String.UnicodeScalarView($0)) }.filter { $0.hasPrefix("id: ") }
    }

    @Test(arguments: ServerAccess.withoutToken)
    func aServerThatBreaksOffLeavesTheReplicaAtItsLastCompleteVersion(_ access: ServerAccess) async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        for k in 1...3 { try await store.commit(linearList(3 + k), to: "l") }
        try await ServerHarness.with(store, access) { server in
            let replica = Replica(store: try Store(path: directory.file("r.liststore")), list: "l")
            #expect(try await replica.pull(from: try server.source()).version == 3)
            for k in 4...5 { try await store.commit(linearList(3 + k), to: "l") }

            let breaking = try BreakingServer()
            await #expect {
                try await replica.pull(from: try HTTPSource("http://127.0.0.1:\(breaking.port)"))
            } throws: { error in
                if case .transport = error as? SyncError { return true }
                return false
            }
            // No server at all.
            await #expect(throws: SyncError.self) {
                try await replica.pull(from: try HTTPSource("http://127.0.0.1:1", requestTimeout: .seconds(2)))
            }
            #expect(try await replica.position()?.version == 3)
            #expect(try await replica.store.verify().isValid)
            // The next pull resumes.
            let result = try await replica.pull(from: try server.source())
            #expect(result.version == 5 && result.applied == 2 && !result.resynced)
            #expect(try await replica.store.snapshot(of: "l").sections == store.snapshot(of: "l").sections)
        }
    }
}
