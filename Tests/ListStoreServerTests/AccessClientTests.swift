import Foundation
import ListDiff
import ListJSON
import ListStore
import ListStorePostgresTestSupport
import ListStoreServer
import ListStoreTestSupport
import ListSync
import Testing

/// Clients of a server with users: `HTTPSource` asks its token provider for each request and once
/// more after a 401; a replica syncs as its user, and a follower whose token expires comes back
/// with a fresh one and loses nothing.
@Suite struct AccessClientTests {
    static let tokens = AccessServerTests.tokens

    /// Counts the provider's calls and the refreshes among them. A refresh (asked after a 401)
    /// gets a token of 30 seconds at least: a token of a few seconds can expire on its way to a
    /// loaded server, and its refresh must not.
    final class Provider: Sendable {
        let calls = _Locked((all: 0, refreshes: 0))
        let lifetime: Int
        let firstIsExpired: Bool

        init(lifetime: Int = 3600, firstIsExpired: Bool = false) {
            self.lifetime = lifetime
            self.firstIsExpired = firstIsExpired
        }

        func token(refresh: Bool) -> String {
            let count = calls.withLock { calls in
                calls.all += 1
                if refresh { calls.refreshes += 1 }
                return calls.all
            }
            let expiry = Int(Date().timeIntervalSince1970) + (firstIsExpired && count == 1 ? -3600 : refresh ? max(lifetime, 30) : lifetime)
            return AccessClientTests.tokens.token(["sub": "ana", "exp": .number(JSONNumber(expiry))])
        }
    }

    /// A replica following its source in the background, counting what it applied and how often
    /// its stream came back (a token's stream ends when the token expires).
    final class Follower: Sendable {
        let applied = _Locked<[Int]>([])
        let reconnections = _Locked(0)
        private let task: Task<Void, any Error>

        init(_ replica: Replica<Store>, from source: HTTPSource) {
            let (applied, reconnections) = (applied, reconnections)
            task = Task {
                try await replica.follow(
                    from: source, retrying: RetryPolicy(initialDelay: .milliseconds(50), maximumDelay: .milliseconds(200)),
                    onEvent: { event in if case .reconnected = event { reconnections.withLock { $0 += 1 } } }
                ) { result in
                    // The first pull is reported even when it applies nothing (it may come before the
                    // test's first commit): only versions applied are counted.
                    if result.applied > 0 { applied.withLock { $0.append(result.version) } }
                }
            }
        }

        /// Commits `linearList(count)` to `list` of `store`, then waits until the follower has
        /// applied it and has come back once more with a fresh token.
        func commitAndFollow(_ count: Int, to list: String, of store: Store) async throws {
            let before = reconnections.withLock { $0 }
            try await store.commit(linearList(count), to: list)
            let version = try await store.summary(of: list).version
            try await LimitTests.waitUntil(within: .seconds(60)) { self.applied.withLock { $0.last == version } }
            try await LimitTests.waitUntil(within: .seconds(60)) { self.reconnections.withLock { $0 } > before }
        }

        /// Stops following; the versions applied.
        func stop() async -> [Int] {
            task.cancel()
            _ = try? await task.value
            return applied.withLock { $0 }
        }
    }

    @Test func aRefusedTokenIsAskedForAgainOnce() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(3), to: "users/ana/inbox")
        try await ServerHarness.with(store, try await AccessServerTests.configuration()) { server in
            let provider = Provider(firstIsExpired: true)
            let source = try HTTPSource(url: URL(string: server.url)!, tokenProvider: { provider.token(refresh: $0) })
            #expect(try await source.summary(of: "users/ana/inbox").version == 1)
            #expect(provider.calls.withLock { $0 } == (2, 1))
            // A provider whose every token is refused: the request fails after one refresh.
            let refused = try HTTPSource(url: URL(string: server.url)!, tokenProvider: { _ in "not-a-token" })
            await #expect(throws: SyncError.self) { try await refused.summary(of: "users/ana/inbox") }
        }
    }

    /// Two users' replicas of a team list, edited offline, sync through a server with access on,
    /// on every engine: both end equal to the source, each change recorded as its user's.
    @Test(arguments: EngineKind.available)
    func teamReplicasSyncAsTheirUsersOnEveryEngine(_ engine: EngineKind) async throws {
        let directory = try TemporaryDirectory()
        let rules: JSONValue = [["lists": "teams/{teams}/**", "grant": "write"]]
        let access = try await AccessConfiguration(json: Self.tokens.accessFile(rules: rules))
        try await engine.withStore { stores in
            let store = stores[0]
            let list = "teams/red/plan"
            try await store.commit(linearList(4), to: list, expectedVersion: nil, author: "ops", message: nil)
            let configuration = JournalServer.Configuration(port: 0, token: "service", keepAliveInterval: .seconds(1), access: access)
            try await ServerHarness.with(store, configuration) { server in
                func source(_ user: String) throws -> HTTPSource {
                    try HTTPSource(url: URL(string: server.url)!, token: Self.tokens.token(["sub": .string(user), "teams": ["red"]]))
                }
                let phone = Replica(store: try Store(path: directory.file("ana.liststore")), list: list)
                let laptop = Replica(store: try Store(path: directory.file("bob.liststore")), list: list)
                _ = try await phone.pull(from: try source("ana"))
                _ = try await laptop.pull(from: try source("bob"))
                try await phone.store.commit(
                    [ListSection(model: ListItem("s"), elements: [ListItem("e3", 3), ListItem("e0", 0), ListItem("p", 9), ListItem("e1", 1), ListItem("e2", 2)])],
                    to: list)
                try await laptop.store.commit(
                    [ListSection(model: ListItem("s"), elements: [ListItem("e0", 0), ListItem("e2", 2), ListItem("e3", 3), ListItem("q", 8)])], to: list)
                _ = try await phone.sync(with: try source("ana"))
                _ = try await laptop.sync(with: try source("bob"))
                _ = try await phone.sync(with: try source("ana"))
                let head = try await store.snapshot(of: list, at: nil)
                #expect(head.sections.flatMap { $0.elements.map(\.id) } == ["e3", "q", "e0", "p", "e2"])
                for replica in [phone, laptop] {
                    #expect(try await replica.store.snapshot(of: list).sections == head.sections)
                    #expect(try await replica.status()?.pending == 0)
                }
                let authors = try await store.journal(of: list, after: 0, limit: 10, maxBytes: .max).entries.map(\.author)
                #expect(authors == ["ops", "ana", "bob"], "\(engine)")
                #expect(try await store.verify(list: nil, progress: nil).isValid)
            }
        }
    }

    /// A user who may read a list but not write it pulls it, and its push is refused as
    /// `SyncError.unauthorized` (the command line's 77), keeping the local change.
    @Test func aPushWithoutTheWriteGrantIsRefusedAsUnauthorized() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(3), to: "teams/red/plan")
        try await ServerHarness.with(store, try await AccessServerTests.configuration()) { server in
            let reader = Self.tokens.token(["sub": "bob", "teams": ["red"]])
            let source = try HTTPSource(url: URL(string: server.url)!, token: reader)
            let replica = Replica(store: try Store(path: directory.file("r.liststore")), list: "teams/red/plan")
            _ = try await replica.pull(from: source)
            try await replica.store.edit("teams/red/plan") { try $0.reloadElement(ListItem("e0", 9)) }
            do {
                _ = try await replica.sync(with: source)
                Issue.record("the push was accepted")
            } catch let error as SyncError {
                guard case .unauthorized(let message) = error else { throw error }
                #expect(message.contains("403"), "\(message)")
            }
            #expect(try await replica.status()?.pending == 1)
            #expect(try await store.summary(of: "teams/red/plan").version == 1)
        }
    }

    /// A replica syncs as its user (the journal shows who wrote what); its follower's stream ends
    /// when each token expires, and it reconnects with a fresh one from where it was.
    @Test(.timeLimit(.minutes(3))) func aReplicaSyncsAndFollowsAsItsUser() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(3), to: "users/ana/inbox")
        let access = try await AccessConfiguration(json: Self.tokens.accessFile(rules: AccessServerTests.rules, extra: [("leeway", 0)]))
        let configuration = JournalServer.Configuration(port: 0, token: "service", keepAliveInterval: .seconds(60), access: access)
        try await ServerHarness.with(store, configuration) { server in
            let provider = Provider(lifetime: 2)
            let source = try HTTPSource(url: URL(string: server.url)!, tokenProvider: { provider.token(refresh: $0) })
            let replica = Replica(store: try Store(path: directory.file("r.liststore")), list: "users/ana/inbox")
            _ = try await replica.pull(from: source)
            try await replica.store.edit("users/ana/inbox", author: "claimed") { try $0.reloadElement(ListItem("e0", 9)) }
            let synced = try await replica.sync(with: source)
            #expect(try await replica.status()?.pending == 0, "\(synced)")
            #expect(try await store.journal(of: "users/ana/inbox", after: 1).entries.map(\.author) == ["ana"])

            // Follow across several token lifetimes: every commit arrives, each once.
            let follower = Follower(replica, from: source)
            // Each commit once the stream of the last token has ended and the follower is back.
            for count in 4...6 { try await follower.commitAndFollow(count, to: "users/ana/inbox", of: store) }
            let applied = await follower.stop()
            let (mine, theirs) = (try await replica.store.snapshot(of: "users/ana/inbox"), try await store.snapshot(of: "users/ana/inbox"))
            #expect(mine.sections == theirs.sections, "\(mine.version) \(mine.sections) vs \(theirs.version) \(theirs.sections); \(applied)")
            #expect(applied == applied.sorted() && Set(applied).count == applied.count)
            #expect(provider.calls.withLock { $0.all } > 3)
        }
    }

    /// Keys rotated as "Running a server" says, while a replica follows with tokens of a few
    /// seconds: the new key is added, the provider signs with it, the old key is removed. Tokens of
    /// the old key are accepted until it is removed and refused after; the follower reconnects with
    /// each new token across both reloads, and every commit arrives once.
    @Test(.timeLimit(.minutes(3))) func keysRotateWhileAReplicaFollows() async throws {
        let directory = try TemporaryDirectory()
        let list = "users/ana/inbox"
        let store = try Store(path: directory.file("s.liststore"))
        try await store.commit(linearList(3), to: list)
        let secrets = ["k-old": Array("the old secret, thirty-two bytes long".utf8), "k-new": Array("the new secret, thirty-two bytes long".utf8)]
        func access(_ kids: [String]) async throws -> AccessConfiguration {
            let keys: [JSONValue] = kids.map { ["kty": "oct", "kid": .string($0), "alg": "HS256", "k": .string(TestTokens.base64URL(secrets[$0]!))] }
            let file: JSONValue = ["keys": ["keys": .array(keys)], "rules": [["lists": "users/{sub}/**", "grant": "write"]], "leeway": 0]
            return try await AccessConfiguration(json: file.serializedBytes())
        }
        @Sendable func token(_ kid: String, lifetime: Int) -> String {
            Self.tokens.token(["sub": "ana", "exp": .number(JSONNumber(Int(Date().timeIntervalSince1970) + lifetime))], by: .hmac(kid: kid, secret: secrets[kid]!))
        }
        let configuration = JournalServer.Configuration(port: 0, token: "service", keepAliveInterval: .seconds(60), access: try await access(["k-old"]))
        try await ServerHarness.with(store, configuration) { server in
            let signing = _Locked("k-old")
            // Two-second tokens; a refresh after a 401 (one that expired on its way) gets 30 seconds.
            let source = try HTTPSource(
                url: URL(string: server.url)!, tokenProvider: { refresh in token(signing.withLock { $0 }, lifetime: refresh ? 30 : 2) })
            let replica = Replica(store: try Store(path: directory.file("r.liststore")), list: list)
            _ = try await replica.pull(from: source)
            let follower = Follower(replica, from: source)
            func status(_ kid: String) async throws -> Int { try await server.request("/v1/lists/users%2Fana%2Finbox", token: token(kid, lifetime: 60)).status }

            try await follower.commitAndFollow(4, to: list, of: store)
            #expect(try await status("k-new") == 401)
            // 1. The new key is added; the provider signs with it. Both keys' tokens are accepted.
            server.server.replaceAccess(try await access(["k-old", "k-new"]))
            signing.withLock { $0 = "k-new" }
            #expect(try await status("k-old") == 200)
            #expect(try await status("k-new") == 200)
            try await follower.commitAndFollow(5, to: list, of: store)
            // 2. The old key is removed: its tokens are refused; the follower goes on.
            server.server.replaceAccess(try await access(["k-new"]))
            #expect(try await status("k-old") == 401)
            #expect(try await status("k-new") == 200)
            try await follower.commitAndFollow(6, to: list, of: store)
            try await follower.commitAndFollow(7, to: list, of: store)

            let versions = await follower.stop()
            #expect(try await replica.store.snapshot(of: list).sections == store.snapshot(of: list).sections)
            #expect(versions == Array(2...5), "\(versions)")
        }
    }
}
